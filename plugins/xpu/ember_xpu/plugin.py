"""Hookimpls of the Intel GPUs (XPU) stub: the device type exists, its kernels do not yet."""
from ember.backends import stub_hookimpls

ember_devices, ember_device_module, ember_kernel_table = stub_hookimpls("xpu", "Intel GPUs (XPU)")
