# The kernel table: the CPU plugin's whole contract with the core, handed over as one
# PyCapsule named "ember.kernel_table" (kernel_table()).  The core calls the function
# pointers directly, possibly without the GIL.
#
# Also here: the matmul entry (integer matmul in plain loops; floating matmul in _blas,
# imported at the first call so that SciPy loads only when used), thread control, and
# test twins that call each table entry on NumPy arrays.
cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t

from ember_cpu._abi cimport (
    ember_ctx, ember_view, ember_kernel_table, matmul_fn, conv_fn, ember_conv_params,
    ember_pool_params, EMBER_ABI_VERSION, EMBER_ABI_MINOR, EMBER_MAX_DIM,
    EMBER_KERNEL_TABLE_CAPSULE, EMBER_OK, EMBER_ERR_RUNTIME,
    EMBER_ERR_VALUE, EMBER_ERR_TYPE, EMBER_BOOL, EMBER_UINT8, EMBER_INT8, EMBER_INT16,
    EMBER_UINT16, EMBER_UINT32, EMBER_UINT64,
    EMBER_INT32, EMBER_INT64, EMBER_FLOAT16, EMBER_FLOAT32, EMBER_FLOAT64,
)
from ember_cpu._activation cimport activation_kernel
from ember_cpu._ternary cimport ternary_kernel
from ember_cpu._optim_steps cimport adam_kernel, sgd_kernel
from ember_cpu._copy cimport (
    mem_alloc, mem_free, copy_kernel, fill_kernel, to_host_kernel, from_host_kernel,
)
from ember_cpu._elementwise cimport unary_kernel, binary_kernel, where_kernel
from ember_cpu._index cimport index_kernel, search_kernel
from ember_cpu._nll cimport nll_kernel
from ember_cpu._norm cimport norm_kernel
from ember_cpu._openmp_helpers cimport (
    EMBER_OPENMP_ENABLED, omp_get_num_threads, omp_get_thread_num,
)
from ember_cpu._pool cimport pool_kernel
from ember_cpu._random cimport random_kernel
from ember_cpu._reduce cimport reduce_kernel
from ember_cpu._scan cimport scan_kernel
from ember_cpu._sort cimport sort_kernel
from ember_cpu._softmax cimport softmax_kernel
from ember_cpu._strided cimport (
    BUF_LEN, MAX_CHUNKS, PARALLEL_CUTOFF, dtype_itemsize, is_floating, load, store,
    num_threads, set_num_threads, set_error, error_dtype,
)

cnp.import_array()


# -- matmul ---------------------------------------------------------------------------------

ctypedef int (*rnn_fn)(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                       int32_t reverse) noexcept nogil

cdef matmul_fn _blas_matmul = NULL
cdef conv_fn _blas_conv = NULL
cdef rnn_fn _blas_rnn = NULL


# the BLAS-backed modules (_blas: matmul, _conv: convolution, _rnn: LSTM layers), at the
# first call of any
cdef int load_blas(ember_ctx *ctx) noexcept nogil:
    global _blas_matmul, _blas_conv, _blas_rnn
    with gil:
        try:
            from ember_cpu import _scipy_blas
            preloaded = _scipy_blas.preload()
            try:
                from ember_cpu import _blas, _conv, _rnn, _threads
            finally:
                _scipy_blas.release(preloaded)
            _threads.blas_loaded()
            _blas_matmul = <matmul_fn>PyCapsule_GetPointer(_blas.matmul_capsule,
                                                           "ember_cpu._blas.matmul")
            _blas_conv = <conv_fn>PyCapsule_GetPointer(_conv.conv_capsule,
                                                       "ember_cpu._conv.conv")
            _blas_rnn = <rnn_fn>PyCapsule_GetPointer(_rnn.rnn_capsule, "ember_cpu._rnn.rnn")
        except BaseException as exc:
            msg = f"could not load BLAS: {exc!r}".encode("utf-8", "replace")
            return set_error(ctx, EMBER_ERR_RUNTIME, "matmul", msg)
    return EMBER_OK


ctypedef struct IntMatmul:
    const ember_view *out
    const ember_view *a
    const ember_view *b
    int64_t size


# one output row out[bi, mi, :], accumulated in int64 (wrapping) over k, a tile of
# columns at a time
cdef void int_matmul_row(const IntMatmul *c, int64_t row) noexcept nogil:
    cdef int64_t acc[BUF_LEN]
    cdef int64_t brow[BUF_LEN]
    cdef int64_t av, k, j, w
    cdef const ember_view *a = c.a
    cdef const ember_view *b = c.b
    cdef const ember_view *o = c.out
    cdef int64_t M = o.sizes[1], N = o.sizes[2], K = a.sizes[2], size = c.size
    cdef int64_t bi = row // M, mi = row % M
    cdef char *pa = a.data + (bi * a.strides[0] + mi * a.strides[1]) * size
    cdef char *pb = b.data + bi * b.strides[0] * size
    cdef char *po = o.data + (bi * o.strides[0] + mi * o.strides[1]) * size
    cdef int64_t n0 = 0
    while n0 < N:
        w = min(<int64_t>BUF_LEN, N - n0)
        for j in range(w):
            acc[j] = 0
        for k in range(K):
            load(&av, pa + k * a.strides[2] * size, a.dtype, 1, 1)
            load(brow, pb + (k * b.strides[1] + n0 * b.strides[2]) * size, b.dtype, w,
                 b.strides[2])
            for j in range(w):
                acc[j] = <int64_t>(<uint64_t>acc[j] + <uint64_t>av * <uint64_t>brow[j])
        store(po + n0 * o.strides[2] * size, o.dtype, acc, w, o.strides[2])
        n0 += w


cdef int int_matmul(const ember_view *out, const ember_view *a,
                    const ember_view *b) noexcept nogil:
    cdef IntMatmul c
    cdef int64_t rows = out.sizes[0] * out.sizes[1], r
    cdef int nt = num_threads()
    c.out = out
    c.a = a
    c.b = b
    c.size = dtype_itemsize(out.dtype)
    if rows * out.sizes[2] * a.sizes[2] >= PARALLEL_CUTOFF and nt > 1:
        for r in prange(rows, nogil=True, schedule='static', num_threads=nt):
            int_matmul_row(&c, r)
    else:
        for r in range(rows):
            int_matmul_row(&c, r)
    return EMBER_OK


cdef int matmul_kernel(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                       const ember_view *b) noexcept nogil:
    cdef int64_t zero = 0
    cdef int status, d
    if out.ndim != 3 or a.ndim != 3 or b.ndim != 3:
        return set_error(ctx, EMBER_ERR_VALUE, "matmul", "expects 3-d views")
    for d in range(3):
        if out.sizes[d] < 0 or a.sizes[d] < 0 or b.sizes[d] < 0:
            return set_error(ctx, EMBER_ERR_VALUE, "matmul", "negative size")
    if (a.sizes[0] != out.sizes[0] or b.sizes[0] != out.sizes[0]
            or a.sizes[1] != out.sizes[1] or b.sizes[2] != out.sizes[2]
            or b.sizes[1] != a.sizes[2]):
        return set_error(ctx, EMBER_ERR_VALUE, "matmul", "shapes do not match")
    if a.dtype != out.dtype or b.dtype != out.dtype:
        return set_error(ctx, EMBER_ERR_TYPE, "matmul", "operands must have out's dtype")
    if dtype_itemsize(out.dtype) == 0:
        return set_error(ctx, EMBER_ERR_TYPE, "matmul", "unknown dtype code")
    if out.dtype == EMBER_BOOL:
        return error_dtype(ctx, "matmul", out.dtype)
    if out.sizes[0] == 0 or out.sizes[1] == 0 or out.sizes[2] == 0:
        return EMBER_OK
    if a.sizes[2] == 0:
        return fill_kernel(ctx, out, &zero)     # all-zero bytes are 0 in every dtype
    if not is_floating(out.dtype):
        return int_matmul(out, a, b)
    if _blas_matmul == NULL:
        status = load_blas(ctx)
        if status != EMBER_OK:
            return status
    return _blas_matmul(ctx, out, a, b)


cdef int conv_kernel(ember_ctx *ctx, int32_t op, const ember_conv_params *p,
                     const ember_view *out, const ember_view *a, const ember_view *b,
                     const ember_view *c) noexcept nogil:
    cdef int status
    if _blas_conv == NULL:
        status = load_blas(ctx)
        if status != EMBER_OK:
            return status
    return _blas_conv(ctx, op, p, out, a, b, c)


cdef int rnn_kernel(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                    int32_t reverse) noexcept nogil:
    cdef int status
    if _blas_rnn == NULL:
        status = load_blas(ctx)
        if status != EMBER_OK:
            return status
    return _blas_rnn(ctx, op, v, reverse)


# -- the table ------------------------------------------------------------------------------

cdef ember_kernel_table TABLE
TABLE.abi_version = EMBER_ABI_VERSION
TABLE.abi_minor = EMBER_ABI_MINOR
TABLE.size = sizeof(ember_kernel_table)
TABLE.alloc = mem_alloc
TABLE.free = mem_free
TABLE.copy = copy_kernel
TABLE.fill = fill_kernel
TABLE.to_host = to_host_kernel
TABLE.from_host = from_host_kernel
TABLE.unary = unary_kernel
TABLE.binary = binary_kernel
TABLE.reduce = reduce_kernel
TABLE.matmul = matmul_kernel
TABLE.random = random_kernel
TABLE.where = where_kernel
TABLE.scan = scan_kernel
TABLE.index = index_kernel
TABLE.search = search_kernel
TABLE.softmax = softmax_kernel
TABLE.norm = norm_kernel
TABLE.nll = nll_kernel
TABLE.conv = conv_kernel
TABLE.pool = pool_kernel
TABLE.adam = adam_kernel
TABLE.sort = sort_kernel
TABLE.rnn = rnn_kernel
TABLE.sgd = sgd_kernel
TABLE.activation = activation_kernel
TABLE.ternary = ternary_kernel

# the table is a module global: it lives as long as the process keeps this module
_capsule = PyCapsule_New(&TABLE, EMBER_KERNEL_TABLE_CAPSULE, NULL)


def kernel_table():
    """The PyCapsule "ember.kernel_table" holding this plugin's ember_kernel_table."""
    return _capsule


# -- threads --------------------------------------------------------------------------------

def _set_num_threads(int n):
    """Team size of every parallel region of the kernels (and omp_set_num_threads)."""
    if n < 1:
        raise ValueError(f"number of threads must be positive, got {n}")
    set_num_threads(n)


def _get_num_threads():
    return num_threads()


def _openmp_enabled():
    return bool(EMBER_OPENMP_ENABLED)


def _team_size():
    """(team size, distinct thread ids) seen inside one parallel region of the kernels."""
    cdef int n = min(num_threads(), MAX_CHUNKS), i, team = 1, distinct = 0
    cdef int ids[MAX_CHUNKS]
    cdef bint seen[MAX_CHUNKS]
    for i in prange(n, nogil=True, schedule='static', num_threads=n):
        ids[i] = omp_get_thread_num()
        team = omp_get_num_threads()
    for i in range(n):
        seen[i] = False
    for i in range(n):
        if not seen[ids[i]]:
            seen[ids[i]] = True
            distinct += 1
    return team, distinct


# -- test twins: each table entry on NumPy arrays ------------------------------------------

_ERRORS = {1: RuntimeError, 2: IndexError, 3: ValueError, 4: TypeError,
           5: NotImplementedError, 6: MemoryError}


cdef int _numpy_code(cnp.ndarray arr) except -1:
    cdef int t = cnp.PyArray_TYPE(arr)
    cdef int size = cnp.PyArray_ITEMSIZE(arr)
    if t == cnp.NPY_BOOL:
        return EMBER_BOOL
    if t == cnp.NPY_UINT8:
        return EMBER_UINT8
    if t == cnp.NPY_INT8:
        return EMBER_INT8
    if t == cnp.NPY_INT16:
        return EMBER_INT16
    if t == cnp.NPY_UINT16:
        return EMBER_UINT16
    if t == cnp.NPY_UINT or t == cnp.NPY_ULONG or t == cnp.NPY_ULONGLONG:
        return EMBER_UINT64 if size == 8 else EMBER_UINT32
    if t == cnp.NPY_INT or t == cnp.NPY_LONG or t == cnp.NPY_LONGLONG:
        return EMBER_INT64 if size == 8 else EMBER_INT32
    if t == cnp.NPY_FLOAT16:
        return EMBER_FLOAT16
    if t == cnp.NPY_FLOAT32:
        return EMBER_FLOAT32
    if t == cnp.NPY_FLOAT64:
        return EMBER_FLOAT64
    raise TypeError(f"no ember dtype for {arr.dtype} (bfloat16: pass uint16 and dtype=15)")


# `code` >= 0 overrides the dtype NumPy reports (bfloat16 travels as uint16)
cdef int _view(ember_view *v, cnp.ndarray arr, int code, bint writable) except -1:
    cdef int d, nd = cnp.PyArray_NDIM(arr)
    cdef int64_t size = cnp.PyArray_ITEMSIZE(arr), s
    if nd > EMBER_MAX_DIM:
        raise ValueError(f"at most {EMBER_MAX_DIM} dims")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError("out is read-only")
    v.dtype = _numpy_code(arr) if code < 0 else code
    if dtype_itemsize(v.dtype) != size:
        raise TypeError(f"dtype code {v.dtype} does not match itemsize {size}")
    v.data = <char *>cnp.PyArray_DATA(arr)
    v.ndim = nd
    v.flags = 0
    v.reserved = 0
    for d in range(nd):
        s = cnp.PyArray_STRIDES(arr)[d]
        if s % size:
            raise ValueError("strides must be whole elements")
        v.sizes[d] = cnp.PyArray_DIMS(arr)[d]
        v.strides[d] = s // size
    return 0


cdef inline void _ctx(ember_ctx *ctx) noexcept nogil:
    ctx.deterministic = 0
    ctx.device = 0
    ctx.matmul_precision = 0
    ctx.error[0] = 0


cdef int _check(int rc, ember_ctx *ctx) except -1:
    if rc != EMBER_OK:
        raise _ERRORS.get(rc, RuntimeError)((<bytes>ctx.error).decode("utf-8", "replace"))
    return 0


# small calls keep the GIL (releasing it costs more than a 10-element kernel)
cdef inline bint _big(cnp.ndarray out):
    return cnp.PyArray_SIZE(out) >= PARALLEL_CUTOFF


def _test_unary(int op, cnp.ndarray out, cnp.ndarray a, int dtype=-1):
    cdef ember_ctx ctx
    cdef ember_view vo, va
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    _view(&va, a, dtype, False)
    if _big(out):
        with nogil:
            rc = TABLE.unary(&ctx, op, &vo, &va)
    else:
        rc = TABLE.unary(&ctx, op, &vo, &va)
    _check(rc, &ctx)


def _test_binary(int op, cnp.ndarray out, cnp.ndarray a, cnp.ndarray b, int dtype=-1,
                 int out_dtype=-1):
    """`dtype`/`out_dtype`: the operands' dtype codes (-1: from NumPy); out_dtype
    defaults to `dtype` (it differs for the predicates, whose out is bool)."""
    cdef ember_ctx ctx
    cdef ember_view vo, va, vb
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype if out_dtype < 0 else out_dtype, True)
    _view(&va, a, dtype, False)
    _view(&vb, b, dtype, False)
    if _big(out):
        with nogil:
            rc = TABLE.binary(&ctx, op, &vo, &va, &vb)
    else:
        rc = TABLE.binary(&ctx, op, &vo, &va, &vb)
    _check(rc, &ctx)


def _test_where(cnp.ndarray out, cnp.ndarray cond, cnp.ndarray a, cnp.ndarray b,
                int dtype=-1, int cond_dtype=-1):
    """out = cond ? a : b; `dtype`: the code of out, a and b (-1: from NumPy),
    `cond_dtype`: cond's (-1: from NumPy, i.e. bool for a bool array)."""
    cdef ember_ctx ctx
    cdef ember_view vo, vc, va, vb
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    _view(&vc, cond, cond_dtype, False)
    _view(&va, a, dtype, False)
    _view(&vb, b, dtype, False)
    if _big(out):
        with nogil:
            rc = TABLE.where(&ctx, &vo, &vc, &va, &vb)
    else:
        rc = TABLE.where(&ctx, &vo, &vc, &va, &vb)
    _check(rc, &ctx)


def _test_reduce(int op, cnp.ndarray out, cnp.ndarray a, int nreduce, int dtype=-1,
                 int out_dtype=-1):
    """`dtype`: a's code (-1: from NumPy); `out_dtype`: out's, defaulting to `dtype`
    (argmax/argmin: pass 4, int64)."""
    cdef ember_ctx ctx
    cdef ember_view vo, va
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype if out_dtype < 0 else out_dtype, True)
    _view(&va, a, dtype, False)
    with nogil:
        rc = TABLE.reduce(&ctx, op, &vo, &va, nreduce)
    _check(rc, &ctx)


def _test_scan(int op, cnp.ndarray out, indices, cnp.ndarray a, int dtype=-1):
    """Scan along a's last dim; `indices`: an int64 array of a's shape (cummax/cummin)
    or None (passed as NULL); `dtype`: the code of out and a (-1: from NumPy)."""
    cdef ember_ctx ctx
    cdef ember_view vo, vi, va
    cdef const ember_view *pi = NULL
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    _view(&va, a, dtype, False)
    if indices is not None:
        _view(&vi, <cnp.ndarray?>indices, -1, True)
        pi = &vi
    with nogil:
        rc = TABLE.scan(&ctx, op, &vo, pi, &va)
    _check(rc, &ctx)


def _test_index(int op, cnp.ndarray out, cnp.ndarray a, cnp.ndarray index, int dim,
                int dtype=-1):
    """The `index` entry (gather/scatter along `dim`, out written in place); `index` is an
    int64 array; `dtype`: the code of out and a (-1: from NumPy)."""
    cdef ember_ctx ctx
    cdef ember_view vo, va, vi
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    _view(&va, a, dtype, False)
    _view(&vi, index, -1, False)
    with nogil:
        rc = TABLE.index(&ctx, op, &vo, &va, &vi, dim)
    _check(rc, &ctx)


def _test_search(int op, cnp.ndarray out, cnp.ndarray sorted_, cnp.ndarray values,
                 int dtype=-1):
    """The `search` entry along the last dim; out is int64 or int32."""
    cdef ember_ctx ctx
    cdef ember_view vo, vs, vv
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, -1, True)
    _view(&vs, sorted_, dtype, False)
    _view(&vv, values, dtype, False)
    with nogil:
        rc = TABLE.search(&ctx, op, &vo, &vs, &vv)
    _check(rc, &ctx)


def _test_copy(cnp.ndarray out, cnp.ndarray a, int out_dtype=-1, int a_dtype=-1):
    cdef ember_ctx ctx
    cdef ember_view vo, va
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, out_dtype, True)
    _view(&va, a, a_dtype, False)
    with nogil:
        rc = TABLE.copy(&ctx, &vo, &va)
    _check(rc, &ctx)


def _test_fill(cnp.ndarray out, cnp.ndarray value, int dtype=-1):
    """out[...] = value, a one-element array of out's dtype."""
    cdef ember_ctx ctx
    cdef ember_view vo
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    if cnp.PyArray_SIZE(value) != 1 or cnp.PyArray_ITEMSIZE(value) != cnp.PyArray_ITEMSIZE(out):
        raise ValueError("value must be one element of out's dtype")
    rc = TABLE.fill(&ctx, &vo, cnp.PyArray_DATA(value))
    _check(rc, &ctx)


def _test_matmul(cnp.ndarray out, cnp.ndarray a, cnp.ndarray b, int dtype=-1):
    cdef ember_ctx ctx
    cdef ember_view vo, va, vb
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    _view(&va, a, dtype, False)
    _view(&vb, b, dtype, False)
    with nogil:     # as the core may call it: the first call imports _blas under `with gil`
        rc = TABLE.matmul(&ctx, &vo, &va, &vb)
    _check(rc, &ctx)


def _test_random(int op, cnp.ndarray out, uint64_t seed, uint64_t offset, double p0,
                 double p1, int dtype=-1):
    cdef ember_ctx ctx
    cdef ember_view vo
    cdef int rc
    _ctx(&ctx)
    _view(&vo, out, dtype, True)
    with nogil:
        rc = TABLE.random(&ctx, op, &vo, seed, offset, p0, p1)
    _check(rc, &ctx)


def _test_alloc(int64_t nbytes):
    """Address of a fresh allocation (0 on failure); release it with _test_free."""
    cdef ember_ctx ctx
    ctx.device = 0
    ctx.error[0] = 0
    return <uintptr_t>TABLE.alloc(&ctx, nbytes)


def _test_free(uintptr_t address):
    TABLE.free(0, <void *>address)


def _test_softmax(int op, cnp.ndarray out, cnp.ndarray a, cnp.ndarray b=None, int dtype=-1):
    """The softmax entry along the last dim; `b`: the output, for the backward ops."""
    cdef ember_ctx ctx
    cdef ember_view v[3]
    cdef int rc, k
    _ctx(&ctx)
    for k, arr in enumerate((out, a, b)):
        if arr is not None:
            _view(&v[k], arr, dtype, k == 0)
    with nogil:
        rc = TABLE.softmax(&ctx, op, &v[0], &v[1], &v[2] if b is not None else NULL)
    _check(rc, &ctx)


def _test_fused(str entry, int op, list arrays, double param=0.0):
    """The optional `norm` (param: eps) or `nll` (param: ignore_index) entry on a list of
    NumPy arrays, None for a NULL slot, in the op's slot order (abi.h)."""
    cdef ember_ctx ctx
    cdef ember_view v[8]
    cdef const ember_view *ptrs[8]
    cdef int rc, k
    cdef int64_t ignore = <int64_t>param
    cdef bint norm = entry == "norm"
    if len(arrays) > 8 or entry not in ("norm", "nll"):
        raise ValueError("at most 8 arrays; entry 'norm' or 'nll'")
    _ctx(&ctx)
    for k in range(8):
        ptrs[k] = NULL
        if k < len(arrays) and arrays[k] is not None:
            _view(&v[k], arrays[k], -1, True)
            ptrs[k] = &v[k]
    with nogil:
        if norm:
            rc = TABLE.norm(&ctx, op, ptrs, param)
        else:
            rc = TABLE.nll(&ctx, op, ptrs, ignore)
    _check(rc, &ctx)


def _test_transfer(cnp.ndarray dst, cnp.ndarray src, bint to_host=True):
    """memcpy of src.nbytes through to_host (or from_host)."""
    cdef ember_ctx ctx
    cdef int rc
    cdef int64_t nbytes = cnp.PyArray_NBYTES(src)
    _ctx(&ctx)
    if cnp.PyArray_NBYTES(dst) < nbytes or not cnp.PyArray_ISCONTIGUOUS(dst) \
            or not cnp.PyArray_ISCONTIGUOUS(src):
        raise ValueError("contiguous arrays, dst at least as large as src")
    if to_host:
        rc = TABLE.to_host(&ctx, cnp.PyArray_DATA(dst), cnp.PyArray_DATA(src), nbytes)
    else:
        rc = TABLE.from_host(&ctx, cnp.PyArray_DATA(dst), cnp.PyArray_DATA(src), nbytes)
    _check(rc, &ctx)


def _bench_binary(int op, cnp.ndarray out, cnp.ndarray a, cnp.ndarray b, int64_t reps):
    """Seconds per call of the table's binary entry, called `reps` times from C."""
    from time import perf_counter
    cdef ember_ctx ctx
    cdef ember_view vo, va, vb
    cdef int64_t i
    cdef int rc = EMBER_OK
    _ctx(&ctx)
    _view(&vo, out, -1, True)
    _view(&va, a, -1, False)
    _view(&vb, b, -1, False)
    t0 = perf_counter()
    with nogil:
        for i in range(reps):
            rc |= TABLE.binary(&ctx, op, &vo, &va, &vb)
    t1 = perf_counter()
    _check(rc, &ctx)
    return (t1 - t0) / reps
