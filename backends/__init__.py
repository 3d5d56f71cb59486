"""The plugin system: discovery, loading and the registry of device backends.

``import ember`` loads every plugin declared in the entry-point group ``ember.backends``
unless ``EMBER_DEVICE_BACKEND_AUTOLOAD=0``; ``load(name)`` loads one by hand.  Loading a
plugin registers its device types and runtime modules; kernels load on first use.
"""
import importlib
import os

from ember.backends.hookspecs import RUNTIME_API, DeviceModule, DeviceSpec, hookimpl

__all__ = ["DeviceModule", "DeviceSpec", "hookimpl", "load", "autoload", "plugins",
           "register", "set_num_threads", "get_num_threads", "build_info", "AUTOLOAD_ENV",
           "GROUP", "abi_ops", "unimplemented", "is_declared_unimplemented", "host_fallbacks",
           "reset_host_fallbacks", "coverage", "default_generator", "OutOfMemoryError",
           "IndexOutOfBoundsError", "device", "kernel_codegen", "kernel_table"]

GROUP = "ember.backends"
AUTOLOAD_ENV = "EMBER_DEVICE_BACKEND_AUTOLOAD"

_pm = None
_loaded = {}          # plugin name -> record dict (dist, version, devices, module)


class PluginLoadError(RuntimeError):
    """A plugin failed to load; the message names it and the opt-out variable."""


def _manager():
    global _pm
    if _pm is None:
        import pluggy
        from ember.backends import hookspecs
        _pm = pluggy.PluginManager("ember")
        _pm.add_hookspecs(hookspecs)
    return _pm


def _call(plugin, hook, **kwargs):
    """Call one plugin's implementation of ``hook`` (None if it has none)."""
    for impl in getattr(_manager().hook, hook).get_hookimpls():
        if impl.plugin is plugin:
            return impl.function(*[kwargs[a] for a in impl.argnames])
    return None


def register(module, name=None, dist=None, version=""):
    """Register a module of hookimpls as a plugin; returns the device types it brings."""
    from ember.core import _device

    name = name or module.__name__
    if name in _loaded:
        return _loaded[name]["devices"]
    pm = _manager()
    pm.register(module, name=name)
    from ember.core import determinism
    determinism._forget_declarations()
    try:
        # validate every device type first, so a rejected plugin changes nothing
        specs = _call(module, "ember_devices") or []
        runtimes = {}
        for spec in specs:
            if not isinstance(spec, DeviceSpec):
                raise TypeError(f"plugin {name!r}: ember_devices() must return DeviceSpec "
                                f"objects, got {spec!r}")
            _device.check_backend(spec.type, name)
            runtime = _call(module, "ember_device_module", device_type=spec.type)
            if runtime is not None:
                missing = [m for m in RUNTIME_API if not callable(getattr(runtime, m, None))]
                if missing:
                    raise TypeError(f"plugin {name!r}: runtime module "
                                    f"{getattr(runtime, '__name__', runtime)!r} for device type "
                                    f"'{spec.type}' lacks {', '.join(missing)}")
            runtimes[spec.type] = runtime
    except BaseException:
        pm.unregister(module)
        raise
    from ember.backends import _runtimes
    for spec in specs:
        if runtimes[spec.type] is not None:
            _runtimes.register(spec.type, runtimes[spec.type], replace=True)
        # every device type but the host's carries an index ("cuda" means the current one)
        current = getattr(runtimes[spec.type], "current_device", None) \
            if spec.type != "cpu" else None
        _device.register_backend(spec.type, _table_loader(module, spec.type), name,
                                 dist or name, current)
    types = [spec.type for spec in specs]
    _loaded[name] = {"dist": dist or name, "version": version, "devices": types,
                     "module": module, "descriptions": {s.type: s.description for s in specs},
                     "accelerators": {s.type: s.accelerator for s in specs}}
    return types


def is_accelerator(device_type):
    """Whether the plugin of ``device_type`` offers it as an accelerator (DeviceSpec)."""
    for record in _loaded.values():
        if device_type in record["devices"]:
            return record["accelerators"].get(device_type, True)
    return True


def _table_loader(module, device_type):
    def load_table():
        return _call(module, "ember_kernel_table", device_type=device_type)
    return load_table


def _load_entry_point(ep):
    try:
        module = importlib.import_module(ep.module)
        return register(module, ep.name, ep.dist, ep.version)
    except Exception as e:
        raise PluginLoadError(
            f"ember backend plugin '{ep.name}' from distribution '{ep.dist}' failed to load: "
            f"{type(e).__name__}: {e}. Set {AUTOLOAD_ENV}=0 to start ember without "
            f"autoloading plugins.") from e


_failed = {}          # plugin name -> error message (autoload with strict=False)


def autoload(strict=True):
    """Load every plugin of the entry-point group ``ember.backends``.  With ``strict``
    False a failing plugin is recorded (see ``plugins()``) instead of raising."""
    from ember.backends._discovery import entry_points
    for ep in entry_points(GROUP):
        if ep.name not in _loaded:
            try:
                _load_entry_point(ep)
            except PluginLoadError as e:
                if strict:
                    raise
                _failed[ep.name] = str(e)


def load(name):
    """Load the plugin whose entry point (in ``ember.backends``) is named ``name``."""
    if name in _loaded:
        return _loaded[name]["devices"]
    from ember.backends._discovery import entry_points
    for ep in entry_points(GROUP):
        if ep.name == name:
            return _load_entry_point(ep)
    known = sorted(ep.name for ep in entry_points(GROUP))
    raise RuntimeError(f"no ember backend plugin named '{name}' is installed "
                       f"(installed: {', '.join(known) or 'none'})")


def plugins():
    """Discovered plugins: one dict each (name, dist, version, loaded, devices, error)."""
    from ember.backends import _runtimes
    from ember.backends._discovery import entry_points
    from ember.core import _device

    rows = []
    for ep in entry_points(GROUP):
        row = {"name": ep.name, "dist": ep.dist, "version": ep.version,
               "loaded": ep.name in _loaded, "devices": [], "error": None}
        if ep.name in _failed:
            row["error"] = _failed[ep.name]
        elif not row["loaded"]:
            try:
                _load_entry_point(ep)
                row["loaded"] = True
            except PluginLoadError as e:
                row["error"] = str(e)
        for t in _loaded.get(ep.name, {}).get("devices", []):
            runtime = _runtimes.runtime(t) if t else None
            available, why = _availability(runtime)
            row["devices"].append({"type": t, "available": available, "why": why,
                                   "description": _loaded[ep.name]["descriptions"].get(t, ""),
                                   "key": _device._backend_for_type(t).key})
        rows.append(row)
    return rows


def _availability(runtime):
    if runtime is None:
        return False, "no runtime module"
    try:
        ok = bool(runtime.is_available())
    except Exception as e:      # report, never crash the listing
        return False, f"{type(e).__name__}: {e}"
    if ok:
        return True, ""
    reason = getattr(runtime, "unavailable_reason", None)
    return False, reason() if callable(reason) else "is_available() returned False"


def set_num_threads(num_threads):
    """Set the threads every plugin's kernels use (OpenMP and BLAS pools)."""
    if not isinstance(num_threads, int) or num_threads < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _manager().hook.ember_set_num_threads(num_threads=num_threads)


def get_num_threads():
    """The threads the CPU plugin's kernels use (1 when no plugin says)."""
    n = _manager().hook.ember_get_num_threads()
    return 1 if n is None else n


def build_info():
    """[(plugin name, line)] from every loaded plugin's ``ember_build_info`` hook."""
    return [(name, line) for name, rec in _loaded.items()
            if (line := _call(rec["module"], "ember_build_info")) is not None]


def nondeterministic_kernels(device_type):
    """The op names whose kernels on ``device_type`` its plugin declares order-dependent
    (the ``ember_nondeterministic_kernels`` hook; none when no plugin says)."""
    names = _manager().hook.ember_nondeterministic_kernels(device_type=device_type)
    return list(names or ())


def kernel_codegen(device_type):
    """The plugin's code generator for ember.compile's fused kernels on ``device_type``
    (the ``ember_kernel_codegen`` hook), or None."""
    return _manager().hook.ember_kernel_codegen(device_type=device_type)


def kernel_table(device_type):
    """The kernel-table capsule ``device_type``'s plugin hands over (its
    ``ember_kernel_table`` hook), e.g. to build a test device from part of it."""
    return _manager().hook.ember_kernel_table(device_type=device_type)


def abi_ops():
    """{family: (op names by op code)} of the kernel ABI, read from ``ember/abi.h``."""
    from ember.backends._abi import abi_ops
    return abi_ops()


def unimplemented(device_type):
    """The patterns ``device_type``'s plugin declares unimplemented (the
    ``ember_unimplemented`` hook): kernel calls such as ``"binary.pow[float16]"`` or
    ``"*[float64]"`` (``*`` and ``?`` are wildcards, brackets literal)."""
    return list(_manager().hook.ember_unimplemented(device_type=device_type) or ())


def is_declared_unimplemented(device_type, key):
    """Whether the kernel call ``key`` (e.g. ``"matmul[int64]"``) matches a pattern
    ``device_type``'s plugin declares unimplemented."""
    from ember.backends._abi import matches
    return any(matches(key, p) for p in unimplemented(device_type))


def host_fallbacks(device_type=None):
    """{kernel call: count} of the calls on ``device_type`` its plugin did not implement,
    which ran on the host through the CPU plugin (all device types: {type: {...}})."""
    from ember.core import _fallback
    return _fallback.host_fallbacks(device_type)


def reset_host_fallbacks():
    """Forget the host-fallback counts."""
    from ember.core import _fallback
    _fallback.reset_host_fallbacks()


def coverage(device_type):
    """What ``device_type``'s plugin implements, for ``python -m ember.backends``: its ABI
    version, the primitive entries it leaves to the host fallback, the optional entries it
    leaves to the core's own path (composites on the device; sort on the host), what it
    declares unimplemented, the elementwise ops the op table's composites run on the device
    for it, and the calls that fell back in this process.  Loads the device's kernels (its
    first use)."""
    from ember.backends._abi import FUSED, HOST_FALLBACK, OPTIONAL
    from ember.core import _device
    backend = _device._backend_for_type(device_type)
    table = backend.kernel_table()
    entries = table.entries()
    ops = abi_ops()
    on_device = sorted({f"{'binary' if b else 'unary'}.{ops['binary' if b else 'unary'][code]}"
                        for b, code, _ in (backend.composites or ())})
    return {"abi": table.abi, "host_fallback": [e for e in HOST_FALLBACK if e not in entries],
            "composite": [e for e in FUSED + OPTIONAL if e not in entries],
            "declared_unimplemented": unimplemented(device_type),
            "table_composites": on_device,
            "fallbacks": host_fallbacks(device_type)}


def _autoload_enabled():
    return os.environ.get(AUTOLOAD_ENV, "1") != "0"


def unavailable_runtime(device_type, reason):
    """A runtime module for a device type that is registered but cannot run here (stub
    plugins, missing drivers): ``is_available()`` is False and says why."""
    import types

    mod = types.ModuleType(f"ember.{device_type}", f"{device_type}: unavailable ({reason})")

    def fail(*args, **kwargs):
        raise RuntimeError(f"{device_type} is not available: {reason}")

    mod.is_available = lambda: False
    mod.unavailable_reason = lambda: reason
    mod.device_count = lambda: 0
    mod.current_device = mod.set_device = mod.synchronize = fail
    return mod


def stub_hookimpls(stub_type, title):
    """The three registration hooks of a stub plugin: the device type exists and reports
    itself unavailable; any op on it raises saying so.  A stub plugin module does
    ``ember_devices, ember_device_module, ember_kernel_table = stub_hookimpls(...)``."""
    reason = f"ember-{stub_type} is a stub: no {title} kernels are implemented yet"
    runtime = unavailable_runtime(stub_type, reason)

    @hookimpl
    def ember_devices():
        return [DeviceSpec(stub_type, f"{title} (stub)")]

    @hookimpl
    def ember_device_module(device_type):
        return runtime if device_type == stub_type else None

    @hookimpl
    def ember_kernel_table(device_type):
        if device_type == stub_type:
            raise RuntimeError(f"cannot run ops on '{device_type}' tensors: {reason}")
        return None

    return ember_devices, ember_device_module, ember_kernel_table


_FLAG_MODULES = ("cpu", "cuda", "cudnn", "mha")   # PyTorch's flag namespaces, imported on first use


def default_generator(device_type):
    """The default ``ember.Generator`` of ``device_type``: what its runtime module's
    ``manual_seed``/``seed``/``get_rng_state`` act on."""
    from ember.core._tensor import _default_generator
    return _default_generator(device_type)


def __getattr__(name):
    if name in _FLAG_MODULES:
        return importlib.import_module(f"ember.backends.{name}")
    if name == "OutOfMemoryError":       # what a plugin's allocator failure raises
        from ember.core._tensor import OutOfMemoryError
        return OutOfMemoryError
    if name == "IndexOutOfBoundsError":  # an index error a device reports after the op
        from ember.core._tensor import IndexOutOfBoundsError
        return IndexOutOfBoundsError
    if name == "device":                 # ember.device, for runtime modules' device args
        from ember.core._device import device
        return device
    raise AttributeError(f"module 'ember.backends' has no attribute '{name}'")
