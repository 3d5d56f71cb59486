"""The toy device's ember backend plugin (entry point group ``ember.backends``)."""
from ember.backends import DeviceSpec, hookimpl

DEVICE = "toy"


@hookimpl
def ember_devices():
    return [DeviceSpec(DEVICE, "test device: serial C loops over host memory")]


@hookimpl
def ember_device_module(device_type):
    if device_type == DEVICE:
        from ember_toy import runtime
        return runtime
    return None


@hookimpl
def ember_kernel_table(device_type):
    if device_type == DEVICE:
        from ember_toy import _kernels  # the compiled kernels load on first use only
        return _kernels.kernel_table()
    return None
