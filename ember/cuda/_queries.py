"""The smaller ``torch.cuda`` queries: peer access, the architecture list, TF32, the sync
debug mode, external streams, ``device_of`` and the NVML readings.  Without a GPU they
answer or raise as PyTorch's CPU-only build does."""

__all__ = ["can_device_access_peer", "clock_rate", "device_memory_used", "device_of",
           "get_arch_list", "get_stream_from_external", "get_sync_debug_mode",
           "is_tf32_supported", "power_draw", "set_sync_debug_mode", "temperature",
           "utilization"]

_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}
_sync_debug_mode = 0


def _cuda():
    from ember import cuda
    return cuda


def _runtime_fn(name):
    """The plugin's ``name`` (raising as torch's "not compiled with CUDA" without a GPU)."""
    cuda = _cuda()
    if not cuda.is_available():
        raise cuda.CudaUnavailableError(f"ember.cuda.{name}: CUDA is not available")
    fn = getattr(cuda._runtime(), name, None)
    if fn is None:
        raise NotImplementedError(f"ember.cuda.{name} is not implemented by ember-cuda")
    return fn


def can_device_access_peer(device, peer_device):
    """Whether ``device`` can read ``peer_device``'s memory directly (needs CUDA)."""
    return bool(_runtime_fn("can_device_access_peer")(device, peer_device))


def get_arch_list():
    """The GPU architectures the kernels were built for ([] without CUDA; ember-cuda
    compiles at run time, so it answers the architecture of each visible GPU)."""
    cuda = _cuda()
    if not cuda.is_available():
        return []
    caps = {cuda.get_device_capability(i) for i in range(cuda.device_count())}
    return [f"sm_{major}{minor}" for major, minor in sorted(caps)]


def is_tf32_supported():
    """Whether the GPU has TF32 tensor cores (compute capability 8.0 or later)."""
    cuda = _cuda()
    return cuda.is_available() and cuda.get_device_capability() >= (8, 0)


def get_sync_debug_mode():
    """0 (default), 1 (warn) or 2 (error) on synchronizing calls (needs CUDA)."""
    _runtime_fn("synchronize")          # raises without a GPU, as torch's
    return _sync_debug_mode


def set_sync_debug_mode(debug_mode):
    """Set the sync debug mode from an int or "default"/"warn"/"error" (needs CUDA)."""
    global _sync_debug_mode
    _runtime_fn("synchronize")
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               "`warn`, `error`")
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _sync_debug_mode = int(debug_mode)


def get_stream_from_external(data_ptr, device=None):
    """A Stream over a ``cudaStream_t`` made elsewhere (needs CUDA)."""
    _runtime_fn("synchronize")
    return _cuda().ExternalStream(data_ptr, device=device)


def device_of(obj):
    """A context that makes ``obj``'s GPU current (no change for a CPU tensor)."""
    cuda = _cuda()
    return cuda.device(obj.get_device() if obj.is_cuda else -1)


def _nvml(name, device):
    try:
        import pynvml  # noqa: F401
    except ModuleNotFoundError:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                                  "imported.") from None
    return _runtime_fn(name)(device)


def clock_rate(device=None):
    """The GPU's SM clock in MHz (needs NVML)."""
    return _nvml("clock_rate", device)


def power_draw(device=None):
    """The GPU's power draw in milliwatts (needs NVML)."""
    return _nvml("power_draw", device)


def temperature(device=None):
    """The GPU's temperature in degrees Celsius (needs NVML)."""
    return _nvml("temperature", device)


def utilization(device=None):
    """Percent of time a kernel ran over the last sample period (needs NVML)."""
    return _nvml("utilization", device)


def device_memory_used(device=None):
    """Bytes of GPU memory in use, as NVML reports it (needs NVML)."""
    return _nvml("device_memory_used", device)


device_of.__module__ = "ember.cuda"      # torch.cuda.device_of's path
