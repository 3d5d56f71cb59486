# The `rnn` entry (ABI 6.2, abi.h EMBER_RNN_*): one LSTM layer in one direction over every
# step, the time loop here instead of ~30 ops per step in the core.  Per step: one GEMM
# with the hidden state (z = gi[t] + h_prev W_hh^T) and the fused gate arithmetic of
# _rnn_cells.h; the backward's weight gradient is two GEMMs over all steps at the end.
# The per-step products have few rows (the batch): with enough steps W_hh is packed once
# and they run in _small_gemm.h's kernel; threads then stay in one region through every
# step, sharing each step's column panels and then its rows, and meet at a spinning
# barrier (a region per step woke a passively waiting team each time).  Otherwise (few
# steps, one or many rows) the products run in BLAS.  Imported with BLAS at the first call
# (see _kernels); hands its entry over as the capsule `rnn_capsule`.
#
# BLAS is column-major: a row-major C (M x N) = op(A) op(B) is C^T = op(B)^T op(A)^T.
from cpython.pycapsule cimport PyCapsule_New
from cython.parallel cimport parallel, prange
from libc.limits cimport INT_MAX
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemm, sgemm

from ember_cpu._abi cimport (
    ember_ctx, ember_view, EMBER_OK, EMBER_ERR_MEMORY, EMBER_ERR_NOT_IMPLEMENTED,
    EMBER_ERR_VALUE, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_RNN_LSTM, EMBER_RNN_LSTM_BACKWARD,
)
from ember_cpu._blas cimport (
    MAX_BLAS_LIBS, blas_restore, blas_single, packed_gemm, packed_suits,
)
from ember_cpu._small_gemm cimport (
    ember_sg_mm_f32, ember_sg_mm_f64, ember_sg_pack_f32, ember_sg_pack_f64, ember_sg_panel_f32,
    ember_sg_panel_f64,
)
from ember_cpu._openmp_helpers cimport omp_get_num_threads, omp_get_thread_num
from ember_cpu._strided cimport num_threads, parallel_cutoff, set_error

cdef extern from "_rnn_cells.h":
    void ember_lstm_fwd_f32(float *z, const float *c_prev, float *c, float *h,
                            int64_t H) noexcept nogil
    void ember_lstm_fwd_f64(double *z, const double *c_prev, double *c, double *h,
                            int64_t H) noexcept nogil
    void ember_lstm_bwd_f32(float *dz, float *dc, const float *dh, const float *z,
                            const float *c, const float *c_prev, int64_t H) noexcept nogil
    void ember_lstm_bwd_f64(double *dz, double *dc, const double *dh, const double *z,
                            const double *c, const double *c_prev, int64_t H) noexcept nogil

cdef extern from "_spin_barrier.h":
    ctypedef struct ember_spin_barrier:
        pass
    void ember_barrier_init(ember_spin_barrier *b) noexcept nogil
    void ember_barrier_wait(ember_spin_barrier *b, int n) noexcept nogil

ctypedef fused real_t:
    float
    double

# a layer whose per-step product has fewer multiply-adds than this holds OpenBLAS to one
# thread (as _blas does for small products: waking its pool costs more than it saves)
DEF SMALL_GEMM = 1 << 22
# the packed kernel: rows per step (its tile is 4 rows; more than 128 and BLAS's cache
# blocking wins), steps per call (packing W_hh costs about one step's product), and the
# multiply-adds per step from which threads share the panels
DEF SG_MIN_ROWS = 4
DEF SG_MAX_ROWS = 128
DEF SG_MIN_STEPS = 4
DEF SG_PARALLEL = 1 << 18


ctypedef struct Packed:        # a B packed for _small_gemm.h; data NULL: the step uses BLAS
    void *data
    int64_t np, npanels, K, N


cdef int pack_b(Packed *pk, const real_t *b, int64_t K, int64_t N, int64_t sk, int64_t sn,
                int64_t M, int64_t T) noexcept nogil:
    """Pack B(k, n) = b[k * sk + n * sn] when the call suits the kernel; EMBER_ERR_MEMORY
    when it does but the buffer cannot be had."""
    pk.data = NULL
    if not (SG_MIN_ROWS <= M <= SG_MAX_ROWS and T >= SG_MIN_STEPS and K > 0 and N > 0):
        return EMBER_OK
    pk.np = ember_sg_panel_f32(N) if real_t is float else ember_sg_panel_f64(N)
    pk.npanels = (N + pk.np - 1) // pk.np
    pk.K, pk.N = K, N
    pk.data = malloc(pk.npanels * pk.np * K * sizeof(real_t))
    if pk.data == NULL:
        return EMBER_ERR_MEMORY
    if real_t is float:
        ember_sg_pack_f32(b, K, N, sk, sn, pk.np, <float *>pk.data)
    else:
        ember_sg_pack_f64(b, K, N, sk, sn, pk.np, <double *>pk.data)
    return EMBER_OK


cdef inline void packed_panels(const Packed *pk, int64_t M, const real_t *a, int64_t p0,
                               int64_t p1, const real_t *d, real_t *c) noexcept nogil:
    if real_t is float:
        ember_sg_mm_f32(pk.np, M, pk.N, pk.K, a, pk.K, 1, <const float *>pk.data, p0, p1, d, c)
    else:
        ember_sg_mm_f64(pk.np, M, pk.N, pk.K, a, pk.K, 1, <const double *>pk.data, p0, p1, d, c)


cdef int team_size(const Packed *pk, int64_t M, int nt) noexcept nogil:
    """Threads for the steps of a packed layer: they share each step's panels and rows and
    stay in one region through every step (ember_spin_barrier between the phases), so a
    step that splits pays no wake-up; one thread below SG_PARALLEL multiply-adds a step."""
    if nt > 1 and pk.npanels > 1 and M * pk.N * pk.K >= SG_PARALLEL:
        return <int>min(<int64_t>nt, pk.npanels)
    return 1


cdef void packed_steps(bint backward, const ember_view *const *v, bint reverse,
                       const Packed *pk, real_t *buf, int64_t M, int nt) noexcept nogil:
    """The steps of a layer with W_hh packed (forward: `buf` is its scratch, backward: its
    dh buffers), by a team of team_size threads in one region or by this thread alone."""
    cdef ember_spin_barrier bar
    cdef int team = team_size(pk, M, nt)
    ember_barrier_init(&bar)
    if team > 1:
        with parallel(num_threads=team):
            thread_steps(backward, v, reverse, pk, buf, omp_get_thread_num(),
                         omp_get_num_threads(), &bar)
    else:
        thread_steps(backward, v, reverse, pk, buf, 0, 1, &bar)


cdef inline void thread_steps(bint backward, const ember_view *const *v, bint reverse,
                              const Packed *pk, real_t *buf, int tid, int n,
                              ember_spin_barrier *bar) noexcept nogil:
    if backward:
        packed_backward_steps(v, reverse, pk, buf, tid, n, bar)
    else:
        packed_forward_steps(v, reverse, pk, buf, tid, n, bar)


cdef inline int64_t panel_at(const Packed *pk, int64_t tid, int n) noexcept nogil:
    """The first panel of thread `tid`'s share of the columns, rounded to a panel."""
    if tid >= n:
        return pk.npanels
    return min((tid * pk.N // n + pk.np // 2) // pk.np, pk.npanels)


cdef inline void share_panels(const Packed *pk, int tid, int n, int64_t *p0,
                              int64_t *p1) noexcept nogil:
    """Thread `tid` of `n`'s panels [p0, p1): equal shares of the columns, so a last, part
    panel counts for what it holds (200 columns in 16-wide panels went 7 | 5.5 panels:
    the team waited on the first thread's 27% more work every step; now 6 | 6.5)."""
    p0[0] = panel_at(pk, tid, n)
    p1[0] = panel_at(pk, tid + 1, n)


cdef inline void share(int64_t count, int tid, int n, int64_t *lo, int64_t *hi) noexcept nogil:
    """Thread `tid` of `n`'s part [lo, hi) of `count` items."""
    cdef int64_t per = (count + n - 1) // n
    lo[0] = min(tid * per, count)
    hi[0] = min(lo[0] + per, count)


cdef void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const real_t *a,
               int64_t lda, const real_t *b, int64_t ldb, real_t beta, real_t *c,
               int64_t ldc) noexcept nogil:
    """Column-major C (m x n) = op(A) op(B) + beta C."""
    cdef int mm = <int>m, nn = <int>n, kk = <int>k, la = <int>lda, lb = <int>ldb
    cdef int lc = <int>ldc
    cdef real_t one = 1
    if real_t is float:
        sgemm(&ta, &tb, &mm, &nn, &kk, &one, <float *>a, &la, <float *>b, &lb, &beta, c, &lc)
    else:
        dgemm(&ta, &tb, &mm, &nn, &kk, &one, <double *>a, &la, <double *>b, &lb, &beta, c,
              &lc)


# row-major products: C (M x N) = A (M x K) B (N x K)^T / A (M x K) B (K x N) /
# A (K x M)^T B (K x N), each + beta C
cdef inline void mm_nt(int64_t M, int64_t N, int64_t K, const real_t *A, const real_t *B,
                       real_t beta, real_t *C) noexcept nogil:
    gemm(c'T', c'N', N, M, K, B, K, A, K, beta, C, N)


cdef inline void mm_nn(int64_t M, int64_t N, int64_t K, const real_t *A, const real_t *B,
                       real_t beta, real_t *C) noexcept nogil:
    gemm(c'N', c'N', N, M, K, B, N, A, K, beta, C, N)


cdef inline void mm_tn(int64_t M, int64_t N, int64_t K, const real_t *A, const real_t *B,
                       real_t beta, real_t *C) noexcept nogil:
    gemm(c'N', c'T', N, M, K, B, N, A, M, beta, C, N)


cdef inline void cell_fwd(real_t *z, const real_t *c_prev, real_t *c, real_t *h,
                          int64_t H) noexcept nogil:
    if real_t is float:
        ember_lstm_fwd_f32(z, c_prev, c, h, H)
    else:
        ember_lstm_fwd_f64(z, c_prev, c, h, H)


cdef inline void cell_bwd(real_t *dz, real_t *dc, const real_t *dh, const real_t *z,
                          const real_t *c, const real_t *c_prev, int64_t H) noexcept nogil:
    if real_t is float:
        ember_lstm_bwd_f32(dz, dc, dh, z, c, c_prev, H)
    else:
        ember_lstm_bwd_f64(dz, dc, dh, z, c, c_prev, H)


cdef inline int64_t step_t(int64_t s, int64_t T, bint reverse) noexcept nogil:
    """The time index of the s-th step run."""
    return T - 1 - s if reverse else s


cdef int lstm_forward(const ember_view *const *v, bint reverse, real_t *tag) noexcept nogil:
    # v = {y, hn, cn, gates, cs, gi, h0, c0, w_hh}
    cdef int64_t T = v[5].sizes[0], B = v[5].sizes[1], H = v[6].sizes[1]
    cdef int64_t G = 4 * H, s, t, b
    cdef real_t *y = <real_t *>v[0].data
    cdef real_t *gates = <real_t *>v[3].data if v[3] != NULL else NULL
    cdef real_t *cs = <real_t *>v[4].data if v[4] != NULL else NULL
    cdef const real_t *gi = <const real_t *>v[5].data
    cdef const real_t *w = <const real_t *>v[8].data
    cdef const real_t *h_prev = <const real_t *>v[6].data
    cdef const real_t *c_prev = <const real_t *>v[7].data
    cdef real_t *scratch = NULL
    cdef real_t *z
    cdef real_t *c
    cdef int nt = num_threads()
    cdef bint rows_parallel = nt > 1 and B > 1 and B * G >= parallel_cutoff()
    cdef Packed pk
    # W_hh^T: B(k, n) = w[n * H + k]
    if pack_b(&pk, w, H, G, 1, H, B, T) != EMBER_OK:
        return EMBER_ERR_MEMORY
    # without saved gates / cell states: one step's z, and two cell buffers in turn
    if gates == NULL or cs == NULL:
        scratch = <real_t *>malloc((G + 2 * H) * B * sizeof(real_t) + 1)
        if scratch == NULL:
            free(pk.data)
            return EMBER_ERR_MEMORY
    if pk.data != NULL:
        packed_steps(False, v, reverse, &pk, scratch, B, nt)
    else:
        for s in range(T):
            t = step_t(s, T, reverse)
            z = gates + t * B * G if gates != NULL else scratch
            c = cs + t * B * H if cs != NULL else scratch + B * G + (s % 2) * B * H
            memcpy(z, gi + t * B * G, B * G * sizeof(real_t))
            if H > 0:
                mm_nt(B, G, H, h_prev, w, <real_t>1, z)
            if rows_parallel:
                for b in prange(B, nogil=True, schedule='static', num_threads=nt):
                    cell_fwd(z + b * G, c_prev + b * H, c + b * H, y + (t * B + b) * H, H)
            else:
                for b in range(B):
                    cell_fwd(z + b * G, c_prev + b * H, c + b * H, y + (t * B + b) * H, H)
            h_prev = y + t * B * H
            c_prev = c
    if T > 0:                   # the last step's h and c
        t = step_t(T - 1, T, reverse)
        h_prev = y + t * B * H
        c_prev = cs + t * B * H if cs != NULL else scratch + B * G + ((T - 1) % 2) * B * H
    memcpy(v[1].data, h_prev, B * H * sizeof(real_t))
    memcpy(v[2].data, c_prev, B * H * sizeof(real_t))
    free(scratch)
    free(pk.data)
    return EMBER_OK


cdef void packed_forward_steps(const ember_view *const *v, bint reverse, const Packed *pk,
                               real_t *scratch, int tid, int n,
                               ember_spin_barrier *bar) noexcept nogil:
    """lstm_forward's steps with W_hh packed, as thread `tid` of `n`: each step's product
    over this thread's panels, then the cells of its rows."""
    cdef int64_t T = v[5].sizes[0], B = v[5].sizes[1], H = v[6].sizes[1]
    cdef int64_t G = 4 * H, s, t, b, p0, p1, r0, r1
    cdef real_t *y = <real_t *>v[0].data
    cdef real_t *gates = <real_t *>v[3].data if v[3] != NULL else NULL
    cdef real_t *cs = <real_t *>v[4].data if v[4] != NULL else NULL
    cdef const real_t *gi = <const real_t *>v[5].data
    cdef const real_t *h_prev = <const real_t *>v[6].data
    cdef const real_t *c_prev = <const real_t *>v[7].data
    cdef real_t *z
    cdef real_t *c
    share_panels(pk, tid, n, &p0, &p1)
    share(B, tid, n, &r0, &r1)
    for s in range(T):
        t = step_t(s, T, reverse)
        z = gates + t * B * G if gates != NULL else scratch
        c = cs + t * B * H if cs != NULL else scratch + B * G + (s % 2) * B * H
        packed_panels(pk, B, h_prev, p0, p1, gi + t * B * G, z)
        ember_barrier_wait(bar, n)          # z complete
        for b in range(r0, r1):
            cell_fwd(z + b * G, c_prev + b * H, c + b * H, y + (t * B + b) * H, H)
        ember_barrier_wait(bar, n)          # this step's h complete
        h_prev = y + t * B * H
        c_prev = c


cdef int lstm_backward(const ember_view *const *v, bint reverse, real_t *tag) noexcept nogil:
    # v = {dgi, dh0, dc0, dw_hh, dy, dhn, dcn, gates, cs, y, h0, c0, w_hh}; the step loop
    # (dz, dh0, dc0); lstm_weight_grad gives dw_hh
    cdef int64_t T = v[0].sizes[0], B = v[0].sizes[1], H = v[10].sizes[1]
    cdef int64_t G = 4 * H, BH = B * H, s, t, b, k
    cdef real_t *dgi = <real_t *>v[0].data
    cdef const real_t *dy = <const real_t *>v[4].data if v[4] != NULL else NULL
    cdef const real_t *gates = <const real_t *>v[7].data
    cdef const real_t *cs = <const real_t *>v[8].data
    cdef const real_t *c0 = <const real_t *>v[11].data
    cdef const real_t *w = <const real_t *>v[12].data
    cdef const real_t *c_prev
    cdef real_t *dz
    cdef Packed pk
    # W_hh itself: B(k, n) = w[k * H + n]
    if pack_b(&pk, w, G, H, H, 1, B, T) != EMBER_OK:
        return EMBER_ERR_MEMORY
    # dh: this step's total dh; dhp: the dh_prev the GEMM hands the earlier step; dc in place
    cdef real_t *dh = <real_t *>calloc(3 * BH + 1, sizeof(real_t))
    if dh == NULL:
        free(pk.data)
        return EMBER_ERR_MEMORY
    cdef real_t *dhp = dh + BH
    cdef real_t *dc = dh + 2 * BH
    cdef int nt = num_threads()
    cdef bint rows_parallel = nt > 1 and B > 1 and B * G >= parallel_cutoff()
    if v[5] != NULL:
        memcpy(dhp, v[5].data, BH * sizeof(real_t))
    if v[6] != NULL:
        memcpy(dc, v[6].data, BH * sizeof(real_t))
    if pk.data != NULL:
        packed_steps(True, v, reverse, &pk, dh, B, nt)
    else:
        for s in range(T - 1, -1, -1):
            t = step_t(s, T, reverse)
            c_prev = cs + step_t(s - 1, T, reverse) * BH if s > 0 else c0
            for k in range(BH):
                dh[k] = dhp[k] + (dy[t * BH + k] if dy != NULL else 0)
            dz = dgi + t * B * G
            if rows_parallel:
                for b in prange(B, nogil=True, schedule='static', num_threads=nt):
                    cell_bwd(dz + b * G, dc + b * H, dh + b * H, gates + (t * B + b) * G,
                             cs + (t * B + b) * H, c_prev + b * H, H)
            else:
                for b in range(B):
                    cell_bwd(dz + b * G, dc + b * H, dh + b * H, gates + (t * B + b) * G,
                             cs + (t * B + b) * H, c_prev + b * H, H)
            if H > 0:
                mm_nn(B, H, G, dz, w, <real_t>0, dhp)
    memcpy(v[1].data, dhp, BH * sizeof(real_t))
    memcpy(v[2].data, dc, BH * sizeof(real_t))
    free(dh)
    free(pk.data)
    return EMBER_OK


cdef void packed_backward_steps(const ember_view *const *v, bint reverse, const Packed *pk,
                                real_t *dh, int tid, int n,
                                ember_spin_barrier *bar) noexcept nogil:
    """lstm_backward's steps with W_hh packed, as thread `tid` of `n`: the cells of this
    thread's rows (dh = dh_prev + dy, then dz and dc), then the product dz W_hh over its
    panels.  dh, dhp and dc are lstm_backward's buffers (dhp = dh + BH, dc = dh + 2 BH)."""
    cdef int64_t T = v[0].sizes[0], B = v[0].sizes[1], H = v[10].sizes[1]
    cdef int64_t G = 4 * H, BH = B * H, s, t, b, k, p0, p1, r0, r1
    cdef real_t *dgi = <real_t *>v[0].data
    cdef const real_t *dy = <const real_t *>v[4].data if v[4] != NULL else NULL
    cdef const real_t *gates = <const real_t *>v[7].data
    cdef const real_t *cs = <const real_t *>v[8].data
    cdef const real_t *c0 = <const real_t *>v[11].data
    cdef const real_t *c_prev
    cdef real_t *dhp = dh + BH
    cdef real_t *dc = dh + 2 * BH
    cdef real_t *dz
    share_panels(pk, tid, n, &p0, &p1)
    share(B, tid, n, &r0, &r1)
    for s in range(T - 1, -1, -1):
        t = step_t(s, T, reverse)
        c_prev = cs + step_t(s - 1, T, reverse) * BH if s > 0 else c0
        for k in range(r0 * H, r1 * H):
            dh[k] = dhp[k] + (dy[t * BH + k] if dy != NULL else 0)
        dz = dgi + t * B * G
        for b in range(r0, r1):
            cell_bwd(dz + b * G, dc + b * H, dh + b * H, gates + (t * B + b) * G,
                     cs + (t * B + b) * H, c_prev + b * H, H)
        ember_barrier_wait(bar, n)          # dz complete
        packed_panels(pk, B, dz, p0, p1, <const real_t *>NULL, dhp)
        ember_barrier_wait(bar, n)          # dh_prev complete


cdef int lstm_weight_grad(const ember_view *const *v, bint reverse,
                          real_t *tag) noexcept nogil:
    """dW_hh = sum over steps of dz^T h_prev, once lstm_backward wrote dz (dgi): the first
    step run reads h0, the others the previous step's output, which for the whole run is
    one block of y.  Two products over every step: _gemm.h's on the team (BLAS with its
    threads when that path is off).  EMBER_OK or EMBER_ERR_MEMORY."""
    cdef int64_t T = v[0].sizes[0], B = v[0].sizes[1], H = v[10].sizes[1]
    cdef int64_t G = 4 * H, BH = B * H, t
    cdef const real_t *dgi = <const real_t *>v[0].data
    cdef real_t *dw = <real_t *>v[3].data
    cdef const real_t *y = <const real_t *>v[9].data
    cdef const real_t *h0 = <const real_t *>v[10].data
    if H == 0:
        return EMBER_OK
    t = step_t(0, T, reverse)
    if weight_product(G, H, B, dgi + t * B * G, h0, False, dw) != EMBER_OK:
        return EMBER_ERR_MEMORY
    if T > 1:
        # step t = 0 .. T-2 read y[t + 1] (reverse), else step t = 1 .. T-1 read y[t - 1]
        return weight_product(G, H, (T - 1) * B, dgi if reverse else dgi + B * G,
                              y + BH if reverse else y, True, dw)
    return EMBER_OK


cdef int weight_product(int64_t M, int64_t N, int64_t K, const real_t *A, const real_t *B,
                        bint add, real_t *C) noexcept nogil:
    """C (M x N) (+)= A^T B, A (K x M) and B (K x N) rows."""
    cdef int64_t sa[3], sb[3], so[2]
    if not packed_suits(sizeof(real_t) == 8, M, N):
        mm_tn(M, N, K, A, B, <real_t>(1 if add else 0), C)
        return EMBER_OK
    sa[0], sa[1], sa[2] = 0, 1, M
    sb[0], sb[1], sb[2] = 0, N, 1
    so[0], so[1] = 0, N
    return packed_gemm(sizeof(real_t) == 8, 1, M, N, K, <const char *>A, sa, <const char *>B,
                       sb, <char *>C, so, add)


cdef int check_shapes(ember_ctx *ctx, int32_t op, const ember_view *const *v) noexcept nogil:
    """The op's operands are present, of one floating dtype and of consistent shapes."""
    cdef int n = 9 if op == EMBER_RNN_LSTM else 13, k
    cdef int64_t T, B, H
    cdef int dt = -1
    cdef bint optional
    for k in range(n):
        optional = (op == EMBER_RNN_LSTM and (k == 3 or k == 4)) or \
            (op == EMBER_RNN_LSTM_BACKWARD and 4 <= k <= 6)
        if v[k] == NULL:
            if not optional:
                return set_error(ctx, EMBER_ERR_VALUE, "lstm", "a required operand is NULL")
            continue
        if dt < 0:
            dt = v[k].dtype
        elif v[k].dtype != dt:
            return set_error(ctx, EMBER_ERR_VALUE, "lstm", "operands must share one dtype")
    if dt != EMBER_FLOAT32 and dt != EMBER_FLOAT64:
        return EMBER_ERR_NOT_IMPLEMENTED
    if op == EMBER_RNN_LSTM:
        T, B, H = v[5].sizes[0], v[5].sizes[1], v[6].sizes[1]
    else:
        T, B, H = v[0].sizes[0], v[0].sizes[1], v[10].sizes[1]
    if v[5 if op == EMBER_RNN_LSTM else 0].sizes[2] != 4 * H:
        return set_error(ctx, EMBER_ERR_VALUE, "lstm", "gate width is not 4 * hidden_size")
    if T * B * 4 * H >= INT_MAX or 4 * H >= INT_MAX:
        return set_error(ctx, EMBER_ERR_VALUE, "lstm", "too large for BLAS's int sizes")
    return EMBER_OK


cdef int rnn_kernel(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                    int32_t reverse) noexcept nogil:
    if op != EMBER_RNN_LSTM and op != EMBER_RNN_LSTM_BACKWARD:
        return EMBER_ERR_NOT_IMPLEMENTED
    cdef int rc = check_shapes(ctx, op, v)
    if rc != EMBER_OK:
        return rc
    cdef const ember_view *gi = v[5] if op == EMBER_RNN_LSTM else v[0]
    cdef int64_t B = gi.sizes[1], H = gi.sizes[2] // 4
    cdef int saved[MAX_BLAS_LIBS]
    cdef bint small = B * 4 * H * H < SMALL_GEMM
    if small:
        blas_single(saved)
    if gi.dtype == EMBER_FLOAT32:
        rc = lstm_forward(v, reverse, <float *>NULL) if op == EMBER_RNN_LSTM else \
            lstm_backward(v, reverse, <float *>NULL)
    else:
        rc = lstm_forward(v, reverse, <double *>NULL) if op == EMBER_RNN_LSTM else \
            lstm_backward(v, reverse, <double *>NULL)
    if small:
        blas_restore(saved)
    if rc == EMBER_OK and op == EMBER_RNN_LSTM_BACKWARD:
        if gi.dtype == EMBER_FLOAT32:
            rc = lstm_weight_grad(v, reverse, <float *>NULL)
        else:
            rc = lstm_weight_grad(v, reverse, <double *>NULL)
    if rc == EMBER_ERR_MEMORY:
        return set_error(ctx, EMBER_ERR_MEMORY, "lstm", "out of memory")
    return rc


ctypedef int (*rnn_fn)(ember_ctx *, int32_t, const ember_view *const *, int32_t) noexcept nogil
rnn_capsule = PyCapsule_New(<void *><rnn_fn>rnn_kernel, "ember_cpu._rnn.rnn", NULL)
