"""The registry of runtime modules per device type (what ``ember.cuda``, ``ember.mps``, ...
forward to).

A plugin registers the real module; until one does, the type is answered by a stand-in
whose ``is_available()`` is False (never an error, as PyTorch's ``torch.cuda``) and whose
other functions say which package to install.  The façade's ``get_device_module`` adds
the device types that have a package of their own (``ember.cuda``)."""
import types

_modules = {}


def _missing(device_type):
    from ember.core._device import _backend_for_type, missing_backend_message
    b = _backend_for_type(device_type)
    return missing_backend_message(device_type, b.package if b else f"ember-{device_type}")


def _standin(device_type):
    mod = types.ModuleType(f"ember.{device_type}",
                           f"Stand-in for device type '{device_type}': no plugin is loaded.")

    def fail(*args, **kwargs):
        raise RuntimeError(_missing(device_type))

    mod.is_available = lambda: False
    mod.device_count = lambda: 0
    mod.unavailable_reason = lambda: _missing(device_type)
    mod.current_device = mod.set_device = mod.synchronize = fail
    mod.manual_seed = mod.manual_seed_all = lambda seed: None   # PyTorch ignores it silently
    mod.is_bf16_supported = lambda *a, **k: False
    mod._is_standin = True
    return mod


def register(device_type, module, replace=False):
    """Make ``module`` the runtime of ``device_type`` (``ember._register_device_module``)."""
    current = _modules.get(device_type)
    if current is not None and not getattr(current, "_is_standin", False) and not replace:
        raise RuntimeError(f"The runtime module of '{device_type}' was already registered "
                           f"with {current!r}")
    _modules[device_type] = module


def runtime(device_type):
    """The runtime module of ``device_type`` (a stand-in if no plugin registered one)."""
    mod = _modules.get(device_type)
    if mod is None:
        mod = _modules[device_type] = _standin(device_type)
    return mod

