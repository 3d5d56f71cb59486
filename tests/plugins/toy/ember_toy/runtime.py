"""``ember.toy``: the runtime module of the toy device (one device, always available)."""


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return 0


def set_device(device):
    index = getattr(device, "index", device)
    if isinstance(device, str):
        kind, _, rest = device.partition(":")
        if kind != "toy":
            raise ValueError(f"set_device: expected a toy device, got {device!r}")
        index = int(rest) if rest else 0
    if getattr(device, "type", "toy") != "toy" or index not in (None, 0):
        raise ValueError(f"set_device: the toy device has only index 0, got {device!r}")


def synchronize(device=None):
    """Kernels run synchronously on the host: nothing to wait for."""


def allocations():
    """How many allocations ember made through this plugin's allocator."""
    from ember_toy import _kernels
    return _kernels.allocations()
