# The `sort` table entry (ABI 6.1): every row of `a` along its last dim sorted stably, the
# values and their int64 positions written out.  Keys and the radix sort are
# _sort_rows.h's; threads share whole rows, so results never depend on the thread count.
# Complex rows and rows of 2^32 elements or more answer "not implemented" (the core then
# sorts on the host).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free

from ember_cpu._abi cimport (
    ember_ctx, ember_view, EMBER_OK, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_TYPE,
    EMBER_ERR_MEMORY, EMBER_INT64, EMBER_INT32, EMBER_INT16, EMBER_INT8, EMBER_UINT8,
    EMBER_BOOL, EMBER_FLOAT16, EMBER_BFLOAT16, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_UINT16,
    EMBER_UINT32, EMBER_UINT64,
)
from ember_cpu._strided cimport StridedIter, dtype_itemsize, iter_run, rows_init, set_error

cdef extern from "_sort_rows.h":
    uint32_t ember_key_f32(uint32_t u) noexcept nogil
    uint64_t ember_key_f64(uint64_t u) noexcept nogil
    uint32_t ember_key_h16(uint32_t u, uint32_t exp) noexcept nogil
    int ember_radix_u32(uint32_t *k, uint32_t *p, uint32_t *k2, uint32_t *p2, int64_t n,
                        int nbytes) noexcept nogil
    int ember_radix_u64(uint64_t *k, uint32_t *p, uint64_t *k2, uint32_t *p2, int64_t n,
                        int nbytes) noexcept nogil


ctypedef struct SortPlan:
    int dtype
    int itemsize        # of an element, and of its key (1, 2, 4 or 8 bytes)
    uint64_t flip       # XORed into every key: descending order is the keys' complement
    int64_t n           # row length
    int64_t sv, si, sa  # strides along the row: values, indices, a
    StridedIter rows    # (values, indices, a) over the leading dims


cdef inline int key_bytes(int dtype) noexcept nogil:
    """The key width of a sortable dtype, 0 for the others."""
    if dtype == EMBER_FLOAT32 or dtype == EMBER_INT32 or dtype == EMBER_UINT32:
        return 4
    if dtype == EMBER_FLOAT64 or dtype == EMBER_INT64 or dtype == EMBER_UINT64:
        return 8
    if dtype == EMBER_FLOAT16 or dtype == EMBER_BFLOAT16 or dtype == EMBER_INT16 or \
            dtype == EMBER_UINT16:
        return 2
    if dtype == EMBER_INT8 or dtype == EMBER_UINT8 or dtype == EMBER_BOOL:
        return 1
    return 0


cdef void keys32(const SortPlan *p, const char *a, uint32_t *k) noexcept nogil:
    """The keys of a row of an up to 32-bit dtype (one loop per dtype: it vectorises)."""
    cdef int64_t i, n = p.n, s = p.sa
    cdef uint32_t f = <uint32_t>p.flip
    cdef int dt = p.dtype
    if dt == EMBER_FLOAT32:
        for i in range(n):
            k[i] = ember_key_f32((<const uint32_t *>a)[i * s]) ^ f
    elif dt == EMBER_INT32:
        for i in range(n):
            k[i] = ((<const uint32_t *>a)[i * s] ^ 0x80000000u) ^ f
    elif dt == EMBER_UINT32:
        for i in range(n):
            k[i] = (<const uint32_t *>a)[i * s] ^ f
    elif dt == EMBER_FLOAT16 or dt == EMBER_BFLOAT16:
        for i in range(n):
            k[i] = ember_key_h16((<const uint16_t *>a)[i * s],
                                 0x7c00u if dt == EMBER_FLOAT16 else 0x7f80u) ^ f
    elif dt == EMBER_INT16:
        for i in range(n):
            k[i] = ((<const uint16_t *>a)[i * s] ^ 0x8000u) ^ f
    elif dt == EMBER_UINT16:
        for i in range(n):
            k[i] = (<const uint16_t *>a)[i * s] ^ f
    elif dt == EMBER_INT8:
        for i in range(n):
            k[i] = ((<const uint8_t *>a)[i * s] ^ 0x80u) ^ f
    else:                                               # uint8, bool
        for i in range(n):
            k[i] = (<const uint8_t *>a)[i * s] ^ f


cdef void keys64(const SortPlan *p, const char *a, uint64_t *k) noexcept nogil:
    cdef int64_t i, n = p.n, s = p.sa
    cdef uint64_t f = p.flip
    if p.dtype == EMBER_FLOAT64:
        for i in range(n):
            k[i] = ember_key_f64((<const uint64_t *>a)[i * s]) ^ f
    elif p.dtype == EMBER_INT64:
        for i in range(n):
            k[i] = ((<const uint64_t *>a)[i * s] ^ 0x8000000000000000ull) ^ f
    else:
        for i in range(n):
            k[i] = (<const uint64_t *>a)[i * s] ^ f


cdef void write_row(const SortPlan *p, char *v, int64_t *ix, const char *a,
                    const uint32_t *pos) noexcept nogil:
    """values[i] = a[pos[i]] (the element's own bits: -0 and NaN payloads kept),
    indices[i] = pos[i]."""
    cdef int64_t i, n = p.n, sv = p.sv, si = p.si, sa = p.sa
    for i in range(n):
        ix[i * si] = pos[i]
    if p.itemsize == 4:
        for i in range(n):
            (<uint32_t *>v)[i * sv] = (<const uint32_t *>a)[pos[i] * sa]
    elif p.itemsize == 8:
        for i in range(n):
            (<uint64_t *>v)[i * sv] = (<const uint64_t *>a)[pos[i] * sa]
    elif p.itemsize == 2:
        for i in range(n):
            (<uint16_t *>v)[i * sv] = (<const uint16_t *>a)[pos[i] * sa]
    else:
        for i in range(n):
            (<uint8_t *>v)[i * sv] = (<const uint8_t *>a)[pos[i] * sa]


cdef int sort_rows(void *arg, char **ptrs, const int64_t *st, int64_t rows,
                   int64_t index) noexcept nogil:
    cdef const SortPlan *p = <const SortPlan *>arg
    cdef int64_t r, i, n = p.n
    cdef int isz = p.itemsize, kw = 8 if isz == 8 else 4
    cdef int swapped
    # two key arrays and two position arrays, reused by every row of the run
    cdef char *buf = <char *>malloc(<size_t>n * (2 * kw + 8))
    if buf == NULL:
        return EMBER_ERR_MEMORY
    cdef char *k = buf
    cdef char *k2 = buf + n * kw
    cdef uint32_t *pos = <uint32_t *>(buf + 2 * n * kw)
    cdef uint32_t *pos2 = pos + n
    for r in range(rows):
        for i in range(n):
            pos[i] = <uint32_t>i
        if isz == 8:
            keys64(p, ptrs[2] + r * st[2] * isz, <uint64_t *>k)
            swapped = ember_radix_u64(<uint64_t *>k, pos, <uint64_t *>k2, pos2, n, 8)
        else:
            keys32(p, ptrs[2] + r * st[2] * isz, <uint32_t *>k)
            swapped = ember_radix_u32(<uint32_t *>k, pos, <uint32_t *>k2, pos2, n, isz)
        write_row(p, ptrs[0] + r * st[0] * isz, <int64_t *>(ptrs[1] + r * st[1] * 8),
                  ptrs[2] + r * st[2] * isz, pos2 if swapped else pos)
    free(buf)
    return EMBER_OK


cdef int sort_kernel(ember_ctx *ctx, const ember_view *values, const ember_view *indices,
                     const ember_view *a, int32_t descending) noexcept nogil:
    cdef SortPlan p
    cdef const ember_view *views[3]
    cdef int64_t inner[3]
    cdef int status, nbytes = key_bytes(a.dtype)
    if nbytes == 0 or a.sizes[a.ndim - 1] >= (<int64_t>1 << 32):
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "sort", "dtype or row length")
    if values.dtype != a.dtype or indices.dtype != EMBER_INT64:
        return set_error(ctx, EMBER_ERR_TYPE, "sort", "values need a's dtype, indices int64")
    views[0], views[1], views[2] = values, indices, a
    status = rows_init(&p.rows, ctx, "sort", 3, views, inner)
    if status != EMBER_OK:
        return status
    p.dtype = a.dtype
    p.itemsize = dtype_itemsize(a.dtype)
    p.flip = 0
    if descending:
        p.flip = ~(<uint64_t>0) if nbytes == 8 else ((<uint64_t>1 << (8 * nbytes)) - 1)
    p.n = a.sizes[a.ndim - 1]
    p.sv, p.si, p.sa = inner[0], inner[1], inner[2]
    if p.rows.numel == 0 or p.n == 0:
        return EMBER_OK
    # rows of one element are sorted: the copies still happen
    return iter_run(&p.rows, sort_rows, &p, p.rows.numel * p.n * 8)
