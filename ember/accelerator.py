"""``ember.accelerator``: the device-agnostic view of the current accelerator.

The accelerator is the first device type, other than the CPU and meta, whose plugin is
loaded, offers it as an accelerator (``DeviceSpec.accelerator``) and reports it available
(CUDA, XPU and MPS first, then devices plugins registered at run time, in key order);
without one every query says so (None, 0, False), as PyTorch's CPU-only build does."""
__all__ = ["current_accelerator", "current_device_index", "device_count", "is_available",
           "set_device_index", "synchronize"]

_PREFERRED = ("cuda", "xpu", "mps")


def _candidates():
    from ember.core._device import _backends_snapshot
    backends = _backends_snapshot()
    rest = sorted((b for t, b in backends.items() if t not in _PREFERRED),
                  key=lambda b: b.key)
    return [backends[t] for t in _PREFERRED if t in backends] + rest


def _accelerator_type(check_available=True):
    import ember
    from ember.backends import is_accelerator
    for b in _candidates():
        if b.type in ("cpu", "meta") or b.is_meta or b.plugin is None or \
                not is_accelerator(b.type):
            continue
        try:
            available = bool(ember.get_device_module(b.type).is_available())
        except Exception:
            available = False
        if available or not check_available and b.type in _PREFERRED:
            return b.type
    return None


def current_accelerator(check_available=False):
    """The accelerator's device (``ember.device``), or None when there is none."""
    import ember
    t = _accelerator_type()
    return ember.device(t) if t is not None else None


def is_available():
    """Whether an accelerator is present and usable."""
    return _accelerator_type() is not None


def device_count():
    """How many devices the accelerator has (0 without one)."""
    import ember
    t = _accelerator_type()
    return int(ember.get_device_module(t).device_count()) if t is not None else 0


def _module():
    import ember
    t = _accelerator_type()
    if t is None:
        raise RuntimeError("ember.accelerator: no accelerator is available")
    return ember.get_device_module(t)


def current_device_index():
    """The index of the accelerator's current device."""
    return _module().current_device()


def set_device_index(device):
    """Make ``device`` (an index or device) the accelerator's current device."""
    _module().set_device(device)


def synchronize(device=None):
    """Wait for all work queued on the accelerator's ``device``."""
    _module().synchronize(device) if device is not None else _module().synchronize()
