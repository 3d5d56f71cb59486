# Memory kernels: allocation, strided copy with dtype casts, fill, host transfers.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport free
from libc.string cimport memcpy


from ember_cpu._abi cimport (
    EMBER_ERROR_LEN, EMBER_OK, EMBER_ERR_VALUE, EMBER_FLOAT64, EMBER_FLOAT32, EMBER_BOOL, EMBER_UINT8, EMBER_INT8,
    EMBER_INT16, EMBER_UINT64, EMBER_FLOAT16, EMBER_BFLOAT16,
)
from ember_cpu._strided cimport (
    CT_I64, CT_F32, CT_F64, BUF_LEN, StageBuf, StridedIter, is_floating,
    iter_init, iter_run, load_ct, run_items, store_ct, set_error,
)

# Bytes held by live allocations (malloc_usable_size of malloc's own block, so alloc and
# free agree without storing the size) and the peak since the last reset: the runtime's
# memory_allocated().
cdef extern from *:
    """
    #include <malloc.h>
    static int64_t ember_cpu_allocated = 0;
    static int64_t ember_cpu_peak = 0;
    static void ember_cpu_track(void *p, int sign) {
        if (p == NULL) return;
        int64_t now = __atomic_add_fetch(&ember_cpu_allocated,
                                         sign * (int64_t)malloc_usable_size(p),
                                         __ATOMIC_RELAXED);
        if (sign > 0 && now > ember_cpu_peak) ember_cpu_peak = now;
    }
    """
    int64_t ember_cpu_allocated
    int64_t ember_cpu_peak
    void ember_cpu_track(void *p, int sign) nogil


# glibc serves blocks above its mmap threshold (128 KiB at first) with fresh mmaps and trims
# the heap's top above 128 KiB: every large temporary then costs page faults (a chain of
# three ops on a 512 KiB tensor ran 6x slower than the ops alone).  Keeping blocks up to
# 64 MiB in the heap, trimmed above 128 MiB, lets them be reused; MALLOC_*_ settings in
# the environment win.
cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__GLIBC__)
    static void ember_cpu_tune_malloc(void) {
        if (getenv("MALLOC_MMAP_THRESHOLD_") == NULL) mallopt(M_MMAP_THRESHOLD, 64 << 20);
        if (getenv("MALLOC_TRIM_THRESHOLD_") == NULL) mallopt(M_TRIM_THRESHOLD, 128 << 20);
    }
    #else
    static void ember_cpu_tune_malloc(void) {}
    #endif
    """
    void ember_cpu_tune_malloc()

# Blocks of 32 MiB and more are marked for transparent huge pages (NumPy marks 4 MiB and
# more; this kernel's THP mode is "madvise"): a large tensor then takes 512x fewer page
# faults and TLB entries.  Measured on 10M float32: sum 1.85 -> 0.93 ms, as on NumPy's
# memory (PyTorch's own 1.7 ms).  From 4 MiB, the LSTM program's 5.5 MB activations made it
# 7% slower at 1 thread (fresh huge pages cost more than the TLB saves there).
cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    #define EMBER_CPU_HUGE_FROM ((int64_t)32 << 20)
    static void ember_cpu_advise_huge(void *p, int64_t n) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t e = ((uintptr_t)p + (uintptr_t)n) & ~(uintptr_t)4095;
        if (n >= EMBER_CPU_HUGE_FROM && e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
    #else
        (void)p; (void)n;
    #endif
    }
    """
    void ember_cpu_advise_huge(void *p, int64_t n) nogil


ember_cpu_tune_malloc()


def _memory_stats():
    """(bytes allocated now, peak bytes since the last reset)."""
    return ember_cpu_allocated, ember_cpu_peak


def _reset_peak():
    global ember_cpu_peak
    ember_cpu_peak = ember_cpu_allocated


# Every block is malloc's, handed out past a header that holds malloc's own pointer.  Small
# blocks come from malloc's thread cache (16-byte aligned, ~10x cheaper than
# posix_memalign, which dominated the cost of a 10-element op); larger ones start at the
# first 64-byte boundary (a cache line, any SIMD width) at least 16 bytes in.
# posix_memalign kept only the aligned part of the chunk it carved, so a freed block was
# always a little short of the next request of its size: tensors of 19 MB made in turn
# grew the heap into fresh pages on every call (trimmed, then grown again), 5x the time.
cdef extern from *:
    """
    #include <stdint.h>
    #define EMBER_CPU_SMALL 1024
    static void *ember_cpu_malloc(size_t n) {
        size_t pad = n <= EMBER_CPU_SMALL ? 16 : 80;
        char *raw = (char *)malloc(n + pad);
        if (raw == NULL) return NULL;
        char *p = n <= EMBER_CPU_SMALL ? raw + 16
                  : (char *)(((uintptr_t)raw + 16 + 63) & ~(uintptr_t)63);
        ((void **)p)[-1] = raw;
        return p;
    }
    static void *ember_cpu_block(void *p) { return ((void **)p)[-1]; }
    """
    void *ember_cpu_malloc(size_t n) nogil
    void *ember_cpu_block(void *p) nogil


cdef void *mem_alloc(ember_ctx *ctx, int64_t nbytes) noexcept nogil:
    cdef void *p = NULL
    if nbytes < 0:
        set_error(ctx, EMBER_ERR_VALUE, "alloc", "negative size")
        return NULL
    p = ember_cpu_malloc(<size_t>nbytes)
    if p is NULL:
        snprintf(ctx.error, EMBER_ERROR_LEN, "DefaultCPUAllocator: not enough memory: you "
                 "tried to allocate %lld bytes.", <long long>nbytes)
        return NULL
    ember_cpu_advise_huge(p, nbytes)
    ember_cpu_track(ember_cpu_block(p), 1)
    return p


cdef void mem_free(int32_t device, void *ptr) noexcept nogil:
    if ptr is NULL:
        return
    ptr = ember_cpu_block(ptr)
    ember_cpu_track(ptr, -1)
    free(ptr)


# -- copy -----------------------------------------------------------------------------------

ctypedef struct CastCall:
    int ct            # compute type the values pass through (exact for both dtypes)
    int out_dtype
    int in_dtype
    int64_t out_size
    int64_t in_size


# same dtype: move bytes
cdef int raw_copy_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                      int64_t index) noexcept nogil:
    cdef int64_t i, size = (<const int64_t *>arg)[0], so = st[0], sa = st[1]
    if so == 1 and sa == 1:
        memcpy(ptrs[0], ptrs[1], n * size)
    elif size == 1:
        for i in range(n):
            (<uint8_t *>ptrs[0])[i * so] = (<const uint8_t *>ptrs[1])[i * sa]
    elif size == 2:
        for i in range(n):
            (<uint16_t *>ptrs[0])[i * so] = (<const uint16_t *>ptrs[1])[i * sa]
    elif size == 4:
        for i in range(n):
            (<uint32_t *>ptrs[0])[i * so] = (<const uint32_t *>ptrs[1])[i * sa]
    else:
        for i in range(n):
            (<uint64_t *>ptrs[0])[i * so] = (<const uint64_t *>ptrs[1])[i * sa]
    return EMBER_OK


cdef extern from "_cast_rows.h":
    int ember_cast_contiguous(int out, int a, void *o, const void *a, int64_t n) noexcept nogil


# different dtypes: load a block into the compute type, store it converted (a contiguous row
# of an everyday pair, autocast's casts among them, in one loop: _cast_rows.h)
cdef int cast_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                  int64_t index) noexcept nogil:
    cdef const CastCall *c = <const CastCall *>arg
    cdef StageBuf buf
    cdef int64_t i = 0, m
    if st[0] == 1 and st[1] == 1 and \
            ember_cast_contiguous(c.out_dtype, c.in_dtype, ptrs[0], ptrs[1], n):
        return EMBER_OK
    while i < n:
        m = min(<int64_t>BUF_LEN, n - i)
        load_ct(c.ct, &buf, ptrs[1] + i * st[1] * c.in_size, c.in_dtype, m, st[1])
        store_ct(c.ct, ptrs[0] + i * st[0] * c.out_size, c.out_dtype, &buf, m, st[0])
        i += m
    return EMBER_OK


# -- transposes: out's last two dims are a's swapped -----------------------------------------
# A row-by-row walk reads one element per cache line of `a` (a 2048^2 float32 transpose ran
# 5x slower than PyTorch's); TILE x TILE tiles keep both sides in cache, and a job's tiles
# span at most CBLOCK columns, so that the pages of `a` it reads stay in the TLB.
DEF TILE = 16
DEF CBLOCK = 256

ctypedef fused elem_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t


cdef inline void tile_copy(elem_t *o, const elem_t *a, int64_t rows, int64_t c0,
                           int64_t c1, int64_t so, int64_t sa) noexcept nogil:
    """o[r * so + c] = a[r + c * sa] for r < rows, c0 <= c < c1, a tile at a time."""
    cdef int64_t t, r, c, cend
    for t in range(c0, c1, TILE):
        cend = min(t + TILE, c1)
        for r in range(rows):
            for c in range(t, cend):
                o[r * so + c] = a[r + c * sa]


cdef void transpose_block(const StridedIter *it, int64_t job, int64_t nrb,
                          int64_t ncb) noexcept nogil:
    """One job of a transposed copy: TILE rows of one outer index's matrix, over CBLOCK
    columns (row blocks vary fastest, so consecutive jobs read the same pages of a)."""
    cdef int nd = it.ndim, k
    cdef int64_t r0 = (job % nrb) * TILE, c0 = ((job // nrb) % ncb) * CBLOCK
    cdef int64_t outer = job // (nrb * ncb), idx
    cdef int64_t R = it.sizes[nd - 2], C = it.sizes[nd - 1], size = it.itemsize[0]
    cdef int64_t so = it.strides[0][nd - 2], sa = it.strides[1][nd - 1]
    cdef int64_t off_o = r0 * so, off_a = r0
    for k in range(nd - 3, -1, -1):            # the outer index's position in each operand
        idx = outer % it.sizes[k]
        outer //= it.sizes[k]
        off_o += idx * it.strides[0][k]
        off_a += idx * it.strides[1][k]
    cdef char *o = it.data[0] + off_o * size
    cdef const char *a = it.data[1] + off_a * size
    cdef int64_t rows = min(<int64_t>TILE, R - r0), c1 = min(c0 + CBLOCK, C)
    if size == 1:
        tile_copy(<uint8_t *>o, <const uint8_t *>a, rows, c0, c1, so, sa)
    elif size == 2:
        tile_copy(<uint16_t *>o, <const uint16_t *>a, rows, c0, c1, so, sa)
    elif size == 4:
        tile_copy(<uint32_t *>o, <const uint32_t *>a, rows, c0, c1, so, sa)
    else:
        tile_copy(<uint64_t *>o, <const uint64_t *>a, rows, c0, c1, so, sa)


cdef bint is_transpose(const StridedIter *it) noexcept nogil:
    """out runs along its last dim and a along the one before: a's last two dims swapped
    (large enough that tiles pay: a row-by-row walk is as fast on small ones)."""
    cdef int nd = it.ndim
    return (nd >= 2 and it.itemsize[0] <= 8 and it.strides[0][nd - 1] == 1
            and it.strides[1][nd - 2] == 1 and it.strides[1][nd - 1] != 1
            and it.sizes[nd - 1] >= TILE and it.sizes[nd - 2] >= TILE)


ctypedef struct TransposeJob:
    const StridedIter *it
    int64_t nrb, ncb


cdef void transpose_item(void *job, int64_t j) noexcept nogil:
    cdef const TransposeJob *t = <const TransposeJob *>job
    transpose_block(t.it, j, t.nrb, t.ncb)


cdef int transposed_copy(const StridedIter *it) noexcept nogil:
    cdef int nd = it.ndim
    cdef int64_t R = it.sizes[nd - 2], C = it.sizes[nd - 1]
    cdef int64_t nrb = (R + TILE - 1) // TILE, ncb = (C + CBLOCK - 1) // CBLOCK
    cdef TransposeJob t
    t.it, t.nrb, t.ncb = it, nrb, ncb
    run_items(transpose_item, &t, (it.numel // (R * C)) * nrb * ncb, it.numel)
    return EMBER_OK


cdef int copy_kernel(ember_ctx *ctx, const ember_view *out, const ember_view *a) noexcept nogil:
    cdef StridedIter it
    cdef const ember_view *views[2]
    cdef CastCall c
    cdef int64_t size
    cdef int status
    views[0] = out
    views[1] = a
    status = iter_init(&it, ctx, "copy", 2, views, True)
    if status != EMBER_OK:
        return status
    if out.dtype == a.dtype:
        if is_transpose(&it):
            return transposed_copy(&it)
        size = it.itemsize[0]
        return iter_run(&it, raw_copy_row, &size, it.numel)
    # integers and bool pass through int64, floating values through double (float when
    # both sides fit in float32); both are exact for the source.  Bool and 8/16-bit
    # integers into float32 pass through float (exact too, and int64 -> float does not
    # vectorise: a bool mask's cast ran 4x slower)
    if out.dtype == EMBER_FLOAT32 and (a.dtype == EMBER_BOOL or a.dtype == EMBER_UINT8
                                       or a.dtype == EMBER_INT8 or a.dtype == EMBER_INT16):
        c.ct = CT_F32
    elif not is_floating(a.dtype) and not (a.dtype == EMBER_UINT64 and is_floating(out.dtype)):
        c.ct = CT_I64
    elif a.dtype == EMBER_FLOAT64 or out.dtype == EMBER_FLOAT64 or not is_floating(out.dtype):
        c.ct = CT_F64
    else:
        c.ct = CT_F32
    c.out_dtype = out.dtype
    c.in_dtype = a.dtype
    c.out_size = it.itemsize[0]
    c.in_size = it.itemsize[1]
    return iter_run(&it, cast_row, &c, it.numel)


# -- fill -----------------------------------------------------------------------------------

ctypedef struct FillCall:
    const void *value
    int64_t size


cdef int fill_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                  int64_t index) noexcept nogil:
    cdef const FillCall *f = <const FillCall *>arg
    cdef int64_t i, s = st[0]
    cdef uint8_t v1
    cdef uint16_t v2
    cdef uint32_t v4
    cdef uint64_t v8
    if f.size == 1:
        v1 = (<const uint8_t *>f.value)[0]
        for i in range(n):
            (<uint8_t *>ptrs[0])[i * s] = v1
    elif f.size == 2:
        v2 = (<const uint16_t *>f.value)[0]
        for i in range(n):
            (<uint16_t *>ptrs[0])[i * s] = v2
    elif f.size == 4:
        v4 = (<const uint32_t *>f.value)[0]
        for i in range(n):
            (<uint32_t *>ptrs[0])[i * s] = v4
    else:
        v8 = (<const uint64_t *>f.value)[0]
        for i in range(n):
            (<uint64_t *>ptrs[0])[i * s] = v8
    return EMBER_OK


cdef int fill_kernel(ember_ctx *ctx, const ember_view *out, const void *value) noexcept nogil:
    cdef StridedIter it
    cdef const ember_view *views[1]
    cdef FillCall f
    cdef int status
    if value == NULL:
        return set_error(ctx, EMBER_ERR_VALUE, "fill", "no value")
    views[0] = out
    status = iter_init(&it, ctx, "fill", 1, views, True)
    if status != EMBER_OK:
        return status
    f.value = value
    f.size = it.itemsize[0]
    return iter_run(&it, fill_row, &f, it.numel)


# -- host transfers (the device is the host) --------------------------------------------------

cdef int to_host_kernel(ember_ctx *ctx, void *host_dst, const void *device_src,
                        int64_t nbytes) noexcept nogil:
    if nbytes < 0:
        return set_error(ctx, EMBER_ERR_VALUE, "to_host", "negative byte count")
    if nbytes > 0:
        memcpy(host_dst, device_src, nbytes)
    return EMBER_OK


cdef int from_host_kernel(ember_ctx *ctx, void *device_dst, const void *host_src,
                          int64_t nbytes) noexcept nogil:
    if nbytes < 0:
        return set_error(ctx, EMBER_ERR_VALUE, "from_host", "negative byte count")
    if nbytes > 0:
        memcpy(device_dst, host_src, nbytes)
    return EMBER_OK
