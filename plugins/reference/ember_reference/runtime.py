"""``ember.reference``: the reference device's runtime module (one device, always there).

Kernels run synchronously on the host, so there is nothing to wait for; the memory
counters come from the C arena (ember_reference/csrc/arena.c)."""

_DEVICE = "reference"


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return 0


def set_device(device):
    """Only index 0 exists: accepts 0, "reference", "reference:0" or such an ember.device."""
    index = getattr(device, "index", device)
    kind = getattr(device, "type", _DEVICE)
    if isinstance(device, str):
        kind, _, rest = device.partition(":")
        index = int(rest) if rest else 0
    if kind != _DEVICE or index not in (None, 0):
        raise ValueError(f"set_device: the reference device has only index 0, got {device!r}")


def synchronize(device=None):
    """Kernels run synchronously: nothing to wait for, but a data error deferred to a
    synchronisation (EMBER_REFERENCE_DEFER_ERRORS=1) is raised here, as an asynchronous
    device reports it."""
    pending = _kernels().take_deferred_error()
    if pending is not None:
        code, msg = pending
        from ember.backends import IndexOutOfBoundsError
        raise (IndexOutOfBoundsError if code == 2 else RuntimeError)(msg)  # EMBER_ERR_INDEX


def _kernels():
    from ember_reference import _kernels
    return _kernels


def memory_stats():
    """The arena's counters: allocated_bytes, peak_bytes, live_allocations,
    total_allocations (every `alloc` ember made) and bad_frees (frees of unknown pointers)."""
    return _kernels().memory_stats()


def memory_allocated(device=None):
    """Bytes held by live allocations on the device."""
    return memory_stats()["allocated_bytes"]


def max_memory_allocated(device=None):
    """The most bytes held at once since the start or reset_peak_memory_stats()."""
    return memory_stats()["peak_bytes"]


def reset_peak_memory_stats(device=None):
    _kernels().reset_peak()


def allocations():
    """How many times ember called this device's `alloc`."""
    return memory_stats()["total_allocations"]


def address_range():
    """(begin, end) of the reserved device address range (every device pointer lies in it;
    no process can read or write it directly); (0, 0) before the first allocation."""
    return _kernels().address_range()
