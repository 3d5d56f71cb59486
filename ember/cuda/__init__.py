"""``ember.cuda``: the CUDA runtime as PyTorch's ``torch.cuda`` presents it.

The functions come from the runtime module a CUDA plugin registers (``ember-cuda``); with
none installed, or no GPU, they behave as PyTorch's do without CUDA: ``is_available()`` is
False, seeding is silently ignored, memory queries answer 0, and calls that need a device
(``synchronize``, ``initial_seed``, ...) raise, naming the package to install."""
from ember.backends import _runtimes

__all__ = ["device_count", "empty_cache", "initial_seed", "is_available", "is_bf16_supported",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "memory_allocated",
           "memory_reserved", "seed", "seed_all", "synchronize"]


def _runtime():
    return _runtimes.runtime("cuda")


def _available():
    try:
        return bool(_runtime().is_available())
    except Exception:
        return False


class CudaUnavailableError(RuntimeError, AssertionError):
    """Raised by calls that need a GPU when there is none: an AssertionError as PyTorch's
    "not compiled with CUDA", and a RuntimeError as ember's missing-plugin errors."""


def _require(fn):
    if not _available():
        reason = getattr(_runtime(), "unavailable_reason", lambda: "CUDA is not available")()
        raise CudaUnavailableError(f"ember.cuda.{fn}: {reason}")
    return getattr(_runtime(), fn)


def is_available():
    """Whether a CUDA plugin is loaded and sees a GPU (never raises)."""
    return _available()


def device_count():
    """The number of GPUs (0 without CUDA)."""
    return int(_runtime().device_count()) if _available() else 0


def manual_seed(seed):
    """Seed the current GPU's generator; ignored without CUDA, as PyTorch."""
    if _available():
        _runtime().manual_seed(seed)


def manual_seed_all(seed):
    """Seed every GPU's generator; ignored without CUDA, as PyTorch."""
    if _available():
        getattr(_runtime(), "manual_seed_all", _runtime().manual_seed)(seed)


def seed():
    """Seed the current GPU's generator with a random number; ignored without CUDA."""
    if _available():
        _runtime().seed()


def seed_all():
    if _available():
        getattr(_runtime(), "seed_all", _runtime().seed)()


def initial_seed():
    """The current GPU generator's seed (needs CUDA)."""
    return _require("initial_seed")()


def synchronize(device=None):
    """Wait for every kernel on ``device`` to finish (needs CUDA)."""
    return _require("synchronize")(device)


def is_bf16_supported(including_emulation=True):
    """Whether the current GPU supports bfloat16 (False without CUDA)."""
    return bool(_runtime().is_bf16_supported(including_emulation)) if _available() else False


def empty_cache():
    """Release cached GPU memory (nothing to do without CUDA)."""
    if _available() and hasattr(_runtime(), "empty_cache"):
        _runtime().empty_cache()


def _memory_stat(name, device):
    if not _available() or not hasattr(_runtime(), name):
        return 0
    return int(getattr(_runtime(), name)(device))


def memory_allocated(device=None):
    """Bytes held by tensors on ``device`` (0 without CUDA)."""
    return _memory_stat("memory_allocated", device)


def max_memory_allocated(device=None):
    return _memory_stat("max_memory_allocated", device)


def memory_reserved(device=None):
    return _memory_stat("memory_reserved", device)


has_half = True           # PyTorch's constants: half precision yes, MAGMA no (ember's own
has_magma = False         # kernels, cuSOLVER-free)


class DeferredCudaCallError(Exception):
    """Raised when a call queued before CUDA initialised fails at initialisation."""


_SUBMODULES = {"amp", "memory", "random", "streams"}
_FROM = {"streams": ("Event", "ExternalStream", "Stream"),
         "memory": ("host_memory_stats", "host_memory_stats_as_nested_dict", "ipc_collect",
                    "list_gpu_processes", "max_memory_cached", "memory_cached",
                    "memory_snapshot", "memory_stats_as_nested_dict", "memory_usage",
                    "reset_accumulated_host_memory_stats", "reset_accumulated_memory_stats",
                    "reset_max_memory_cached", "reset_peak_host_memory_stats",
                    "get_per_process_memory_fraction", "set_per_process_memory_fraction"),
         "random": ("default_generators", "get_rng_state_all", "set_rng_state_all"),
         "_queries": ("can_device_access_peer", "clock_rate", "device_memory_used",
                      "device_of", "get_arch_list", "get_stream_from_external",
                      "get_sync_debug_mode", "is_tf32_supported", "power_draw",
                      "set_sync_debug_mode", "temperature", "utilization")}
_HOME = {n: mod for mod, names in _FROM.items() for n in names}


def __getattr__(name):
    # everything else is the plugin's runtime module (current_device, Stream, ...)
    import importlib
    if name == "OutOfMemoryError":           # one class for every device, as torch's
        import ember
        return ember.OutOfMemoryError
    if name in _SUBMODULES:
        return importlib.import_module(f"ember.cuda.{name}")
    home = _HOME.get(name)
    if home is not None:
        return getattr(importlib.import_module(f"ember.cuda.{home}"), name)
    if name.endswith(("Tensor", "Storage")):   # the legacy types: cuda.FloatTensor, ...
        from ember.core import legacy_types, storages
        if name in legacy_types.LEGACY_NAMES:
            return legacy_types.legacy_class(name, "cuda")
        if name in storages.LEGACY_STORAGE_NAMES:
            return storages.legacy_storage(name, "cuda")
    return getattr(_runtime(), name)
