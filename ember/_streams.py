"""torch.Stream and torch.Event, the device-generic stream and event: on the CPU (where
ember runs ops in order, synchronously) a stream is always done and an event records host
time; on another device they are that device runtime's own.  Also torch.AcceleratorError,
torch.FatalError and torch.default_generator."""
import time

from ember.core._device import device as _device

__all__ = ["AcceleratorError", "Event", "FatalError", "Stream"]


class AcceleratorError(RuntimeError):
    """An error raised while executing on a device."""

    __module__ = "ember"


class FatalError(Exception):
    """An unrecoverable runtime error."""

    __module__ = "ember"


def _runtime(dev):
    import ember
    return ember.get_device_module(dev.type)


class Stream:
    """An in-order queue of work on ``device`` (default: the current accelerator, else the
    CPU); ``with stream:`` makes it current (on the CPU: everything is already in order)."""

    __module__ = "ember"

    def __new__(cls, device=None, *, priority=0):
        dev = _device(device) if device is not None else _device("cpu")
        if dev.type != "cpu":
            runtime = _runtime(dev)
            if hasattr(runtime, "Stream"):
                return runtime.Stream(dev, priority=priority)
        self = super().__new__(cls)
        self.device, self.priority = dev, priority
        return self

    device_type = property(lambda self: self.device.type)
    device_index = property(lambda self: -1 if self.device.index is None else self.device.index)
    stream_id = property(lambda self: 0)

    def query(self):
        """Whether all work on the stream is done (always, on the CPU)."""
        return True

    def synchronize(self):
        """Wait for the stream's work (nothing to wait for on the CPU)."""

    def wait_event(self, event):
        event.synchronize()

    def wait_stream(self, stream):
        stream.synchronize()

    def record_event(self, event=None):
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self):
        return False

    def native_handle(self):
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return (f"ember.Stream device_type={self.device.type}, "
                f"device_index={self.device_index}, stream_id=0")


class Event:
    """A marker in a stream's work: ``record()`` it, ``synchronize()`` on it, and with
    ``enable_timing`` measure ``elapsed_time`` (milliseconds) between two."""

    __module__ = "ember"

    def __new__(cls, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        dev = _device(device) if device is not None else _device("cpu")
        if dev.type != "cpu":
            runtime = _runtime(dev)
            if hasattr(runtime, "Event"):
                return runtime.Event(enable_timing=enable_timing, blocking=blocking,
                                     interprocess=interprocess)
        self = super().__new__(cls)
        self.device, self.enable_timing = dev, enable_timing
        self._time = None
        return self

    event_id = property(lambda self: id(self))

    def record(self, stream=None):
        self._time = time.perf_counter()

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, timing on)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def ipc_handle(self):
        raise RuntimeError("ipc_handle is only supported for events of devices with "
                           "inter-process memory")

    @classmethod
    def from_ipc_handle(cls, device, handle):
        raise RuntimeError("from_ipc_handle is only supported for CUDA events")

    def __repr__(self):
        return (f"ember.Event device_type={self.device.type}, device_index=-1, "
                f"event_id={id(self)}")


def __getattr__(name):
    if name == "default_generator":
        from ember.core import _tensor
        return _tensor._default_generator("cpu")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
