"""Runtime module of the "cpu" device type (what ``ember.cpu`` is), as ``torch.cpu``."""

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize"]


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
