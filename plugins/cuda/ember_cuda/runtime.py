"""The runtime module of the "cuda" device type: what ``ember.cuda`` forwards to, with
``torch.cuda``'s names (devices, streams, events, seeds, the caching allocator's stats).

Nothing here loads the driver at import.  ``is_available()`` tries once: PyCUDA importable,
the driver initialised, at least one GPU, and libcuda loadable by the kernel layer; when
one fails, ``unavailable_reason()`` says which and what to install."""
import threading

__all__ = ["Event", "ExternalStream", "Stream", "StreamContext", "current_device",
           "current_stream", "default_stream", "device", "device_count", "empty_cache",
           "get_device_capability", "get_device_name", "get_device_properties", "init",
           "initial_seed", "is_available", "is_bf16_supported", "is_initialized",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved",
           "mem_get_info", "memory_allocated", "memory_reserved", "memory_stats",
           "memory_summary", "profile_kernels", "reset_max_memory_allocated",
           "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_stream", "stream",
           "synchronize", "unavailable_reason"]

_probe = None             # None: not tried; "": available; else the reason it is not
_tls = threading.local()  # current_device per thread (PyTorch: cudaGetDevice is per thread)


def _ember_oom():
    from ember.backends import OutOfMemoryError
    return OutOfMemoryError


def __getattr__(name):
    if name == "OutOfMemoryError":        # ember.OutOfMemoryError, without importing the core
        return _ember_oom()
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")


def unavailable_reason():
    """Why CUDA cannot be used here ("" when it can)."""
    global _probe
    if _probe is None:
        _probe = _find_reason()
    return _probe


def _find_reason():
    try:
        import pycuda.driver as drv
    except ImportError as e:
        return (f"PyCUDA is not installed ({e}); install the GPU backend's dependency with "
                f"'pip install pycuda' on a machine with the CUDA toolkit and an NVIDIA driver")
    except Exception as e:          # PyCUDA present but its driver library is missing
        return f"PyCUDA could not load the CUDA driver: {type(e).__name__}: {e}"
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as e:
        return f"the CUDA driver could not be initialised: {type(e).__name__}: {e}"
    if count == 0:
        return "no CUDA GPU was found by the driver"
    from ember_cuda import _cuda
    why = _cuda.driver_error()
    return why or ""


def is_available() -> bool:
    """Whether a GPU can run ember's kernels here (never raises)."""
    try:
        return unavailable_reason() == ""
    except Exception:
        return False


def _require():
    why = unavailable_reason()
    if why:
        raise RuntimeError(f"CUDA is not available: {why}")
    from ember_cuda import _cuda
    return _cuda


def is_initialized() -> bool:
    return is_available() and _require().initialized(current_device())


def init():
    """Initialise the current device's context (ops do it on first use anyway)."""
    _require().capability(current_device())


def device_count() -> int:
    if not is_available():
        return 0
    from ember_cuda import _cuda
    return _cuda.device_count()


def _index(device, optional=True):
    """A device index from None (the current device), an int, "cuda:1" or ember.device."""
    if device is None:
        if not optional:
            raise ValueError("Expected a cuda device, but got: None")
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        idx = device
    else:
        from ember.backends import device as ember_device
        d = ember_device(device) if isinstance(device, str) else device
        if not isinstance(d, ember_device):
            raise ValueError(f"Expected a cuda device, but got: {device!r}")
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        idx = current_device() if d.index is None else d.index
    if idx < 0:
        return current_device()
    n = device_count()
    if idx >= n:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {idx}, {n} "
                           f"device{'s' if n != 1 else ''} present)")
    return idx


def current_device() -> int:
    return getattr(_tls, "device", 0)


def set_device(device) -> None:
    """Make ``device`` the current device of this thread (a negative index is a no-op)."""
    if isinstance(device, int) and device < 0:
        return
    _tls.device = _index(device)


class device:
    """``with ember.cuda.device(1): ...``: the current device inside the block."""

    def __init__(self, device):
        self.idx = -1 if device is None else (device if isinstance(device, int)
                                              else _index(device))
        self.prev = -1

    def __enter__(self):
        self.prev = current_device()
        if self.idx >= 0:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0:
            _tls.device = self.prev
        return False


def synchronize(device=None) -> None:
    """Wait for every kernel queued on ``device``."""
    _require().synchronize(_index(device))


def _pycuda_device(device):
    import pycuda.driver as drv
    _require()
    return drv.Device(_index(device))


class _DeviceProperties:
    """What ``get_device_properties`` returns (the fields PyTorch scripts read)."""

    def __init__(self, idx):
        import pycuda.driver as drv
        dev = _pycuda_device(idx)
        attrs = drv.device_attribute
        self.name = dev.name()
        self.major, self.minor = dev.compute_capability()
        self.total_memory = dev.total_memory()
        self.multi_processor_count = dev.get_attribute(attrs.MULTIPROCESSOR_COUNT)
        self.max_threads_per_multi_processor = dev.get_attribute(
            attrs.MAX_THREADS_PER_MULTIPROCESSOR)
        self.warp_size = dev.get_attribute(attrs.WARP_SIZE)
        self.is_integrated = bool(dev.get_attribute(attrs.INTEGRATED))
        self.is_multi_gpu_board = bool(dev.get_attribute(attrs.MULTI_GPU_BOARD))
        self.L2_cache_size = dev.get_attribute(attrs.L2_CACHE_SIZE)
        self.index = idx

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


def get_device_properties(device=None):
    return _DeviceProperties(_index(device))


def get_device_name(device=None) -> str:
    return _pycuda_device(device).name()


def get_device_capability(device=None):
    return tuple(_pycuda_device(device).compute_capability())


def is_bf16_supported(including_emulation=True) -> bool:
    return is_available() and (including_emulation or get_device_capability()[0] >= 8)


def mem_get_info(device=None):
    """(free, total) bytes on ``device``, as the driver reports them."""
    return _require().mem_get_info(_index(device))


# -- streams and events ----------------------------------------------------------------------

class Stream:
    """A CUDA stream: kernels queued on one run in order; kernels on two may overlap.
    ``cuda_stream`` is its CUstream handle (0: the default stream)."""

    def __new__(cls, device=None, priority=0, _handle=None):
        self = object.__new__(cls)
        idx = _index(device)
        self.device_index = idx
        if _handle is None:
            self.cuda_stream = _require().stream_create(idx, priority)
            self._owned = True
        else:
            self.cuda_stream = _handle
            self._owned = False
        return self

    def __init__(self, device=None, priority=0, _handle=None):
        pass

    @property
    def device(self):
        from ember.backends import device as ember_device
        return ember_device("cuda", self.device_index)

    def synchronize(self):
        _require().stream_synchronize(self.device_index, self.cuda_stream)

    def query(self):
        return _require().stream_query(self.device_index, self.cuda_stream)

    def wait_event(self, event):
        event._ensure(self.device_index)
        _require().stream_wait_event(self.device_index, self.cuda_stream, event.cuda_event)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return (isinstance(other, Stream) and self.cuda_stream == other.cuda_stream
                and self.device_index == other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return (f"<ember.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")

    def __del__(self):
        if getattr(self, "_owned", False):
            try:
                from ember_cuda import _cuda
                _cuda.stream_destroy(self.device_index, self.cuda_stream)
            except Exception:
                pass


class ExternalStream(Stream):
    """A stream made outside ember (``cudaStream_t`` ``stream_ptr``); ember never destroys it."""

    def __new__(cls, stream_ptr, device=None):
        return Stream.__new__(cls, device, _handle=stream_ptr)

    def __init__(self, stream_ptr, device=None):
        pass


def default_stream(device=None):
    return Stream(device, _handle=0)


def current_stream(device=None):
    idx = _index(device)
    handle = _require().current_stream(idx)
    streams = getattr(_tls, "streams", {})
    s = streams.get((idx, handle))
    return s if s is not None else Stream(idx, _handle=handle)


def set_stream(stream):
    """Make ``stream`` this thread's current stream on its device."""
    if stream is None:
        return
    _require().set_stream(stream.device_index, stream.cuda_stream)
    streams = getattr(_tls, "streams", None)
    if streams is None:
        streams = _tls.streams = {}
    streams[(stream.device_index, stream.cuda_stream)] = stream


class StreamContext:
    """``with ember.cuda.stream(s):`` kernels inside go to ``s`` (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is not None:
            self.prev = current_stream(self.stream.device_index)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.prev)
        return False


def stream(stream):
    return StreamContext(stream)


class Event:
    """A CUDA event: a point in a stream to wait for or to time against another."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False,
                 external=False):
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.cuda_event = 0
        self.device_index = None

    def _ensure(self, idx):
        if self.cuda_event == 0:
            self.cuda_event = _require().event_create(idx, self.enable_timing)
            self.device_index = idx

    def record(self, stream=None):
        stream = current_stream() if stream is None else stream
        self._ensure(stream.device_index)
        _require().event_record(self.device_index, self.cuda_event, stream.cuda_stream)

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        return True if self.cuda_event == 0 else _require().event_query(self.device_index,
                                                                          self.cuda_event)

    def synchronize(self):
        if self.cuda_event:
            _require().event_synchronize(self.device_index, self.cuda_event)

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event`` (both recorded, with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self.cuda_event and end_event.cuda_event):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _require().event_elapsed_time(self.device_index, self.cuda_event,
                                             end_event.cuda_event)

    def __repr__(self):
        return f"<ember.cuda.Event {self.cuda_event:#x}>" if self.cuda_event else \
            "<ember.cuda.Event uninitialized>"

    def __del__(self):
        if getattr(self, "cuda_event", 0):
            try:
                from ember_cuda import _cuda
                _cuda.event_destroy(self.device_index, self.cuda_event)
            except Exception:
                pass


# PyTorch's module paths, which pickles and user code name
for _cls in (Stream, ExternalStream, Event):
    _cls.__module__ = "ember.cuda.streams"
for _cls in (device, StreamContext):
    _cls.__module__ = "ember.cuda"


# -- profiling ------------------------------------------------------------------------------

class profile_kernels:
    """GPU time per kernel over a region, from CUDA events around every launch:

        with ember.cuda.profile_kernels() as prof:
            train_step()
        print(prof.table())

    cuBLAS GEMMs, device copies and memsets are counted under their own names."""

    _TAGS = {1: "cublas.gemm", 2: "memcpy (device to device)", 3: "memset"}

    def __enter__(self):
        synchronize()
        _require().profile_start()
        self.records = []
        return self

    def __exit__(self, *exc):
        self.records = _require().profile_stop()
        return False

    def summary(self):
        """[(kernel, calls, total ms)], the most expensive first."""
        from ember_cuda import _modules
        names = {h: f"{mod}:{fn}" for (_, mod, fn), h in _modules._functions.items()}
        totals = {}
        for handle, ms in self.records:
            name = self._TAGS.get(handle) or names.get(handle, hex(handle))
            calls, total = totals.get(name, (0, 0.0))
            totals[name] = (calls + 1, total + ms)
        return sorted(((n, c, t) for n, (c, t) in totals.items()), key=lambda r: -r[2])

    def table(self, top=30):
        rows = self.summary()
        total = sum(r[2] for r in rows) or 1.0
        lines = [f"{'kernel':<44}{'calls':>8}{'total ms':>12}{'share':>8}"]
        lines += [f"{n[:44]:<44}{c:>8}{t:>12.3f}{100 * t / total:>7.1f}%" for n, c, t in rows[:top]]
        lines.append(f"{'all kernels':<44}{len(self.records):>8}{total:>12.3f}")
        return "\n".join(lines)


# -- seeds ----------------------------------------------------------------------------------

def _generator():
    from ember.backends import default_generator
    return default_generator("cuda")


def manual_seed(seed) -> None:
    """Seed the GPU's default generator (the same counter-based stream as the CPU's: one
    seed gives the same uniform numbers on both devices)."""
    _generator().manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    _generator().seed()


seed_all = seed


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    return _generator().get_state()


def set_rng_state(new_state, device="cuda"):
    _generator().set_state(new_state)


# -- the caching allocator --------------------------------------------------------------------

def memory_stats(device=None) -> dict:
    """The allocator's counters for ``device`` (PyTorch's key names where they exist)."""
    if not is_available():
        return {}
    return _require().memory_stats(_index(device))


def _stat(key, device):
    return memory_stats(device).get(key, 0)


def memory_allocated(device=None) -> int:
    """Bytes of device memory held by tensors (in the allocator's size classes)."""
    return _stat("allocated_bytes", device)


def max_memory_allocated(device=None) -> int:
    return _stat("allocated_bytes.peak", device)


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds from the driver: in use plus cached."""
    return _stat("reserved_bytes", device)


def max_memory_reserved(device=None) -> int:
    return _stat("reserved_bytes.peak", device)


def reset_peak_memory_stats(device=None) -> None:
    if is_available():
        _require().reset_peak_memory_stats(_index(device))


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache() -> None:
    """Give every cached, unused block back to the driver."""
    if is_available():
        from ember_cuda import _cuda
        for d in range(device_count()):
            if _cuda.initialized(d):
                _cuda.empty_cache(d)


def memory_summary(device=None, abbreviated=False) -> str:
    """A table of the allocator's counters for ``device``."""
    s = memory_stats(device)
    idx = _index(device) if is_available() else 0

    def size(n):
        for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
            if abs(n) < 1024 or unit == "TiB":
                return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
            n /= 1024

    rows = [("Allocated memory", size(s.get("allocated_bytes", 0)),
             size(s.get("allocated_bytes.peak", 0))),
            ("Requested memory", size(s.get("requested_bytes", 0)), ""),
            ("GPU reserved memory", size(s.get("reserved_bytes", 0)),
             size(s.get("reserved_bytes.peak", 0))),
            ("Active blocks", str(s.get("active_blocks", 0)), ""),
            ("Cached blocks", str(s.get("inactive_blocks", 0)), ""),
            ("Allocations", str(s.get("num_allocs", 0)), ""),
            ("Frees", str(s.get("num_frees", 0)), ""),
            ("Driver allocations", str(s.get("num_device_alloc", 0)), ""),
            ("Driver frees", str(s.get("num_device_free", 0)), ""),
            ("Allocation retries", str(s.get("num_alloc_retries", 0)), ""),
            ("Out-of-memory errors", str(s.get("num_ooms", 0)), "")]
    width = 76
    lines = ["=" * width, f" ember CUDA memory summary, device {idx}".ljust(width), "-" * width,
             f"{'Metric':<30}{'Current':>22}{'Peak':>22}", "-" * width]
    lines += [f"{name:<30}{cur:>22}{peak:>22}" for name, cur, peak in rows]
    lines.append("=" * width)
    return "\n".join(lines) + "\n"
