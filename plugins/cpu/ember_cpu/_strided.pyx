# The strided-iteration driver and the dtype converters (declared in _strided.pxd).
from cython.parallel cimport parallel, prange
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport getenv, strtoll
from posix.time cimport clock_gettime, nanosleep, CLOCK_MONOTONIC, timespec

cdef extern from "_spin_barrier.h":
    ctypedef struct ember_work_queue:
        pass
    void ember_queue_init(ember_work_queue *q) noexcept nogil
    int64_t ember_queue_take(ember_work_queue *q, int64_t chunk) noexcept nogil
    void ember_queue_finish(ember_work_queue *q, int thread, int n) noexcept nogil

from ember_cpu._abi cimport (
    EMBER_ERROR_LEN, EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_TYPE, EMBER_ERR_NOT_IMPLEMENTED,
    ember_half_to_float, ember_float_to_half, ember_bf16_to_float, ember_float_to_bf16,
)

# float16/bfloat16 <-> float32 over a unit-stride run, vectorised (the staging of half
# operands under autocast: element by element, half.h's branches cost ~1.5 ns each)
cdef extern from "_cast_rows.h":
    void ember_f32_to_f16(uint16_t *o, const float *a, int64_t n) noexcept nogil
    void ember_f32_to_bf16(uint16_t *o, const float *a, int64_t n) noexcept nogil
    void ember_f16_to_f32(float *o, const uint16_t *a, int64_t n) noexcept nogil
    void ember_bf16_to_f32(float *o, const uint16_t *a, int64_t n) noexcept nogil
from ember_cpu._openmp_helpers cimport (
    omp_get_max_threads, omp_get_num_threads, omp_get_thread_num, omp_in_parallel,
    omp_set_num_threads,
)

cdef int _num_threads = max(1, omp_get_max_threads())
cdef int64_t _cutoff = 0            # parallel_cutoff(); 0: not measured for this team yet


cdef bint contiguous(const ember_view *v) noexcept nogil:
    cdef int64_t expect = 1
    cdef int d
    for d in range(v.ndim - 1, -1, -1):
        if v.sizes[d] != 1 and v.strides[d] != expect:
            return False
        expect *= v.sizes[d]
    return True


cdef int num_threads() noexcept nogil:
    return _num_threads


cdef void set_num_threads(int n) noexcept nogil:
    global _num_threads, _cutoff
    _num_threads = max(1, n)
    _cutoff = 0
    omp_set_num_threads(_num_threads)


# A parallel region pays for waking the team.  Threads that have waited past their short
# spin (ember-cpu's default, see __init__.py) sleep in the kernel, and waking them is cheap
# on most machines (a few us) but 50-80 us on some virtual machines: measured on a 2-core
# VM, a 32768-element add took 4 us serially and 77 us in two threads, and two threads won
# only from ~1M elements.  So the cutoff is the work at which the cheapest kernel (an add,
# 5-9 elements a ns on one thread) saves what waking costs, and a margin for the rest of
# a region's cost (an empty region measures the wake-up alone): 20 elements per ns of
# wake-up, measured once per team size as the fastest of a few empty regions each entered
# after the team has had time to fall asleep (a still-spinning team measured 32k elements
# here, and small ops then split and paid the wake-ups), PARALLEL_CUTOFF at least and 2M at
# most.  EMBER_CPU_PARALLEL_CUTOFF sets it instead.
DEF ELEMENTS_PER_WAKE_NS = 20
DEF MAX_CUTOFF = 1 << 21

cdef int64_t _now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef int64_t _wake_ns(int nt) noexcept nogil:
    """The fastest of a few empty parallel regions of `nt` threads, each after a sleep that
    outlasts the team's spin (the first, which may start the team, not counted)."""
    cdef int c, r
    cdef int64_t t0, t, best = -1
    cdef int sink[MAX_CHUNKS]
    nt = min(nt, MAX_CHUNKS)
    cdef timespec pause
    pause.tv_sec, pause.tv_nsec = 0, 1000000      # 1 ms: past the team's 10k-round spin
    for r in range(4):
        if r > 0:
            nanosleep(&pause, NULL)
        t0 = _now_ns()
        for c in prange(nt, nogil=True, schedule='static', num_threads=nt):
            sink[c] = c
        t = _now_ns() - t0
        if r > 0 and (best < 0 or t < best):
            best = t
    return best


cdef int64_t parallel_cutoff() noexcept nogil:
    global _cutoff
    cdef const char *env
    cdef int64_t c
    if _num_threads <= 1:
        return PARALLEL_CUTOFF
    if _cutoff == 0:
        if omp_in_parallel():       # a region inside one runs serially: measure later
            return PARALLEL_CUTOFF
        env = getenv("EMBER_CPU_PARALLEL_CUTOFF")
        if env != NULL and env[0] != 0:
            c = strtoll(env, NULL, 10)
        else:
            c = _wake_ns(_num_threads) * ELEMENTS_PER_WAKE_NS
            c = min(c, <int64_t>MAX_CUTOFF)
        _cutoff = max(c, <int64_t>PARALLEL_CUTOFF)
    return _cutoff


def _parallel_cutoff():
    """parallel_cutoff() (for tests and benchmarks)."""
    return parallel_cutoff()


cdef const char *dtype_name(int dtype) noexcept nogil:
    if dtype == EMBER_UINT8:
        return "uint8"
    if dtype == EMBER_INT8:
        return "int8"
    if dtype == EMBER_INT16:
        return "int16"
    if dtype == EMBER_INT32:
        return "int32"
    if dtype == EMBER_INT64:
        return "int64"
    if dtype == EMBER_FLOAT16:
        return "float16"
    if dtype == EMBER_FLOAT32:
        return "float32"
    if dtype == EMBER_FLOAT64:
        return "float64"
    if dtype == EMBER_BOOL:
        return "bool"
    if dtype == EMBER_BFLOAT16:
        return "bfloat16"
    if dtype == EMBER_UINT16:
        return "uint16"
    if dtype == EMBER_UINT32:
        return "uint32"
    if dtype == EMBER_UINT64:
        return "uint64"
    return "unknown dtype"


cdef int set_error(ember_ctx *ctx, int code, const char *op, const char *msg) noexcept nogil:
    if ctx != NULL:
        snprintf(ctx.error, EMBER_ERROR_LEN, "%s: %s", op, msg)
    return code


cdef int error_dtype(ember_ctx *ctx, const char *op, int dtype) noexcept nogil:
    if ctx != NULL:
        snprintf(ctx.error, EMBER_ERROR_LEN, "%s: not implemented for '%s'", op,
                 dtype_name(dtype))
    return EMBER_ERR_NOT_IMPLEMENTED


# -- iteration ----------------------------------------------------------------------------

cdef int iter_init(StridedIter *it, ember_ctx *ctx, const char *op, int nargs,
                   const ember_view **views, bint reorder) noexcept nogil:
    cdef int k, d, j, nd = views[0].ndim
    cdef int64_t s
    if nd < 0 or nd > EMBER_MAX_DIM:
        return set_error(ctx, EMBER_ERR_VALUE, op, "bad number of dimensions")
    it.nargs = nargs
    for k in range(nargs):
        if views[k].ndim != nd:
            return set_error(ctx, EMBER_ERR_VALUE, op, "operand shapes do not match")
        it.itemsize[k] = dtype_itemsize(views[k].dtype)
        if it.itemsize[k] == 0:
            return set_error(ctx, EMBER_ERR_TYPE, op, "unknown dtype code")
        it.data[k] = views[k].data
    for d in range(nd):
        if views[0].sizes[d] < 0:
            return set_error(ctx, EMBER_ERR_VALUE, op, "negative size")
        it.sizes[d] = views[0].sizes[d]
        for k in range(nargs):
            if views[k].sizes[d] != it.sizes[d]:
                return set_error(ctx, EMBER_ERR_VALUE, op, "operand shapes do not match")
            it.strides[k][d] = views[k].strides[d]
    it.ndim = nd
    if reorder:
        # stable insertion sort, out's largest |stride| outermost, so that an out laid out
        # like its inputs (e.g. all transposed) iterates in memory order
        for d in range(1, nd):
            j = d
            while j > 0 and _abs64(it.strides[0][j]) > _abs64(it.strides[0][j - 1]):
                _swap_dims(it, j, j - 1)
                j -= 1
    iter_coalesce(it)
    return EMBER_OK


cdef int rows_init(StridedIter *it, ember_ctx *ctx, const char *op, int nargs,
                   const ember_view **views, int64_t *inner) noexcept nogil:
    cdef int k, d, nd = views[0].ndim, last = views[0].ndim - 1
    if nd < 1 or nd > EMBER_MAX_DIM:
        return set_error(ctx, EMBER_ERR_VALUE, op, "bad number of dimensions")
    for k in range(nargs):
        if views[k].ndim != nd:
            return set_error(ctx, EMBER_ERR_VALUE, op, "bad number of dimensions")
        for d in range(nd):
            if views[k].sizes[d] < 0 or views[k].sizes[d] != views[0].sizes[d]:
                return set_error(ctx, EMBER_ERR_VALUE, op, "operand shapes do not match")
        it.data[k] = views[k].data
        it.itemsize[k] = dtype_itemsize(views[k].dtype)
        inner[k] = views[k].strides[last]
        for d in range(last):
            it.strides[k][d] = views[k].strides[d]
    for d in range(last):
        it.sizes[d] = views[0].sizes[d]
    it.nargs = nargs
    it.ndim = last
    iter_coalesce(it)
    return EMBER_OK


cdef inline int64_t _abs64(int64_t x) noexcept nogil:
    return -x if x < 0 else x


cdef inline void _swap_dims(StridedIter *it, int a, int b) noexcept nogil:
    cdef int k
    cdef int64_t t
    t = it.sizes[a]
    it.sizes[a] = it.sizes[b]
    it.sizes[b] = t
    for k in range(it.nargs):
        t = it.strides[k][a]
        it.strides[k][a] = it.strides[k][b]
        it.strides[k][b] = t


cdef void iter_coalesce(StridedIter *it) noexcept nogil:
    cdef int d, k, m = 0
    cdef bint merge
    it.numel = 1
    for d in range(it.ndim):
        it.numel *= it.sizes[d]
        if it.sizes[d] == 1:
            continue
        # merge dim d into the previous kept dim when every operand steps over the
        # previous one exactly as over d's whole extent
        merge = m > 0
        for k in range(it.nargs):
            merge = merge and it.strides[k][m - 1] == it.strides[k][d] * it.sizes[d]
        if merge:
            it.sizes[m - 1] *= it.sizes[d]
            for k in range(it.nargs):
                it.strides[k][m - 1] = it.strides[k][d]
        else:
            it.sizes[m] = it.sizes[d]
            for k in range(it.nargs):
                it.strides[k][m] = it.strides[k][d]
            m += 1
    if m == 0:
        # a single element: one contiguous run of length 1
        it.sizes[0] = 1
        for k in range(it.nargs):
            it.strides[k][0] = 1
        m = 1
    it.ndim = m


cdef int run_range(const StridedIter *it, char **bases, row_fn fn, void *arg,
                   int64_t start, int64_t end) noexcept nogil:
    cdef int64_t idx[EMBER_MAX_DIM]
    cdef char *ptrs[MAX_OPERANDS]
    cdef int64_t inner[MAX_OPERANDS]
    cdef int64_t step[MAX_OPERANDS]
    cdef int last = it.ndim - 1, d, k, status
    cdef int64_t rem = start, pos = start, n
    if start >= end:
        return EMBER_OK
    for d in range(last, -1, -1):
        if rem == 0:                # skips the divisions for the common start at 0
            idx[d] = 0
        else:
            idx[d] = rem % it.sizes[d]
            rem = rem // it.sizes[d]
    for k in range(it.nargs):
        step[k] = it.itemsize[k]
        inner[k] = it.strides[k][last]
        ptrs[k] = bases[k]
        for d in range(last + 1):
            ptrs[k] += idx[d] * it.strides[k][d] * step[k]
    while True:
        n = min(it.sizes[last] - idx[last], end - pos)
        status = fn(arg, ptrs, inner, n, pos)
        if status != EMBER_OK:
            return status
        pos += n
        if pos >= end:
            return EMBER_OK
        # back to the start of the row, then carry into the outer dims
        for k in range(it.nargs):
            ptrs[k] -= idx[last] * inner[k] * step[k]
        idx[last] = 0
        d = last - 1
        while d >= 0:
            idx[d] += 1
            for k in range(it.nargs):
                ptrs[k] += it.strides[k][d] * step[k]
            if idx[d] < it.sizes[d]:
                break
            for k in range(it.nargs):
                ptrs[k] -= it.strides[k][d] * it.sizes[d] * step[k]
            idx[d] = 0
            d -= 1


cdef void run_items(item_fn fn, void *job, int64_t n, int64_t work) noexcept nogil:
    cdef int nt = _num_threads
    cdef int64_t i
    cdef ember_work_queue q
    if nt > 1 and n > 1 and work >= parallel_cutoff():
        ember_queue_init(&q)
        with parallel(num_threads=nt):
            take_items(fn, job, n, max(1, n // (8 * nt)), &q)
    else:
        for i in range(n):
            fn(job, i)


cdef void take_items(item_fn fn, void *job, int64_t n, int64_t chunk,
                     ember_work_queue *q) noexcept nogil:
    """One thread's share of run_items: chunks from the queue until none is left."""
    cdef int64_t i, start = ember_queue_take(q, chunk)
    while start < n:
        for i in range(start, min(start + chunk, n)):
            fn(job, i)
        start = ember_queue_take(q, chunk)
    ember_queue_finish(q, omp_get_thread_num(), omp_get_num_threads())


ctypedef struct Ranges:             # run_ranges' ranges as run_items' items
    range_fn fn
    void *job
    int64_t chunk, size


cdef void range_item(void *job, int64_t c) noexcept nogil:
    cdef const Ranges *r = <const Ranges *>job
    r.fn(r.job, c * r.chunk, min((c + 1) * r.chunk, r.size))


cdef void run_ranges(range_fn fn, void *job, int64_t size, int64_t work) noexcept nogil:
    # a range a thread, through run_items' queue: thread 0 finishes last (no closing wake),
    # and takes a late teammate's range if it is still there.  More, smaller ranges measured
    # no faster, and slowed column sums (shorter runs per row for the prefetcher)
    cdef int nt = _num_threads
    cdef Ranges r
    if nt <= 1 or size < 2 or work < parallel_cutoff():
        fn(job, 0, size)
        return
    r.fn, r.job, r.size = fn, job, size
    r.chunk = (size + nt - 1) // nt
    if r.chunk > 64:
        r.chunk = (r.chunk + 63) // 64 * 64      # ends on whole cache lines (most dtypes)
    run_items(range_item, &r, (size + r.chunk - 1) // r.chunk, work)


ctypedef struct IterJob:            # iter_run's ranges of linear indices
    const StridedIter *it
    row_fn fn
    void *arg
    int status                      # a failing range's code (any one of them)


cdef void iter_range(void *job, int64_t lo, int64_t hi) noexcept nogil:
    cdef IterJob *j = <IterJob *>job
    cdef int status = run_range(j.it, <char **>j.it.data, j.fn, j.arg, lo, hi)
    if status != EMBER_OK:
        j.status = status


cdef int iter_run(const StridedIter *it, row_fn fn, void *arg, int64_t work) noexcept nogil:
    cdef IterJob job
    if it.numel == 0:
        return EMBER_OK
    job.it, job.fn, job.arg, job.status = it, fn, arg, EMBER_OK
    run_ranges(iter_range, &job, it.numel, work)
    return job.status


# -- converters ---------------------------------------------------------------------------
# Casts follow PyTorch/C: float -> integer truncates toward zero (through int64, so that
# out-of-range values wrap like PyTorch on x86 instead of being undefined for narrow
# types), anything -> bool is != 0, float16/bfloat16 round to nearest even via half.h
# (from double: through float32, as c10::Half does).

cdef inline int64_t _to_i64(ct_t x) noexcept nogil:
    return <int64_t>x


cdef inline uint64_t _to_u64(ct_t x) noexcept nogil:
    # int64 compute holds uint64's bits; a float at or above 2**63 converts unsigned
    if ct_t is int64_t:
        return <uint64_t>x
    if x >= 9223372036854775808.0:
        return <uint64_t>x
    return <uint64_t><int64_t>x


cdef void load(ct_t *dst, const char *src, int dtype, int64_t n,
               int64_t stride) noexcept nogil:
    cdef int64_t i
    if ct_t is float and stride == 1 and dtype == EMBER_FLOAT16:
        ember_f16_to_f32(dst, <const uint16_t *>src, n)
    elif ct_t is float and stride == 1 and dtype == EMBER_BFLOAT16:
        ember_bf16_to_f32(dst, <const uint16_t *>src, n)
    elif stride == 1 and (dtype == EMBER_BOOL or dtype == EMBER_FLOAT32):
        # unit stride, spelt out so that it vectorises (a bool mask times a float tensor)
        if dtype == EMBER_BOOL:
            for i in range(n):
                dst[i] = <ct_t>((<const uint8_t *>src)[i] != 0)
        else:
            for i in range(n):
                dst[i] = <ct_t>(<const float *>src)[i]
    elif dtype == EMBER_FLOAT32:
        for i in range(n):
            dst[i] = <ct_t>(<const float *>src)[i * stride]
    elif dtype == EMBER_FLOAT64:
        for i in range(n):
            dst[i] = <ct_t>(<const double *>src)[i * stride]
    elif dtype == EMBER_INT64:
        for i in range(n):
            dst[i] = <ct_t>(<const int64_t *>src)[i * stride]
    elif dtype == EMBER_INT32:
        for i in range(n):
            dst[i] = <ct_t>(<const int32_t *>src)[i * stride]
    elif dtype == EMBER_INT16:
        for i in range(n):
            dst[i] = <ct_t>(<const int16_t *>src)[i * stride]
    elif dtype == EMBER_INT8:
        for i in range(n):
            dst[i] = <ct_t>(<const int8_t *>src)[i * stride]
    elif dtype == EMBER_UINT8:
        for i in range(n):
            dst[i] = <ct_t>(<const uint8_t *>src)[i * stride]
    elif dtype == EMBER_UINT16:
        for i in range(n):
            dst[i] = <ct_t>(<const uint16_t *>src)[i * stride]
    elif dtype == EMBER_UINT32:
        for i in range(n):
            dst[i] = <ct_t>(<const uint32_t *>src)[i * stride]
    elif dtype == EMBER_UINT64:
        # into int64 the bits wrap (the integer ops on these dtypes are bit-exact that way);
        # into a float, the unsigned value
        for i in range(n):
            dst[i] = <ct_t>(<const uint64_t *>src)[i * stride]
    elif dtype == EMBER_BOOL:
        for i in range(n):
            dst[i] = <ct_t>((<const uint8_t *>src)[i * stride] != 0)
    elif dtype == EMBER_FLOAT16:
        for i in range(n):
            dst[i] = <ct_t>ember_half_to_float((<const uint16_t *>src)[i * stride])
    elif dtype == EMBER_BFLOAT16:
        for i in range(n):
            dst[i] = <ct_t>ember_bf16_to_float((<const uint16_t *>src)[i * stride])


cdef void store(char *dst, int dtype, const ct_t *src, int64_t n,
                int64_t stride) noexcept nogil:
    cdef int64_t i
    if ct_t is float and stride == 1 and dtype == EMBER_FLOAT16:
        ember_f32_to_f16(<uint16_t *>dst, src, n)
    elif ct_t is float and stride == 1 and dtype == EMBER_BFLOAT16:
        ember_f32_to_bf16(<uint16_t *>dst, src, n)
    elif dtype == EMBER_FLOAT32 and stride == 1:     # spelt out so that it vectorises
        for i in range(n):
            (<float *>dst)[i] = <float>src[i]
    elif dtype == EMBER_FLOAT32:
        for i in range(n):
            (<float *>dst)[i * stride] = <float>src[i]
    elif dtype == EMBER_FLOAT64:
        for i in range(n):
            (<double *>dst)[i * stride] = <double>src[i]
    elif dtype == EMBER_INT64:
        for i in range(n):
            (<int64_t *>dst)[i * stride] = _to_i64(src[i])
    elif dtype == EMBER_INT32:
        for i in range(n):
            (<int32_t *>dst)[i * stride] = <int32_t>_to_i64(src[i])
    elif dtype == EMBER_INT16:
        for i in range(n):
            (<int16_t *>dst)[i * stride] = <int16_t>_to_i64(src[i])
    elif dtype == EMBER_INT8:
        for i in range(n):
            (<int8_t *>dst)[i * stride] = <int8_t>_to_i64(src[i])
    elif dtype == EMBER_UINT8:
        for i in range(n):
            (<uint8_t *>dst)[i * stride] = <uint8_t>_to_i64(src[i])
    elif dtype == EMBER_UINT16:
        for i in range(n):
            (<uint16_t *>dst)[i * stride] = <uint16_t>_to_i64(src[i])
    elif dtype == EMBER_UINT32:
        for i in range(n):
            (<uint32_t *>dst)[i * stride] = <uint32_t>_to_i64(src[i])
    elif dtype == EMBER_UINT64:
        for i in range(n):
            (<uint64_t *>dst)[i * stride] = _to_u64(src[i])
    elif dtype == EMBER_BOOL:
        for i in range(n):
            (<uint8_t *>dst)[i * stride] = src[i] != 0
    elif dtype == EMBER_FLOAT16:
        for i in range(n):
            (<uint16_t *>dst)[i * stride] = ember_float_to_half(<float>src[i])
    elif dtype == EMBER_BFLOAT16:
        for i in range(n):
            (<uint16_t *>dst)[i * stride] = ember_float_to_bf16(<float>src[i])


cdef void load_ct(int ct, void *dst, const char *src, int dtype, int64_t n,
                  int64_t stride) noexcept nogil:
    if ct == CT_F32:
        load(<float *>dst, src, dtype, n, stride)
    elif ct == CT_F64:
        load(<double *>dst, src, dtype, n, stride)
    else:
        load(<int64_t *>dst, src, dtype, n, stride)


cdef void store_ct(int ct, char *dst, int dtype, const void *src, int64_t n,
                   int64_t stride) noexcept nogil:
    if ct == CT_F32:
        store(dst, dtype, <const float *>src, n, stride)
    elif ct == CT_F64:
        store(dst, dtype, <const double *>src, n, stride)
    else:
        store(dst, dtype, <const int64_t *>src, n, stride)
