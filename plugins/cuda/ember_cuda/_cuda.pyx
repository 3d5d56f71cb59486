# ember-cuda's extension: the kernel table (C entries in csrc/), and the driver calls the
# runtime module (runtime.py) makes: devices, streams, events, module loading, memory stats.
# Importing it loads no driver; the first call that needs one dlopens libcuda.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t

from ember_abi cimport (
    EMBER_ABI_MINOR, EMBER_ABI_VERSION, EMBER_KERNEL_TABLE_CAPSULE, ember_adam_params,
    ember_conv_params, ember_ctx, ember_kernel_table, ember_pool_params, ember_view,
)

cdef extern from "csrc/cu.h":
    ctypedef int CUresult
    ctypedef int CUdevice
    ctypedef unsigned long long CUdeviceptr
    ctypedef void *CUcontext
    ctypedef void *CUmodule
    ctypedef void *CUfunction
    ctypedef void *CUstream
    ctypedef void *CUevent
    ctypedef struct cu_api:
        CUresult (*DeviceGetCount)(int *count) nogil
        CUresult (*DriverGetVersion)(int *version) nogil
        CUresult (*CtxSynchronize)() nogil
        CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes) nogil
        CUresult (*StreamCreateWithPriority)(CUstream *s, unsigned int flags, int priority) nogil
        CUresult (*StreamDestroy)(CUstream s) nogil
        CUresult (*StreamSynchronize)(CUstream s) nogil
        CUresult (*StreamQuery)(CUstream s) nogil
        CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned int flags) nogil
        CUresult (*EventCreate)(CUevent *e, unsigned int flags) nogil
        CUresult (*EventDestroy)(CUevent e) nogil
        CUresult (*EventRecord)(CUevent e, CUstream s) nogil
        CUresult (*EventSynchronize)(CUevent e) nogil
        CUresult (*EventQuery)(CUevent e) nogil
        CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end) nogil
        CUresult (*ModuleLoadData)(CUmodule *m, const void *image) nogil
        CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name) nogil
        CUresult (*GetErrorName)(CUresult r, const char **name) nogil
        CUresult (*GetErrorString)(CUresult r, const char **text) nogil
    cu_api cu
    enum:
        CUDA_SUCCESS
        CUDA_ERROR_NOT_READY

cdef extern from "csrc/ec.h":
    ctypedef struct ec_device:
        int ready
        int sm_count
        int cc_major
        int cc_minor
        int max_smem_optin
    ec_device ec_devices[16]
    ctypedef struct ec_memory_stats:
        int64_t allocated, allocated_peak, reserved, reserved_peak, requested
        int64_t num_allocs, num_frees, num_device_allocs, num_device_frees
        int64_t num_alloc_retries, num_ooms, active_blocks, cached_blocks
    int ec_driver_load(char *why, size_t n) nogil
    int ec_enter(ember_ctx *ctx) nogil
    int ec_take_error(ember_ctx *ctx, int deferred) nogil
    CUstream ec_stream(int device) nogil
    void ec_set_stream(int device, CUstream s) nogil
    void ec_set_loader(void *callable)
    void ec_profile_start() nogil
    long ec_profile_stop(uintptr_t *fn, float *ms, long n) nogil
    void ec_memory_stats_get(int device, ec_memory_stats *s) nogil
    void ec_memory_reset_peaks(int device) nogil
    int ec_empty_cache(int device) nogil
    int ec_launch(ember_ctx *ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                  unsigned block, unsigned smem, void **args) nogil

cdef extern from "csrc/entries.h":
    void *ec_alloc(ember_ctx *ctx, int64_t nbytes) noexcept nogil
    void ec_free(int32_t device, void *ptr) noexcept nogil
    int ec_copy(ember_ctx *ctx, const ember_view *out, const ember_view *a) noexcept nogil
    int ec_fill(ember_ctx *ctx, const ember_view *out, const void *value) noexcept nogil
    int ec_to_host(ember_ctx *ctx, void *host_dst, const void *device_src,
                   int64_t nbytes) noexcept nogil
    int ec_from_host(ember_ctx *ctx, void *device_dst, const void *host_src,
                     int64_t nbytes) noexcept nogil
    int ec_unary(ember_ctx *ctx, int32_t op, const ember_view *out,
                 const ember_view *a) noexcept nogil
    int ec_binary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                  const ember_view *b) noexcept nogil
    int ec_where(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                 const ember_view *a, const ember_view *b) noexcept nogil
    int ec_ternary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                   const ember_view *b, const ember_view *c, double p) noexcept nogil
    int ec_activation(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                      const ember_view *a, const ember_view *b) noexcept nogil
    int ec_reduce(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                  int32_t nreduce) noexcept nogil
    int ec_scan(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
                const ember_view *a) noexcept nogil
    int ec_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                  const ember_view *b) noexcept nogil
    int ec_random(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                  uint64_t offset, double p0, double p1) noexcept nogil
    int ec_index(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                 const ember_view *index, int32_t dim) noexcept nogil
    int ec_search(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
                  const ember_view *values) noexcept nogil
    int ec_softmax(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                   const ember_view *b) noexcept nogil
    int ec_norm(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                double eps) noexcept nogil
    int ec_nll(ember_ctx *ctx, int32_t op, const ember_view *const *v,
               int64_t ignore_index) noexcept nogil
    int ec_conv(ember_ctx *ctx, int32_t op, const ember_conv_params *p, const ember_view *out,
                const ember_view *a, const ember_view *b, const ember_view *c) noexcept nogil
    int ec_pool(ember_ctx *ctx, int32_t op, const ember_pool_params *p, const ember_view *out,
                const ember_view *indices, const ember_view *a) noexcept nogil
    int ec_adam(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v,
                int64_t n) noexcept nogil

from ember_cuda import _modules


# -- errors ---------------------------------------------------------------------------------

cdef str _cu_error(CUresult r, str what):
    cdef const char *name = NULL
    cdef const char *text = NULL
    if cu.GetErrorName is not NULL:
        cu.GetErrorName(r, &name)
        cu.GetErrorString(r, &text)
    return (f"CUDA error: {(<bytes>name).decode() if name else r}: "
            f"{(<bytes>text).decode() if text else 'unknown error'} ({what})")


cdef int _check(CUresult r, str what) except -1:
    if r != CUDA_SUCCESS:
        raise RuntimeError(_cu_error(r, what))
    return 0


cdef bint _ready(CUresult r, str what) except -1:
    """A query's answer: False while the work is pending, True once done (else raise)."""
    if r == CUDA_ERROR_NOT_READY:
        return False
    _check(r, what)
    return True


cdef int _enter(int device) except -1:
    cdef ember_ctx ctx
    ctx.device = device
    ctx.error[0] = 0
    if ec_enter(&ctx):
        raise RuntimeError(ctx.error[:].decode("utf-8", "replace"))
    return 0


# -- the driver and devices -----------------------------------------------------------------

def driver_error():
    """None when libcuda loads and initialises, else why not."""
    cdef char why[256]
    if ec_driver_load(why, sizeof(why)) == 0:
        return None
    return why[:].decode("utf-8", "replace")


def device_count():
    cdef int n = 0
    if driver_error() is not None:
        return 0
    if cu.DeviceGetCount(&n) != CUDA_SUCCESS:
        return 0
    return n


def driver_version():
    cdef int v = 0
    if driver_error() is None:
        cu.DriverGetVersion(&v)
    return v


def capability(int device):
    """(major, minor) compute capability; initialises the device's context."""
    _enter(device)
    return ec_devices[device].cc_major, ec_devices[device].cc_minor


def multiprocessors(int device):
    _enter(device)
    return ec_devices[device].sm_count


def initialized(int device):
    return bool(ec_devices[device].ready)


cdef int _raise_pending(int device) except -1:
    """Raise the error a kernel found in the data, if one did (after a synchronisation)."""
    cdef ember_ctx ctx
    ctx.device = device
    ctx.error[0] = 0
    cdef int rc = ec_take_error(&ctx, 1)
    if rc:
        msg = ctx.error[:].decode("utf-8", "replace")
        if rc == 2:      # the op's own exception type is not known here: both (abi.h)
            from ember.backends import IndexOutOfBoundsError
            raise IndexOutOfBoundsError(msg)
        raise RuntimeError(msg)
    return 0


def synchronize(int device):
    _enter(device)
    cdef CUresult r
    with nogil:
        r = cu.CtxSynchronize()
    _check(r, "synchronize")
    _raise_pending(device)


def mem_get_info(int device):
    """(free, total) bytes of the device."""
    cdef size_t free_b = 0, total_b = 0
    _enter(device)
    _check(cu.MemGetInfo(&free_b, &total_b), "cuMemGetInfo")
    return free_b, total_b


def load_module(int device, bytes image):
    cdef CUmodule m
    _enter(device)
    _check(cu.ModuleLoadData(&m, <const char *>image), "cuModuleLoadData")
    return <uintptr_t>m


def get_function(int device, uintptr_t module, str name):
    cdef CUfunction f
    _enter(device)
    _check(cu.ModuleGetFunction(&f, <CUmodule>module, name.encode()), f"function {name}")
    return <uintptr_t>f


# the most pointer arguments launch() passes (ember.compile's kernels have a few)
cdef enum:
    MAX_LAUNCH_ARGS = 64
LAUNCH_MAX_ARGS = MAX_LAUNCH_ARGS


def launch(int device, uintptr_t function, unsigned grid, unsigned block, tuple pointers):
    """Launch ``function`` (a CUfunction from ``get_function``) on ``device``'s current
    stream with ``grid`` blocks of ``block`` threads; its parameters are ``pointers``
    (device addresses, in order).  ember.compile's generated kernels run through this."""
    cdef ember_ctx ctx
    cdef uint64_t values[MAX_LAUNCH_ARGS]
    cdef void *params[MAX_LAUNCH_ARGS]
    cdef Py_ssize_t i, n = len(pointers)
    if n > MAX_LAUNCH_ARGS:
        raise ValueError(f"launch: at most {MAX_LAUNCH_ARGS} pointer arguments, got {n}")
    for i in range(n):
        values[i] = <uint64_t>pointers[i]
        params[i] = &values[i]
    ctx.device = device
    ctx.deterministic = 0
    ctx.matmul_precision = 0
    ctx.reserved = 0
    ctx.error[0] = 0
    if ec_launch(&ctx, <CUfunction>function, grid, 1, 1, block, 0, params):
        raise RuntimeError(ctx.error[:].decode("utf-8", "replace"))


# -- streams --------------------------------------------------------------------------------

def stream_create(int device, int priority=0):
    cdef CUstream s
    _enter(device)
    _check(cu.StreamCreateWithPriority(&s, 0, priority), "cuStreamCreate")
    return <uintptr_t>s


def stream_destroy(int device, uintptr_t s):
    if s and ec_devices[device].ready:
        _enter(device)
        cu.StreamDestroy(<CUstream>s)


def stream_synchronize(int device, uintptr_t s):
    _enter(device)
    cdef CUresult r
    with nogil:
        r = cu.StreamSynchronize(<CUstream>s)
    _check(r, "stream synchronize")
    _raise_pending(device)


def stream_query(int device, uintptr_t s):
    _enter(device)
    return _ready(cu.StreamQuery(<CUstream>s), "stream query")


def current_stream(int device):
    return <uintptr_t>ec_stream(device)


def set_stream(int device, uintptr_t s):
    ec_set_stream(device, <CUstream>s)


def stream_wait_event(int device, uintptr_t s, uintptr_t e):
    _enter(device)
    _check(cu.StreamWaitEvent(<CUstream>s, <CUevent>e, 0), "cuStreamWaitEvent")


# -- events -----------------------------------------------------------------------------------

def event_create(int device, bint timing):
    cdef CUevent e
    _enter(device)
    _check(cu.EventCreate(&e, 0 if timing else 2), "cuEventCreate")
    return <uintptr_t>e


def event_destroy(int device, uintptr_t e):
    if e and ec_devices[device].ready:
        _enter(device)
        cu.EventDestroy(<CUevent>e)


def event_record(int device, uintptr_t e, uintptr_t s):
    _enter(device)
    _check(cu.EventRecord(<CUevent>e, <CUstream>s), "cuEventRecord")


def event_synchronize(int device, uintptr_t e):
    _enter(device)
    cdef CUresult r
    with nogil:
        r = cu.EventSynchronize(<CUevent>e)
    _check(r, "event synchronize")


def event_query(int device, uintptr_t e):
    _enter(device)
    return _ready(cu.EventQuery(<CUevent>e), "event query")


def event_elapsed_time(int device, uintptr_t start, uintptr_t end):
    cdef float ms = 0
    _enter(device)
    _check(cu.EventElapsedTime(&ms, <CUevent>start, <CUevent>end), "elapsed_time")
    return ms


# -- the kernel profiler -------------------------------------------------------------------

def profile_start():
    ec_profile_start()


def profile_stop():
    """[(CUfunction handle, or 1 gemm / 2 memcpy / 3 memset), milliseconds] per launch."""
    import array
    cdef long n = ec_profile_stop(NULL, NULL, 0)
    fn = array.array("Q", bytes(8 * n))
    ms = array.array("f", bytes(4 * n))
    cdef unsigned long long[:] f_view = fn
    cdef float[:] m_view = ms
    if n:
        n = ec_profile_stop(<uintptr_t *>&f_view[0], &m_view[0], n)
    return list(zip(fn.tolist(), ms.tolist()))


# -- memory -----------------------------------------------------------------------------------

def memory_stats(int device):
    cdef ec_memory_stats s
    ec_memory_stats_get(device, &s)
    return {"allocated_bytes": s.allocated, "allocated_bytes.peak": s.allocated_peak,
            "reserved_bytes": s.reserved, "reserved_bytes.peak": s.reserved_peak,
            "requested_bytes": s.requested, "num_allocs": s.num_allocs,
            "num_frees": s.num_frees, "num_device_alloc": s.num_device_allocs,
            "num_device_free": s.num_device_frees, "num_alloc_retries": s.num_alloc_retries,
            "num_ooms": s.num_ooms, "active_blocks": s.active_blocks,
            "inactive_blocks": s.cached_blocks}


def reset_peak_memory_stats(int device):
    ec_memory_reset_peaks(device)


def empty_cache(int device):
    cdef int r
    with nogil:
        r = ec_empty_cache(device)
    _check(r, "empty_cache")


def _alloc(int device, int64_t nbytes):
    """Address of a fresh block (tests); raises with the allocator's message on failure."""
    cdef ember_ctx ctx
    ctx.device = device
    ctx.error[0] = 0
    cdef void *p = ec_alloc(&ctx, nbytes)
    if p is NULL:
        raise MemoryError(ctx.error[:].decode("utf-8", "replace"))
    return <uintptr_t>p


def _free(int device, uintptr_t p):
    ec_free(device, <void *>p)


# -- the kernel table -----------------------------------------------------------------------

cdef ember_kernel_table TABLE
TABLE.abi_version = EMBER_ABI_VERSION
TABLE.abi_minor = EMBER_ABI_MINOR
TABLE.size = sizeof(ember_kernel_table)
TABLE.alloc = ec_alloc
TABLE.free = ec_free
TABLE.copy = ec_copy
TABLE.fill = ec_fill
TABLE.to_host = ec_to_host
TABLE.from_host = ec_from_host
TABLE.unary = ec_unary
TABLE.binary = ec_binary
TABLE.where = ec_where
TABLE.ternary = ec_ternary
TABLE.activation = ec_activation
TABLE.reduce = ec_reduce
TABLE.scan = ec_scan
TABLE.matmul = ec_matmul
TABLE.random = ec_random
TABLE.index = ec_index
TABLE.search = ec_search
TABLE.softmax = ec_softmax
TABLE.norm = ec_norm
TABLE.nll = ec_nll
TABLE.conv = ec_conv
TABLE.pool = ec_pool
TABLE.adam = ec_adam

_capsule = PyCapsule_New(&TABLE, EMBER_KERNEL_TABLE_CAPSULE, NULL)
ec_set_loader(<void *>_modules.function)


def kernel_table():
    """The PyCapsule "ember.kernel_table" holding ember-cuda's table."""
    return _capsule
