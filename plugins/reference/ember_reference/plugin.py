"""The reference device's ember backend plugin: a module of hookimpls named by the entry
point ``reference = "ember_reference.plugin"`` in the group ``ember.backends``.

Loading it registers the device type and its runtime module and nothing more; the compiled
kernels are imported the first time a tensor is made on the device."""
from ember.backends import DeviceSpec, hookimpl

DEVICE = "reference"


@hookimpl
def ember_devices():
    # a device for conformance tests: ember.accelerator does not offer it
    return [DeviceSpec(DEVICE, "reference device: plain C kernels over a host arena the "
                               "host cannot read directly", accelerator=False)]


@hookimpl
def ember_device_module(device_type):
    if device_type == DEVICE:
        from ember_reference import runtime
        return runtime
    return None


@hookimpl
def ember_kernel_table(device_type):
    if device_type == DEVICE:
        from ember_reference import _kernels  # the compiled kernels load on first use only
        return _kernels.kernel_table()
    return None


@hookimpl
def ember_build_info():
    return "reference device: serial C kernels, every entry of the kernel ABI"
