"""ember.cuda.memory (``torch.cuda.memory``): the GPU memory queries.  With a GPU they are
the CUDA plugin's; without one the statistics are empty and the calls that need a device
raise, as in PyTorch's CPU-only build."""
import collections
import warnings

__all__ = ["host_memory_stats", "host_memory_stats_as_nested_dict", "ipc_collect",
           "list_gpu_processes", "max_memory_cached", "memory_cached", "memory_snapshot",
           "memory_stats_as_nested_dict", "memory_usage", "reset_accumulated_host_memory_stats",
           "reset_accumulated_memory_stats", "reset_max_memory_cached",
           "reset_peak_host_memory_stats", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction"]


def _cuda():
    from ember import cuda
    return cuda


def _runtime_or(name, default):
    cuda = _cuda()
    if cuda.is_available() and hasattr(cuda._runtime(), name):
        return getattr(cuda._runtime(), name)
    return default


def _nested(flat):
    out = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


def memory_stats_as_nested_dict(device=None):
    """memory_stats as nested dicts ({} without a GPU)."""
    cuda = _cuda()
    return _nested(cuda.memory_stats(device)) if cuda.is_available() else {}


def host_memory_stats():
    """Pinned host memory statistics (empty: ember-cuda does not pin)."""
    return collections.OrderedDict()


def host_memory_stats_as_nested_dict():
    return {}


def memory_snapshot(mempool_id=None, include_traces=True):
    """The allocator's segments ([] without a GPU or a snapshotting allocator; ember-cuda
    records no traces)."""
    return list(_runtime_or("memory_snapshot", lambda: [])())


def reset_accumulated_memory_stats(device=None):
    """Reset the allocator's accumulated counters (nothing to reset without a GPU)."""
    _runtime_or("reset_accumulated_memory_stats", lambda d=None: None)(device)


def reset_accumulated_host_memory_stats():
    pass


def reset_peak_host_memory_stats():
    pass


def memory_cached(device=None):
    """Deprecated: memory_reserved."""
    warnings.warn("ember.cuda.memory_cached has been renamed to ember.cuda.memory_reserved",
                  FutureWarning, stacklevel=2)
    return _cuda().memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated: max_memory_reserved."""
    warnings.warn("ember.cuda.max_memory_cached has been renamed to "
                  "ember.cuda.max_memory_reserved", FutureWarning, stacklevel=2)
    cuda = _cuda()
    return int(cuda._runtime().max_memory_reserved(device)) if cuda.is_available() else 0


def reset_max_memory_cached(device=None):
    """Deprecated: reset_peak_memory_stats."""
    warnings.warn("ember.cuda.reset_max_memory_cached now calls "
                  "ember.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    _runtime_or("reset_peak_memory_stats", lambda d=None: None)(device)


def _needs_gpu(name):
    from ember.cuda._queries import _runtime_fn
    return _runtime_fn(name)


def ipc_collect():
    """Free GPU memory held for other processes (needs a GPU)."""
    return _needs_gpu("ipc_collect")()


def get_per_process_memory_fraction(device=None):
    return _needs_gpu("get_per_process_memory_fraction")(device)


def set_per_process_memory_fraction(fraction, device=None):
    return _needs_gpu("set_per_process_memory_fraction")(fraction, device)


def list_gpu_processes(device=None):
    """A readable list of the processes on a GPU (needs NVML)."""
    try:
        import pynvml  # noqa: F401
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    return _needs_gpu("list_gpu_processes")(device)


def memory_usage(device=None):
    """Percent of time GPU memory was read or written (needs NVML)."""
    from ember.cuda._queries import _nvml
    return _nvml("memory_usage", device)
