"""Runtime module of the "cpu" device type (what ``ember.cpu`` is), as ``torch.cpu``."""

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def set_device(device) -> None:
    """The CPU is one device: nothing to select."""


def synchronize(device=None) -> None:
    """CPU kernels run synchronously: nothing to wait for."""


def memory_allocated(device=None) -> int:
    """Bytes held by live CPU tensors' storages (as malloc reports their blocks)."""
    from ember_cpu._copy import _memory_stats
    return _memory_stats()[0]


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated() since the start or reset_peak_memory_stats()."""
    from ember_cpu._copy import _memory_stats
    return _memory_stats()[1]


def reset_peak_memory_stats(device=None) -> None:
    from ember_cpu._copy import _reset_peak
    _reset_peak()
