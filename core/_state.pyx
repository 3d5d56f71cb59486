"""Thread-local and global state of the core (see _state.pxd)."""
import threading

from libc.stdint cimport uint64_t

from ember.core._dtype cimport as_dtype, dtype

cdef extern from *:
    """
    static __thread uint64_t ember_tls_included = 0;
    static __thread uint64_t ember_tls_excluded = 0;
    static __thread int ember_tls_has_default_device = 0;
    static __thread int ember_tls_fw_ceiling = 0x7fffffff;
    static __thread int ember_tls_ag_below = 0;
    """
    uint64_t ember_tls_included
    uint64_t ember_tls_excluded
    int ember_tls_has_default_device
    int ember_tls_fw_ceiling
    int ember_tls_ag_below

cdef bint _deterministic = False
cdef bint _deterministic_warn_only = False
cdef object _default_dtype = None
cdef object _local = threading.local()


cdef uint64_t tls_included() noexcept nogil:
    return ember_tls_included


cdef uint64_t tls_excluded() noexcept nogil:
    return ember_tls_excluded


cdef void set_tls_included(uint64_t keys) noexcept nogil:
    global ember_tls_included
    ember_tls_included = keys


cdef void set_tls_excluded(uint64_t keys) noexcept nogil:
    global ember_tls_excluded
    ember_tls_excluded = keys


cdef int fw_ceiling() noexcept nogil:
    return ember_tls_fw_ceiling


cdef void set_fw_ceiling(int level) noexcept nogil:
    global ember_tls_fw_ceiling
    ember_tls_fw_ceiling = level


cdef int ag_below() noexcept nogil:
    return ember_tls_ag_below


cdef void set_ag_below(int depth) noexcept nogil:
    global ember_tls_ag_below
    ember_tls_ag_below = depth


def _get_ag_below():
    """How many Autograd kernels run their op below themselves on this thread."""
    return ember_tls_ag_below


def _set_ag_below(int depth):
    set_ag_below(depth)


def _get_fw_ceiling():
    """Forward AD: tangents of levels >= this one are hidden on this thread."""
    return ember_tls_fw_ceiling


def _set_fw_ceiling(int level):
    set_fw_ceiling(level)


def _get_tls_keys():
    """(included, excluded) dispatch key masks of this thread."""
    return ember_tls_included, ember_tls_excluded


def _set_tls_keys(uint64_t included, uint64_t excluded):
    set_tls_included(included)
    set_tls_excluded(excluded)


cdef bint deterministic() noexcept nogil:
    return _deterministic


cdef int _matmul_precision = 0        # 0 highest, 1 high, 2 medium (ember_ctx's codes)


cdef int matmul_precision() noexcept nogil:
    return _matmul_precision


def _set_matmul_precision(int code):
    global _matmul_precision
    _matmul_precision = code


def _get_matmul_precision():
    return _matmul_precision


def _set_deterministic(bint mode, bint warn_only=False):
    global _deterministic, _deterministic_warn_only
    _deterministic = mode
    _deterministic_warn_only = warn_only


def _get_deterministic():
    return _deterministic, _deterministic_warn_only


cdef object default_dtype():
    return _default_dtype


def get_default_dtype():
    """Return the default floating point dtype (ember.float32 unless changed)."""
    return _default_dtype


def set_default_dtype(d):
    """Set the default floating point dtype to ``d`` (a floating dtype, as PyTorch)."""
    global _default_dtype
    cdef dtype dt = as_dtype(d, "set_default_dtype", "d")
    if not dt.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {dt}")
    _default_dtype = dt


cdef object default_device():
    if not ember_tls_has_default_device:
        return None
    return _local.device


def _set_default_device(device):
    """Set this thread's default device (an ember.device, or None for the CPU)."""
    global ember_tls_has_default_device
    _local.device = device
    ember_tls_has_default_device = device is not None


def _get_default_device():
    return default_device()


def _init_default_dtype(d):
    global _default_dtype
    _default_dtype = d


from ember.core import _dtype as _dtypes  # noqa: E402

_init_default_dtype(_dtypes.float32)
