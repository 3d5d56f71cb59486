# The fused convolution kernels (the optional `conv` table entry): forward, input gradient
# and weight (+ bias) gradient of a grouped 2-d convolution over contiguous float32/float64
# [N, C, H, W] tensors, as im2col + GEMM and GEMM + col2im through SciPy's BLAS, or for
# stride 1 and moderate channel counts as direct register-tiled loops (_conv_direct.h:
# ~2x faster than BLAS on a 16 -> 32 channel 3x3 layer, with no column buffer).  Like
# _blas, this module is imported at the first convolution (SciPy's BLAS costs ~0.17 s).
#
# Threads: a batch of more than one sample runs OpenMP over the samples, each thread with
# its own column buffer and BLAS held to one thread (threaded BLAS inside a parallel region
# would oversubscribe the cores); with fewer samples than two per thread, each sample's
# groups split into chunks that threads share too; a single sample of one group runs one
# GEMM with BLAS's own threads.  The weight gradient sums the batch in fixed blocks (their number depends only
# on N) combined in order, so every result has the same bits for any thread count.
from cpython.pycapsule cimport PyCapsule_New
from cython.parallel cimport prange
from libc.limits cimport INT_MAX
from libc.stdint cimport int32_t, int64_t, uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

from ember_cpu._abi cimport (
    conv_fn, ember_conv_params, ember_ctx, ember_view, EMBER_OK, EMBER_ERR_MEMORY, EMBER_ERR_RUNTIME, EMBER_ERR_TYPE, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED,
    EMBER_CONV_BACKWARD_INPUT, EMBER_CONV_BACKWARD_WEIGHT, EMBER_CONV_FORWARD, EMBER_FLOAT32,
    EMBER_FLOAT64,
)
from ember_cpu._blas cimport MAX_BLAS_LIBS, blas_restore, blas_single
from ember_cpu._openmp_helpers cimport omp_get_thread_num
from ember_cpu._strided cimport PARALLEL_CUTOFF, contiguous, num_threads, set_error

ctypedef fused real_t:
    float
    double

DEF WEIGHT_BLOCKS = 8          # the weight gradient's batch blocks (at most)
DEF DIRECT_MIN_M = 4
DEF DIRECT_MAX_M = 64          # the direct kernel's limits on outputs and taps per group
DEF DIRECT_MAX_K = 1152

ctypedef struct Conv:
    int op
    const ember_conv_params *p
    int64_t N, C, H, W, Cout, Cg, Coutg, kh, kw, Ho, Wo, K, L, G
    bint direct               # 1x1 kernel, stride 1, no padding: the input is its own col
    bint dconv                # stride-1 direct kernel (_conv_direct.h) instead of im2col
    int64_t colsz             # elements of one thread's buffer
    int64_t dK, dMr           # direct kernel: taps and padded outputs of one group's wt
    char *wt                  # direct kernel: packed weights, G x [dK, dMr]
    char *out
    const char *a
    const char *b
    char *c
    char *cols                # one column buffer [K, L] per thread
    char *blocks              # weight-gradient partial sums, WEIGHT_BLOCKS x weight
    int64_t geom[12]          # H, W, kh, kw, Ho, Wo, stride, padding, dilation (im2col)


# row-major C[M, N] = alpha op(A) op(B) + beta C through column-major BLAS (C^T = B^T A^T)
cdef inline void gemm(bint ta, bint tb, int64_t M, int64_t N, int64_t K, const real_t *A,
                      int64_t lda, const real_t *B, int64_t ldb, real_t beta, real_t *C,
                      int64_t ldc) noexcept nogil:
    cdef char ca = b'T' if ta else b'N'
    cdef char cb = b'T' if tb else b'N'
    cdef int m = <int>N, n = <int>M, k = <int>K, la = <int>lda, lb = <int>ldb, lc = <int>ldc
    cdef real_t one = 1
    if real_t is float:
        sgemm(&cb, &ca, &m, &n, &k, &one, <float *>B, &lb, <float *>A, &la, &beta, C, &lc)
    else:
        dgemm(&cb, &ca, &m, &n, &k, &one, <double *>B, &lb, <double *>A, &la, &beta, C, &lc)


cdef extern from "_conv_cols.h":
    void ember_im2col_f32(float *x, float *col, int add, int64_t cg,
                          const int64_t *g) noexcept nogil
    void ember_im2col_f64(double *x, double *col, int add, int64_t cg,
                          const int64_t *g) noexcept nogil


cdef extern from "_conv_direct.h":
    int64_t EMBER_DC_M
    int64_t ember_dconv_work(int64_t C, int64_t H, int64_t W, int64_t M, int64_t kh,
                             int64_t ph, int64_t pw) noexcept nogil
    void ember_dconv_f32(const float *x, int64_t C, int64_t H, int64_t W, const float *wt,
                         int64_t M, int64_t kh, int64_t kw, int64_t ph, int64_t pw,
                         const float *bias, float *out, float *work) noexcept nogil
    void ember_dconv_f64(const double *x, int64_t C, int64_t H, int64_t W, const double *wt,
                         int64_t M, int64_t kh, int64_t kw, int64_t ph, int64_t pw,
                         const double *bias, double *out, double *work) noexcept nogil
    int64_t ember_dwgrad_work(int64_t C, int64_t H, int64_t W, int64_t M, int64_t kh,
                              int64_t kw, int64_t ph, int64_t pw) noexcept nogil
    void ember_dwgrad_f32(const float *x, int64_t C, int64_t H, int64_t W, const float *gy,
                          int64_t M, int64_t kh, int64_t kw, int64_t ph, int64_t pw,
                          float *acc, float *work) noexcept nogil
    void ember_dwgrad_f64(const double *x, int64_t C, int64_t H, int64_t W, const double *gy,
                          int64_t M, int64_t kh, int64_t kw, int64_t ph, int64_t pw,
                          double *acc, double *work) noexcept nogil


# the window taps of Cg channels of x [Cg, H, W] as col [Cg * kh * kw, L]; with `add`, the
# adjoint: col summed back into x (x must be zeroed first)
cdef inline void im2col(const Conv *c, real_t *x, real_t *col, bint add) noexcept nogil:
    if real_t is float:
        ember_im2col_f32(x, col, add, c.Cg, c.geom)
    else:
        ember_im2col_f64(x, col, add, c.Cg, c.geom)


# the direct kernel on one group: x [C, H, W] -> out [M, ., .]
cdef inline void dconv(const Conv *c, const real_t *x, int64_t C, int64_t H, int64_t W,
                       const real_t *wt, int64_t M, int64_t ph, int64_t pw,
                       const real_t *bias, real_t *out, real_t *work) noexcept nogil:
    if real_t is float:
        ember_dconv_f32(x, C, H, W, wt, M, c.kh, c.kw, ph, pw, bias, out, work)
    else:
        ember_dconv_f64(x, C, H, W, wt, M, c.kh, c.kw, ph, pw, bias, out, work)


# groups g0 .. g1 - 1 of one sample of the forward or input-gradient op
cdef void sample(const Conv *c, int64_t n, int64_t g0, int64_t g1, real_t *col) noexcept nogil:
    cdef int64_t g, co, l, gsz = c.Cg * c.H * c.W
    cdef real_t *x = <real_t *>(c.out if c.op == EMBER_CONV_BACKWARD_INPUT else c.a)
    cdef real_t *y = <real_t *>(c.a if c.op == EMBER_CONV_BACKWARD_INPUT else c.out)
    cdef const real_t *w = <const real_t *>c.b
    cdef real_t *yo
    cdef const real_t *bias = <const real_t *>c.c
    cdef const real_t *wt = <const real_t *>c.wt
    x += n * c.C * c.H * c.W
    y += n * c.Cout * c.L
    if c.dconv:
        for g in range(g0, g1):
            if c.op == EMBER_CONV_FORWARD:
                dconv(c, x + g * gsz, c.Cg, c.H, c.W, wt + g * c.dK * c.dMr, c.Coutg,
                      c.p.padding[0], c.p.padding[1],
                      bias + g * c.Coutg if bias != NULL else NULL, y + g * c.Coutg * c.L,
                      col)
            else:
                dconv(c, y + g * c.Coutg * c.L, c.Coutg, c.Ho, c.Wo, wt + g * c.dK * c.dMr,
                      c.Cg, c.kh - 1 - c.p.padding[0], c.kw - 1 - c.p.padding[1], NULL,
                      x + g * gsz, col)
        return
    if c.op == EMBER_CONV_BACKWARD_INPUT and not c.direct:
        memset(x + g0 * gsz, 0, (g1 - g0) * gsz * sizeof(real_t))
    for g in range(g0, g1):
        yo = y + g * c.Coutg * c.L
        if c.op == EMBER_CONV_FORWARD:
            if c.direct:
                col = x + g * gsz
            else:
                im2col(c, x + g * gsz, col, False)
            gemm(False, False, c.Coutg, c.L, c.K, w + g * c.Coutg * c.K, c.K, col, c.L,
                 <real_t>0, yo, c.L)
            if bias != NULL:
                for co in range(c.Coutg):
                    for l in range(c.L):
                        yo[co * c.L + l] += bias[g * c.Coutg + co]
        elif c.direct:
            gemm(True, False, c.K, c.L, c.Coutg, w + g * c.Coutg * c.K, c.K, yo, c.L,
                 <real_t>0, x + g * gsz, c.L)
        else:
            gemm(True, False, c.K, c.L, c.Coutg, w + g * c.Coutg * c.K, c.K, yo, c.L,
                 <real_t>0, col, c.L)
            im2col(c, x + g * gsz, col, True)


# groups g0 .. g1 - 1 of weight-gradient block `blk`: its samples' col @ g^T summed into
# its own partial weight (per group, [K, Coutg])
cdef void weight_block(const Conv *c, int64_t blk, int64_t nblk, int64_t g0, int64_t g1,
                       real_t *col) noexcept nogil:
    cdef int64_t n, g, wsz = c.Cout * c.K
    cdef real_t *acc = <real_t *>c.blocks + blk * wsz
    cdef const real_t *x
    cdef const real_t *gy
    cdef const real_t *src
    memset(acc + g0 * c.Coutg * c.K, 0, (g1 - g0) * c.Coutg * c.K * sizeof(real_t))
    for n in range(blk * c.N // nblk, (blk + 1) * c.N // nblk):
        x = <const real_t *>c.b + n * c.C * c.H * c.W
        gy = <const real_t *>c.a + n * c.Cout * c.L
        for g in range(g0, g1):
            if c.dconv:
                if real_t is float:
                    ember_dwgrad_f32(x + g * c.Cg * c.H * c.W, c.Cg, c.H, c.W,
                                     gy + g * c.Coutg * c.L, c.Coutg, c.kh, c.kw,
                                     c.p.padding[0], c.p.padding[1], acc + g * c.Coutg * c.K,
                                     col)
                else:
                    ember_dwgrad_f64(x + g * c.Cg * c.H * c.W, c.Cg, c.H, c.W,
                                     gy + g * c.Coutg * c.L, c.Coutg, c.kh, c.kw,
                                     c.p.padding[0], c.p.padding[1], acc + g * c.Coutg * c.K,
                                     col)
                continue
            if c.direct:
                src = x + g * c.Cg * c.H * c.W
            else:
                im2col(c, <real_t *>x + g * c.Cg * c.H * c.W, col, False)
                src = col
            # the group's weight gradient transposed, [K, Coutg] = col @ g^T: BLAS runs
            # this shape ~1.4x faster than g @ col^T (the transpose is undone at the end)
            gemm(False, True, c.K, c.Coutg, c.L, src, c.L, gy + g * c.Coutg * c.L, c.L,
                 <real_t>1, acc + g * c.Coutg * c.K, c.Coutg)


# each channel's sum over the batch and the plane, in double, with 8 accumulators (one
# serial chain ran at a quarter of the speed) combined in a fixed order
cdef void bias_grad(const Conv *c, real_t *gb) noexcept nogil:
    cdef int64_t co, n, l, j, nb = c.L - c.L % 8
    cdef const real_t *gy
    cdef double acc[8]
    cdef double s
    for co in range(c.Cout):
        for j in range(8):
            acc[j] = 0
        s = 0
        for n in range(c.N):
            gy = <const real_t *>c.a + (n * c.Cout + co) * c.L
            for l in range(0, nb, 8):
                for j in range(8):
                    acc[j] += gy[l + j]
            for l in range(nb, c.L):
                s += gy[l]
        for j in range(8):
            s += acc[j]
        gb[co] = <real_t>s


# the direct kernel's weights for every group, zero-padded to dMr outputs: the forward's
# wt[k, m] = w[m, k]; the input gradient's wt[(co, ki, kj), ci] = w[co, ci, kh-1-ki, kw-1-kj]
cdef void pack_direct(Conv *c, real_t *wt) noexcept nogil:
    cdef const real_t *w = <const real_t *>c.b
    cdef int64_t g, k, m, co, ci, ki, kj, M = c.Coutg if c.op == EMBER_CONV_FORWARD else c.Cg
    cdef real_t *wg
    for g in range(c.G):
        wg = wt + g * c.dK * c.dMr
        for k in range(c.dK):
            for m in range(M, c.dMr):
                wg[k * c.dMr + m] = 0
        if c.op == EMBER_CONV_FORWARD:
            for m in range(c.Coutg):
                for k in range(c.K):
                    wg[k * c.dMr + m] = w[(g * c.Coutg + m) * c.K + k]
        else:
            for co in range(c.Coutg):
                for ci in range(c.Cg):
                    for ki in range(c.kh):
                        for kj in range(c.kw):
                            wg[((co * c.kh + ki) * c.kw + kj) * c.dMr + ci] = w[
                                (((g * c.Coutg + co) * c.Cg + ci) * c.kh + c.kh - 1 - ki)
                                * c.kw + c.kw - 1 - kj]


cdef int run(Conv *c, real_t *tag) noexcept nogil:
    cdef int nt = num_threads(), t, saved[MAX_BLAS_LIBS]
    cdef int64_t n, i, blk, nblk, g, co, k, wsz = c.Cout * c.K
    cdef bint weight = c.op == EMBER_CONV_BACKWARD_WEIGHT
    cdef int64_t units = min(c.N, <int64_t>WEIGHT_BLOCKS) if weight else c.N
    # fewer samples (weight blocks) than two per thread: each also splits into chunks of
    # its groups (vmap's per-sample gradients are one sample of 64 groups); groups write
    # disjoint outputs, so the bits stay those of one thread
    cdef int64_t chunks = 1 if units >= 2 * nt else min(c.G, (2 * nt + units - 1) // units)
    cdef int64_t items = units * chunks, g0, g1
    cdef bint parallel = nt > 1 and items > 1 and \
        c.N * c.K * c.L * c.G >= PARALLEL_CUTOFF
    cdef int64_t nbuf = min(<int64_t>nt, items) if parallel else 1
    cdef real_t *acc
    c.cols = NULL
    c.blocks = NULL
    c.wt = NULL
    c.colsz = c.K * c.L
    if c.dconv and weight:
        c.colsz = ember_dwgrad_work(c.Cg, c.H, c.W, c.Coutg, c.kh, c.kw, c.p.padding[0],
                                    c.p.padding[1])
    elif c.dconv:
        c.wt = <char *>malloc(c.G * c.dK * c.dMr * sizeof(real_t))
        if c.op == EMBER_CONV_FORWARD:
            c.colsz = ember_dconv_work(c.Cg, c.H, c.W, c.Coutg, c.kh, c.p.padding[0],
                                       c.p.padding[1])
        else:
            c.colsz = ember_dconv_work(c.Coutg, c.Ho, c.Wo, c.Cg, c.kh,
                                       c.kh - 1 - c.p.padding[0], c.kw - 1 - c.p.padding[1])
    if not c.direct:
        c.cols = <char *>malloc(nbuf * c.colsz * sizeof(real_t))
    if weight:
        c.blocks = <char *>malloc(units * wsz * sizeof(real_t))
    if ((not c.direct and c.cols == NULL) or (weight and c.blocks == NULL)
            or (c.dconv and not weight and c.wt == NULL)):
        free(c.cols)
        free(c.blocks)
        free(c.wt)
        return EMBER_ERR_MEMORY
    if c.dconv and not weight:
        pack_direct(c, <real_t *>c.wt)
    if parallel:
        blas_single(saved)
        for i in prange(items, nogil=True, schedule='static', num_threads=<int>nbuf):
            t = omp_get_thread_num()
            g0 = i % chunks * c.G // chunks
            g1 = (i % chunks + 1) * c.G // chunks
            if weight:
                weight_block(c, i // chunks, units, g0, g1, <real_t *>c.cols + t * c.colsz)
            else:
                sample(c, i // chunks, g0, g1, <real_t *>c.cols + t * c.colsz)
        blas_restore(saved)
    else:
        for i in range(units):
            if weight:
                weight_block(c, i, units, 0, c.G, <real_t *>c.cols)
            else:
                sample(c, i, 0, c.G, <real_t *>c.cols)
    if weight:
        # the blocks in order (the same sum for any thread count), then each group's
        # [K, Coutg] transposed into the weight's [Coutg, K]
        acc = <real_t *>c.blocks
        for blk in range(1, units):
            for i in range(wsz):
                acc[i] += acc[blk * wsz + i]
        for g in range(c.G):
            for co in range(c.Coutg):
                for k in range(c.K):
                    (<real_t *>c.out)[(g * c.Coutg + co) * c.K + k] = \
                        acc[g * c.Coutg * c.K + k * c.Coutg + co]
        if c.c != NULL:
            bias_grad(c, <real_t *>c.c)
    free(c.cols)
    free(c.blocks)
    free(c.wt)
    return EMBER_OK


cdef int conv_kernel(ember_ctx *ctx, int32_t op, const ember_conv_params *p,
                     const ember_view *out, const ember_view *a, const ember_view *b,
                     const ember_view *cv) noexcept nogil:
    cdef Conv c
    cdef const ember_view *x
    cdef const ember_view *w
    cdef const ember_view *y
    cdef int status
    if op == EMBER_CONV_FORWARD:
        x, w, y = a, b, out
    elif op == EMBER_CONV_BACKWARD_INPUT:
        x, w, y = out, b, a
    elif op == EMBER_CONV_BACKWARD_WEIGHT:
        x, w, y = b, out, a
    else:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "conv", "unknown op code")
    if out.ndim != 4 or a.ndim != 4 or b.ndim != 4:
        return set_error(ctx, EMBER_ERR_VALUE, "conv", "expects 4-d operands")
    if (a.dtype != out.dtype or b.dtype != out.dtype or (cv != NULL and cv.dtype != out.dtype)
            or (out.dtype != EMBER_FLOAT32 and out.dtype != EMBER_FLOAT64)):
        return set_error(ctx, EMBER_ERR_TYPE, "conv", "expects float32 or float64 operands")
    if not (contiguous(out) and contiguous(a) and contiguous(b)
            and (cv == NULL or contiguous(cv))):
        return set_error(ctx, EMBER_ERR_VALUE, "conv", "expects contiguous operands")
    c.op = op
    c.p = p
    c.N, c.C, c.H, c.W = x.sizes[0], x.sizes[1], x.sizes[2], x.sizes[3]
    c.Cout, c.Cg, c.kh, c.kw = w.sizes[0], w.sizes[1], w.sizes[2], w.sizes[3]
    c.Ho, c.Wo = y.sizes[2], y.sizes[3]
    c.G = p.groups
    if (c.G <= 0 or c.Cg * c.G != c.C or c.Cout % c.G or y.sizes[0] != c.N
            or y.sizes[1] != c.Cout or (cv != NULL and cv.ndim != 1)
            or (cv != NULL and cv.sizes[0] != c.Cout)):
        return set_error(ctx, EMBER_ERR_VALUE, "conv", "operand shapes do not match")
    c.Coutg = c.Cout // c.G
    c.geom[0], c.geom[1], c.geom[2], c.geom[3] = c.H, c.W, c.kh, c.kw
    c.geom[4], c.geom[5], c.geom[6], c.geom[7] = c.Ho, c.Wo, p.stride[0], p.stride[1]
    c.geom[8], c.geom[9] = p.padding[0], p.padding[1]
    c.geom[10], c.geom[11] = p.dilation[0], p.dilation[1]
    c.K = c.Cg * c.kh * c.kw
    c.L = c.Ho * c.Wo
    if max(c.K, max(c.L, c.Cout)) > INT_MAX:
        return set_error(ctx, EMBER_ERR_RUNTIME, "conv", "too large for 32-bit BLAS")
    c.direct = (c.kh == 1 and c.kw == 1 and p.stride[0] == 1 and p.stride[1] == 1
                and p.padding[0] == 0 and p.padding[1] == 0)
    # the direct kernels (_conv_direct.h): stride 1 and dilation 1 (the input gradient
    # also needs padding < kernel size); DIRECT_MIN_M to DIRECT_MAX_M outputs (the weight
    # gradient: output channels) and up to DIRECT_MAX_K taps per group: fewer outputs
    # waste the register tiles, and past the maxima BLAS's blocking wins
    c.dconv = False
    if (not c.direct and p.stride[0] == 1 and p.stride[1] == 1 and p.dilation[0] == 1
            and p.dilation[1] == 1):
        if op == EMBER_CONV_BACKWARD_INPUT:
            c.dK, c.dMr = c.Coutg * c.kh * c.kw, c.Cg
        else:
            c.dK, c.dMr = c.K, c.Coutg
        c.dconv = (DIRECT_MIN_M <= c.dMr <= DIRECT_MAX_M and c.dK <= DIRECT_MAX_K and (
            op != EMBER_CONV_BACKWARD_INPUT or (p.padding[0] < c.kh and p.padding[1] < c.kw)))
        if op == EMBER_CONV_BACKWARD_WEIGHT:
            # its tiles are 32 output channels (AVX-512 float) by 12 taps: a first layer's
            # few channels or taps run faster through BLAS
            c.dconv = c.dconv and c.dMr >= 32 and c.dK >= 12
        c.dMr = (c.dMr + EMBER_DC_M - 1) // EMBER_DC_M * EMBER_DC_M
    c.out = out.data
    c.a = a.data
    c.b = b.data
    c.c = cv.data if cv != NULL else NULL
    if c.N == 0 or c.Cout == 0 or c.L == 0 or c.K == 0:
        return set_error(ctx, EMBER_ERR_VALUE, "conv", "empty operands reach the core's "
                         "composite, not the kernel")
    if out.dtype == EMBER_FLOAT32:
        status = run(&c, <float *>NULL)
    else:
        status = run(&c, <double *>NULL)
    if status == EMBER_ERR_MEMORY:
        return set_error(ctx, status, "conv", "out of memory for the column buffers")
    return status


conv_capsule = PyCapsule_New(<void *><conv_fn>conv_kernel, "ember_cpu._conv.conv", NULL)
