"""Hookimpls of the Apple Metal (MPS) stub: the device type exists, its kernels do not yet."""
from ember.backends import stub_hookimpls

ember_devices, ember_device_module, ember_kernel_table = stub_hookimpls("mps", "Apple Metal (MPS)")
