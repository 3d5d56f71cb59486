"""Devices made of part of another plugin's kernel table, for tests of the host fallback and
of the conformance suite: ``partial_device("memcore", MEMORY_CORE)`` registers a device
type whose plugin implements only the memory core, reusing the CPU plugin's kernels."""
import types

MEMORY_CORE = ("alloc", "free", "copy", "fill", "to_host", "from_host")


def partial_device(name, keep, *, unimplemented=(), version=None, base=None, count=1):
    """Register device type ``name`` (once) whose kernel table is ``base``'s (a kernel-table
    capsule; the CPU plugin's by default) with only the entries in ``keep`` set;
    ``unimplemented`` is what its plugin declares, ``version=(major, minor, size)`` the ABI
    header its table claims, ``count`` how many device indices its runtime reports (a host
    table's kernels serve every index alike).  Returns ``name``."""
    from ember.backends import DeviceSpec, hookimpl, kernel_table, register
    from ember.core import _device, _fallback

    if _device._backend_for_type(name) is not None:
        return name
    if base is None:
        base = kernel_table("cpu")
    runtime = types.ModuleType(f"ember.{name}", f"{name}: a partial test device")
    runtime.is_available = lambda: True
    current = [0]

    def set_device(device):              # an int, "name:1" or an ember.device
        if isinstance(device, str):
            device = _device.device(device)
        current[0] = getattr(device, "index", device) or 0

    runtime.device_count = lambda: count
    runtime.current_device = lambda: current[0]
    runtime.set_device = set_device
    runtime.synchronize = lambda device=None: None
    plugin = types.ModuleType(f"partial_{name}")

    @hookimpl
    def ember_devices():
        return [DeviceSpec(name, f"part of another plugin's kernels: {', '.join(keep)}")]

    @hookimpl
    def ember_device_module(device_type):
        return runtime if device_type == name else None

    @hookimpl
    def ember_kernel_table(device_type):
        if device_type != name:
            return None
        return _fallback.table_subset(base, keep, version=version)

    @hookimpl
    def ember_unimplemented(device_type):
        return list(unimplemented) if device_type == name else None

    plugin.ember_devices, plugin.ember_device_module = ember_devices, ember_device_module
    plugin.ember_kernel_table, plugin.ember_unimplemented = ember_kernel_table, ember_unimplemented
    register(plugin, name=f"partial-{name}")
    return name
