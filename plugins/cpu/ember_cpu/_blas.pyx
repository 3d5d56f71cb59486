# Floating-point matmul: float32/float64 products on ember-cpu's own kernels (batches of
# small products on _small_gemm.h's register tiles, the rest of 6 rows or more on _gemm.h's
# packed GEMM, both over ember's OpenMP team), the others through SciPy's BLAS (one row,
# thin products, float16/bfloat16).  Importing scipy.linalg.cython_blas costs ~0.17 s, so
# this module is imported by the matmul entry of _kernels at the first floating-point
# matmul, never when the plugin or the kernel table loads; it hands its entry point over
# as the capsule `matmul_capsule`.
#
# BLAS is column-major; a row-major C = A @ B is computed as C^T = B^T A^T.  An operand
# is passed in place when one of its matrix strides is 1 and the other a valid leading
# dimension (the other layout is a transpose flag); otherwise it is copied to a
# contiguous temporary, as is every float16/bfloat16 operand (converted to float32).
import os as _os

from cpython.pycapsule cimport PyCapsule_New
from libc.limits cimport INT_MAX
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport malloc, free
from scipy.linalg.cython_blas cimport dgemm, dgemv, sgemm, sgemv

from ember_cpu._abi cimport (
    ember_ctx, ember_view, matmul_fn, EMBER_OK, EMBER_ERR_RUNTIME, EMBER_ERR_MEMORY,
    EMBER_FLOAT32, EMBER_FLOAT64,
)

from ember_cpu._gemm cimport (
    EMBER_GEMM_MR, ember_gemm_cap, ember_gemm_nr_f32, ember_gemm_nr_f64, ember_gemm_scratch_f32,
    ember_gemm_scratch_f64, ember_gemm_tile_f32, ember_gemm_tile_f64,
)
from ember_cpu._small_gemm cimport (
    ember_sg_mm_f32, ember_sg_mm_f64, ember_sg_pack_f32,
    ember_sg_pack_f64, ember_sg_panel_f32, ember_sg_panel_f64,
)
from ember_cpu._strided cimport load, num_threads, run_items, set_error, store

ctypedef fused real_t:
    float
    double

# a product with fewer multiply-adds than this runs on one BLAS thread: waking OpenBLAS's
# pool costs more than it saves there, and its busy-waiting workers then compete with the
# OpenMP team of the next op (measured: a (32, 512) @ (512, 64) product took 24 ms at 2
# threads on a loaded 2-core machine, 0.06 ms on one)
DEF SMALL_GEMM = 1 << 22

# --- BLAS thread control: OpenBLAS's (set, get) num_threads of each loaded library, found
# through ember_cpu._threads when this module is imported ---
ctypedef void (*set_threads_t)(int) noexcept nogil
ctypedef int (*get_threads_t)() noexcept nogil
cdef set_threads_t _set_threads[MAX_BLAS_LIBS]
cdef get_threads_t _get_threads[MAX_BLAS_LIBS]
cdef int _nlibs = 0


def _init_blas_threads():
    global _nlibs
    from ember_cpu._threads import openblas_thread_functions
    for setter, getter in openblas_thread_functions()[:MAX_BLAS_LIBS]:
        _set_threads[_nlibs] = <set_threads_t><uintptr_t>setter
        _get_threads[_nlibs] = <get_threads_t><uintptr_t>getter
        _nlibs += 1


cdef void blas_single(int *saved) noexcept nogil:
    """Hold every OpenBLAS pool to one thread, remembering its count in ``saved``."""
    cdef int i
    for i in range(_nlibs):
        saved[i] = _get_threads[i]()
        _set_threads[i](1)


cdef void blas_restore(const int *saved) noexcept nogil:
    cdef int i
    for i in range(_nlibs):
        _set_threads[i](saved[i])


ctypedef struct Operand:       # one matrix of one batch entry, as BLAS gets it
    char *data
    bint row_major             # strides (ld, 1); otherwise (1, ld)
    int64_t ld


# 2-d matrix at `data` with sizes (r, c) and strides (s0, s1): usable in place?
cdef bint as_blas(Operand *m, char *data, int64_t r, int64_t c, int64_t s0,
                  int64_t s1) noexcept nogil:
    # the stride of an extent-1 dim is never followed: pick one BLAS accepts
    if r == 1:
        s0 = max(c, 1)
    if c == 1:
        s1 = max(r, 1)
    m.data = data
    m.row_major = s1 == 1 and s0 >= max(c, 1)
    m.ld = s0 if m.row_major else s1
    if m.row_major:
        return s0 <= INT_MAX
    return s0 == 1 and s1 >= max(r, 1) and s1 <= INT_MAX


# copy (converting) the 2-d matrix into a contiguous row-major temporary
cdef void to_temp(Operand *m, real_t *tmp, const char *data, int dtype, int64_t itemsize,
                  int64_t r, int64_t c, int64_t s0, int64_t s1) noexcept nogil:
    cdef int64_t i
    for i in range(r):
        load(tmp + i * c, data + i * s0 * itemsize, dtype, c, s1)
    set_contiguous(m, tmp, c)


cdef inline void set_contiguous(Operand *m, real_t *tmp, int64_t c) noexcept nogil:
    m.data = <char *>tmp
    m.row_major = True
    m.ld = max(c, 1)


cdef void gemv_row(Operand *c, const Operand *a, const Operand *b, int64_t N,
                   int64_t K, real_t *tag) noexcept nogil:
    """One output row (M = 1): c = a @ b as a matrix-vector product, which reads b once
    instead of packing it as a GEMM does (a batch-1 linear layer: 3x faster)."""
    cdef char tr
    cdef int m, n, ld = <int>b.ld
    # a row-major b (K x N) is, column-major, its N x K transpose: y = that x
    cdef int incx = 1 if a.row_major else <int>a.ld
    cdef int incy = 1 if c.row_major else <int>c.ld
    cdef real_t one = 1, zero = 0
    if b.row_major:
        tr, m, n = c'N', <int>N, <int>K
    else:
        tr, m, n = c'T', <int>K, <int>N
    if real_t is float:
        sgemv(&tr, &m, &n, &one, <float *>b.data, &ld, <float *>a.data, &incx, &zero,
              <float *>c.data, &incy)
    else:
        dgemv(&tr, &m, &n, &one, <double *>b.data, &ld, <double *>a.data, &incx, &zero,
              <double *>c.data, &incy)


cdef void gemm(Operand *c, const Operand *a, const Operand *b, int64_t M, int64_t N,
               int64_t K, real_t *tag) noexcept nogil:
    cdef char ta, tb
    cdef int m, n, k, lda, ldb, ldc
    cdef real_t one = 1, zero = 0
    if M == 1:
        gemv_row(c, a, b, N, K, tag)
        return
    k = <int>K
    lda = <int>a.ld
    ldb = <int>b.ld
    ldc = <int>c.ld
    if c.row_major:
        # C^T (N x M, column-major) = B^T A^T: a row-major operand is its own transpose
        # in column-major terms, so it goes untransposed
        ta = b'N' if b.row_major else b'T'
        tb = b'N' if a.row_major else b'T'
        m = <int>N
        n = <int>M
        if real_t is float:
            sgemm(&ta, &tb, &m, &n, &k, &one, <float *>b.data, &ldb, <float *>a.data, &lda,
                  &zero, <float *>c.data, &ldc)
        elif real_t is double:
            dgemm(&ta, &tb, &m, &n, &k, &one, <double *>b.data, &ldb, <double *>a.data, &lda,
                  &zero, <double *>c.data, &ldc)
    else:
        ta = b'T' if a.row_major else b'N'
        tb = b'T' if b.row_major else b'N'
        m = <int>M
        n = <int>N
        if real_t is float:
            sgemm(&ta, &tb, &m, &n, &k, &one, <float *>a.data, &lda, <float *>b.data, &ldb,
                  &zero, <float *>c.data, &ldc)
        elif real_t is double:
            dgemm(&ta, &tb, &m, &n, &k, &one, <double *>a.data, &lda, <double *>b.data, &ldb,
                  &zero, <double *>c.data, &ldc)


# --- a batch of small products on _small_gemm.h's register tiles, entries over the team ---
# OpenBLAS runs such a batch one product after another on one thread (its pool costs more
# than it saves there, and concurrent calls contend inside the library), so at 2 threads
# attention's 64 products of 64x64x32 took PyTorch's 2.5-3x time.  Each entry packs its B
# (any strides) into a buffer on the stack when small, reads A at its strides (a transposed
# A was copied first: P^T @ dO took 2.4x PyTorch's time) and writes a C that is not rows of
# unit stride through the buffer.  Each element sums over k in order: the bits do not
# depend on threads.
DEF SG_MIN_ROWS = 4
DEF SG_STACK = 4096          # elements of an entry's buffers kept on the stack
cdef bint _small_batches = True


def _set_small_batches(bint on):
    """Turn the tiled path for batches of small products on or off (tests compare it with
    BLAS's); returns the previous setting."""
    global _small_batches
    previous, _small_batches = _small_batches, on
    return previous


ctypedef struct SmallBatch:
    const ember_view *out
    const ember_view *a
    const ember_view *b
    int64_t M, N, K, np
    bint f64
    bint failed                # an entry could not allocate its buffers


cdef void small_entry_typed(SmallBatch *j, real_t *tag, int64_t i) noexcept nogil:
    cdef const ember_view *a = j.a
    cdef const ember_view *b = j.b
    cdef const ember_view *o = j.out
    cdef int64_t M = j.M, N = j.N, K = j.K, np = j.np, r, c
    cdef int64_t panels = (N + np - 1) // np
    cdef bint c_rows = o.strides[2] == 1 and o.strides[1] == N
    cdef const real_t *pa = <const real_t *>a.data + i * a.strides[0]
    cdef const real_t *pb = <const real_t *>b.data + i * b.strides[0]
    cdef real_t *po = <real_t *>o.data + i * o.strides[0]
    # the kernel reads A's elements one by one at any strides (a transposed A needs no copy)
    cdef int64_t need = panels * K * np + (0 if c_rows else M * N)
    cdef real_t stack[SG_STACK]
    cdef real_t *buf = &stack[0]
    cdef real_t *tc
    if need > SG_STACK:
        buf = <real_t *>malloc(need * sizeof(real_t))
    if buf == NULL:
        j.failed = True
        return
    tc = buf + panels * K * np
    if real_t is float:
        ember_sg_pack_f32(pb, K, N, b.strides[1], b.strides[2], np, buf)
        ember_sg_mm_f32(np, M, N, K, pa, a.strides[1], a.strides[2], buf, 0, panels, NULL,
                        po if c_rows else tc)
    else:
        ember_sg_pack_f64(pb, K, N, b.strides[1], b.strides[2], np, buf)
        ember_sg_mm_f64(np, M, N, K, pa, a.strides[1], a.strides[2], buf, 0, panels, NULL,
                        po if c_rows else tc)
    if not c_rows:
        for r in range(M):
            for c in range(N):
                po[r * o.strides[1] + c * o.strides[2]] = tc[r * N + c]
    if buf != &stack[0]:
        free(buf)


cdef void small_entry(void *job, int64_t i) noexcept nogil:
    cdef SmallBatch *j = <SmallBatch *>job
    if j.f64:
        small_entry_typed(j, <double *>NULL, i)
    else:
        small_entry_typed(j, <float *>NULL, i)


cdef int small_batch(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                     const ember_view *b, int64_t B, int64_t M, int64_t N, int64_t K,
                     real_t *tag) noexcept nogil:
    cdef SmallBatch j
    j.out, j.a, j.b, j.M, j.N, j.K = out, a, b, M, N, K
    j.f64, j.failed = real_t is double, False
    j.np = ember_sg_panel_f32(N) if real_t is float else ember_sg_panel_f64(N)
    # a GEMM's multiply-add is ~4x cheaper than an element of the cutoff's ops: a team
    # woken for two 100^3 products took twice one thread's time
    run_items(small_entry, &j, B, B * M * N * K // 4)
    if j.failed:
        return set_error(ctx, EMBER_ERR_MEMORY, "matmul", "out of memory")
    return EMBER_OK


# --- products on _gemm.h's packed kernel: tiles of C over the team ---
# OpenBLAS keeps a pthread pool of its own, whose workers busy-wait after each call while
# ember's OpenMP team runs the next op on the same cores (on 2 cores, a program's products
# took 1.2-2x their time alone).  This path runs on ember's team: each work item is a
# range of C's columns (rows, when C is taller than wide) of one batch entry, packing what
# it reads.  `EMBER_CPU_GEMM=blas` in the environment sends products to BLAS instead.
cdef bint _packed = True


cdef bint packed_suits(bint f64, int64_t M, int64_t N) noexcept nogil:
    """Whether an M x N float product goes to the packed kernel: the path is on and C fills
    a row tile and a panel (thinner products waste most of a register tile)."""
    return _packed and M >= EMBER_GEMM_MR and N >= (ember_gemm_nr_f64() if f64 else
                                                    ember_gemm_nr_f32())


def _set_packed(bint on):
    """Turn the packed-kernel path on or off (tests compare it with BLAS's); returns the
    previous setting."""
    global _packed
    previous, _packed = _packed, on
    return previous


def _set_gemm_cap(int level):
    """Use the packed kernel's variants up to `level` (2: AVX-512, 1: AVX2, 0: SSE2; tests
    run the narrower ones on a wider CPU); returns the previous cap."""
    global ember_gemm_cap
    previous, ember_gemm_cap = ember_gemm_cap, level
    return previous


def _gemm_panel(bint f64=False):
    """The panel width (columns) the packed kernel in use packs for."""
    return ember_gemm_nr_f64() if f64 else ember_gemm_nr_f32()


ctypedef struct PackedJob:
    const char *a
    const char *b
    char *out
    const int64_t *sa
    const int64_t *sb
    const int64_t *so
    int64_t M, N, K, pieces, chunk
    bint by_cols, add, f64, failed


cdef void packed_typed(PackedJob *j, real_t *tag, int64_t item) noexcept nogil:
    cdef int64_t e = item // j.pieces, lo = (item % j.pieces) * j.chunk
    cdef int64_t hi = min(lo + j.chunk, j.N if j.by_cols else j.M)
    cdef const real_t *pa = <const real_t *>j.a + e * j.sa[0]
    cdef const real_t *pb = <const real_t *>j.b + e * j.sb[0]
    cdef real_t *po = <real_t *>j.out + e * j.so[0]
    cdef int64_t m0 = 0 if j.by_cols else lo, m1 = j.M if j.by_cols else hi
    cdef int64_t n0 = lo if j.by_cols else 0, n1 = hi if j.by_cols else j.N
    cdef real_t *buf
    if real_t is float:
        buf = <real_t *>malloc(ember_gemm_scratch_f32(m1 - m0, n1 - n0, j.K) * sizeof(real_t))
    else:
        buf = <real_t *>malloc(ember_gemm_scratch_f64(m1 - m0, n1 - n0, j.K) * sizeof(real_t))
    if buf == NULL:
        j.failed = True
        return
    if real_t is float:
        ember_gemm_tile_f32(j.K, pa, j.sa[1], j.sa[2], pb, j.sb[1], j.sb[2], po, j.so[1],
                            m0, m1, n0, n1, j.add, buf)
    else:
        ember_gemm_tile_f64(j.K, pa, j.sa[1], j.sa[2], pb, j.sb[1], j.sb[2], po, j.so[1],
                            m0, m1, n0, n1, j.add, buf)
    free(buf)


cdef void packed_item(void *job, int64_t i) noexcept nogil:
    cdef PackedJob *j = <PackedJob *>job
    if j.f64:
        packed_typed(j, <double *>NULL, i)
    else:
        packed_typed(j, <float *>NULL, i)


cdef int packed_gemm(bint f64, int64_t B, int64_t M, int64_t N, int64_t K, const char *a,
                     const int64_t *sa, const char *b, const int64_t *sb, char *out,
                     const int64_t *so, bint add) noexcept nogil:
    cdef PackedJob j
    cdef int nt = num_threads()
    cdef int64_t align, length, want
    j.a, j.b, j.out, j.sa, j.sb, j.so = a, b, out, sa, sb, so
    j.M, j.N, j.K, j.add, j.f64, j.failed = M, N, K, add, f64, False
    j.by_cols = N >= M
    align = (ember_gemm_nr_f64() if f64 else ember_gemm_nr_f32()) if j.by_cols \
        else EMBER_GEMM_MR
    length = N if j.by_cols else M
    # two items a thread (a late teammate's second one can be taken over), whole entries
    # when the batch alone gives that many
    want = max(1, min((length + align - 1) // align, (2 * nt + B - 1) // B))
    j.chunk = ((length + want - 1) // want + align - 1) // align * align
    j.pieces = (length + j.chunk - 1) // j.chunk
    run_items(packed_item, &j, B * j.pieces, B * M * N * K // 4)
    return EMBER_ERR_MEMORY if j.failed else EMBER_OK


# out[B, M, N] = a[B, M, K] @ b[B, K, N]; the caller checked shapes, dtypes and that
# B, M, N, K > 0
cdef int batched(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                 const ember_view *b, real_t *tag) noexcept nogil:
    cdef int64_t B = a.sizes[0], M = a.sizes[1], K = a.sizes[2], N = b.sizes[2]
    cdef bint native = a.dtype == EMBER_FLOAT32 or a.dtype == EMBER_FLOAT64
    cdef int64_t size = sizeof(real_t) if native else 2     # float16/bfloat16: 2 bytes
    cdef int64_t as0 = a.strides[1], os0 = out.strides[1], i, r
    cdef Operand A, Bm, C
    cdef real_t *ta = NULL
    cdef real_t *tb = NULL
    cdef real_t *tc = NULL
    cdef bint a_ok, b_ok, c_ok
    cdef char *pa
    cdef char *pb
    cdef char *po
    # a batch of rows times one shared matrix is one (B*M, K) @ (K, N) product
    if M == 1:
        as0 = a.strides[0]
        os0 = out.strides[0]
    if B > 1 and b.strides[0] == 0 and a.strides[0] == M * as0 and out.strides[0] == M * os0:
        M = B * M
        B = 1
    if max(M, max(N, K)) > INT_MAX:
        return set_error(ctx, EMBER_ERR_RUNTIME, "matmul", "matrix too large for 32-bit BLAS")
    cdef int64_t panel, sa[3], sb[3], so[2]
    if real_t is float:
        panel = ember_sg_panel_f32(N)
    else:
        panel = ember_sg_panel_f64(N)
    if _small_batches and native and M >= SG_MIN_ROWS and M * N * K < SMALL_GEMM // 4 and (
            B > 1 or (a.strides[2] == 1 and N % panel == 0)):
        # one product too where it fills whole panels from rows of A (a Linear's 64 or 128
        # features: 0.75-0.85x OpenBLAS's time; ragged panels and column-major A were slower)
        return small_batch(ctx, out, a, b, B, M, N, K, tag)
    if native and packed_suits(sizeof(real_t) == 8, M, N) and out.strides[2] == 1 \
            and os0 >= N:
        sa[0], sa[1], sa[2] = a.strides[0], as0, a.strides[2]
        sb[0], sb[1], sb[2] = b.strides[0], b.strides[1], b.strides[2]
        so[0], so[1] = out.strides[0], os0
        if packed_gemm(sizeof(real_t) == 8, B, M, N, K, a.data, sa, b.data, sb, out.data, so,
                       False) != EMBER_OK:
            return set_error(ctx, EMBER_ERR_MEMORY, "matmul", "out of memory")
        return EMBER_OK
    # strides are the same for every batch entry: decide once which operands need a copy
    a_ok = as_blas(&A, a.data, M, K, as0, a.strides[2]) and native
    b_ok = as_blas(&Bm, b.data, K, N, b.strides[1], b.strides[2]) and native
    c_ok = as_blas(&C, out.data, M, N, os0, out.strides[2]) and native
    if not a_ok:
        ta = <real_t *>malloc(M * K * sizeof(real_t))
    if not b_ok:
        tb = <real_t *>malloc(K * N * sizeof(real_t))
    if not c_ok:
        tc = <real_t *>malloc(M * N * sizeof(real_t))
    if (not a_ok and ta == NULL) or (not b_ok and tb == NULL) or (not c_ok and tc == NULL):
        free(ta)
        free(tb)
        free(tc)
        return set_error(ctx, EMBER_ERR_MEMORY, "matmul", "out of memory")
    if not c_ok:
        set_contiguous(&C, tc, N)
    cdef int saved[MAX_BLAS_LIBS]
    cdef bint small = (B * M * N * K < SMALL_GEMM) or (B > 1 and M * N * K < SMALL_GEMM // 4)
    # a small product runs on one BLAS thread (waking OpenBLAS's pool costs more than it
    # saves), and so does a batch of products under 2^20 multiply-adds each, however many
    # (each call would wake the pool: attention's 64 products of 64x64x32 took 1.3-1.5x
    # their one-thread time at 2 threads); a big one uses OpenBLAS's threads, which
    # set_num_threads caps.  Splitting rows (or a batch's entries) over our OpenMP team with
    # one BLAS thread each measured 2-4x slower on an idle machine (no faster for the
    # batch): concurrent OpenBLAS calls contend inside the library.
    if small:
        blas_single(saved)
    for i in range(B):
        pa = a.data + i * a.strides[0] * size
        pb = b.data + i * b.strides[0] * size
        po = out.data + i * out.strides[0] * size
        if a_ok:
            A.data = pa
        elif i == 0 or a.strides[0] != 0:
            to_temp(&A, ta, pa, a.dtype, size, M, K, as0, a.strides[2])
        if b_ok:
            Bm.data = pb
        elif i == 0 or b.strides[0] != 0:
            to_temp(&Bm, tb, pb, b.dtype, size, K, N, b.strides[1], b.strides[2])
        if c_ok:
            C.data = po
        gemm(&C, &A, &Bm, M, N, K, tag)
        if not c_ok:
            for r in range(M):
                store(po + r * os0 * size, out.dtype, tc + r * N, N, out.strides[2])
    if small:
        blas_restore(saved)
    free(ta)
    free(tb)
    free(tc)
    return EMBER_OK


cdef int blas_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                     const ember_view *b) noexcept nogil:
    if a.dtype == EMBER_FLOAT64:
        return batched(ctx, out, a, b, <double *>NULL)
    # float32, and float16/bfloat16 through float32 temporaries
    return batched(ctx, out, a, b, <float *>NULL)


_init_blas_threads()
if _os.environ.get("EMBER_CPU_GEMM") == "blas":
    _packed = False
matmul_capsule = PyCapsule_New(<void *><matmul_fn>blas_matmul, "ember_cpu._blas.matmul", NULL)
