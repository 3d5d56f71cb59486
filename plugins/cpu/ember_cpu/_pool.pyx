# The fused pooling kernels (the optional `pool` table entry): max, average and adaptive
# pooling and their backward ops over the planes of contiguous [N, C, H, W] float32/float64
# tensors.  Each plane is worked on by one thread in a fixed order, so results do not
# depend on the thread count; planes run in parallel above parallel_cutoff() elements.
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset

from ember_cpu._abi cimport (
    ember_ctx, ember_pool_params, ember_view, EMBER_OK, EMBER_ERR_INDEX, EMBER_ERR_TYPE,
    EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_FLOAT32, EMBER_FLOAT64,
    EMBER_INT64, EMBER_POOL_ADAPTIVE_AVG, EMBER_POOL_ADAPTIVE_AVG_BACKWARD,
    EMBER_POOL_ADAPTIVE_MAX, EMBER_POOL_AVG, EMBER_POOL_AVG_BACKWARD, EMBER_POOL_COUNT,
    EMBER_POOL_MAX, EMBER_POOL_MAX_BACKWARD,
)
from ember_cpu._strided cimport contiguous, run_items, set_error

cdef extern from "_pool_rows.h":
    void ember_max2x2_row_f32(const float *x, int64_t W, int64_t base, float *y,
                              int64_t *ix, int64_t n) noexcept nogil
    void ember_max2x2_row_f64(const double *x, int64_t W, int64_t base, double *y,
                              int64_t *ix, int64_t n) noexcept nogil
    void ember_max_window_f32(const float *x, int64_t W, int64_t base, int64_t kh,
                              int64_t kw, int64_t dh, int64_t dw, float *y,
                              int64_t *ix) noexcept nogil
    void ember_max_window_f64(const double *x, int64_t W, int64_t base, int64_t kh,
                              int64_t kw, int64_t dh, int64_t dw, double *y,
                              int64_t *ix) noexcept nogil

ctypedef fused real_t:
    float
    double


ctypedef struct PoolJob:
    int op
    const ember_pool_params *p
    char *out                  # the op's output planes (grad_input for the backward ops)
    int64_t *indices
    const char *a              # the op's input planes (grad_output for the backward ops)
    int64_t H, W, Ho, Wo       # input and output plane sizes


# window o along one dim: taps start + i * step for i < count (some may fall outside)
cdef inline void window(const PoolJob *j, bint adaptive, int d, int64_t o, int64_t size,
                        int64_t out, int64_t *start, int64_t *count,
                        int64_t *step) noexcept nogil:
    if adaptive:
        start[0] = o * size // out
        count[0] = ((o + 1) * size + out - 1) // out - start[0]
        step[0] = 1
    else:
        start[0] = o * j.p.stride[d] - j.p.padding[d]
        count[0] = j.p.kernel[d]
        step[0] = j.p.dilation[d]


# outputs [lo, hi) along one dim whose windows lie inside the input (no bounds checks)
cdef inline void interior(const PoolJob *j, int d, int64_t size, int64_t out, int64_t *lo,
                          int64_t *hi) noexcept nogil:
    cdef int64_t s = j.p.stride[d], pad = j.p.padding[d]
    cdef int64_t last = size - 1 - (j.p.kernel[d] - 1) * j.p.dilation[d] + pad
    lo[0] = min((pad + s - 1) // s, out)
    hi[0] = max(min(last // s + 1, out), lo[0]) if last >= 0 else lo[0]


# output (oh, ow) whose window (rows hs + i * hst, i < hc) may reach past the input
cdef inline void max_edge(const PoolJob *j, bint adaptive, const real_t *x, real_t *y,
                          int64_t *ix, int64_t oh, int64_t ow, int64_t hs, int64_t hc,
                          int64_t hst) noexcept nogil:
    cdef int64_t ws, wc, wst, i, k, ih, iw, best_i = -1
    cdef real_t v, best = 0
    window(j, adaptive, 1, ow, j.W, j.Wo, &ws, &wc, &wst)
    for i in range(hc):
        ih = hs + i * hst
        if ih < 0 or ih >= j.H:
            continue
        for k in range(wc):
            iw = ws + k * wst
            if iw < 0 or iw >= j.W:
                continue
            v = x[ih * j.W + iw]
            # the first maximum wins; a NaN beats any number (the last NaN, as PyTorch's)
            if best_i < 0 or v > best or v != v:
                best = v
                best_i = ih * j.W + iw
    if best_i < 0:
        # no tap inside the input (dilated taps over the padding): PyTorch's -inf, at the
        # first tap past the padding
        ih, iw = hs, ws
        while ih < 0:
            ih += hst
        while iw < 0:
            iw += wst
        best, best_i = -INFINITY, ih * j.W + iw
    y[oh * j.Wo + ow] = best
    ix[oh * j.Wo + ow] = best_i


cdef void max_plane(const PoolJob *j, int64_t pl, real_t *tag) noexcept nogil:
    cdef const real_t *x = <const real_t *>j.a + pl * j.H * j.W
    cdef real_t *y = <real_t *>j.out + pl * j.Ho * j.Wo
    cdef int64_t *ix = j.indices + pl * j.Ho * j.Wo
    cdef bint adaptive = j.op == EMBER_POOL_ADAPTIVE_MAX
    cdef int64_t oh, ow, hs, hc, hst, ws
    cdef int64_t h_lo = 0, h_hi = 0, w_lo = 0, w_hi = 0
    # 2x2 windows of stride 2, no padding or dilation: the interior starts at column 0
    cdef bint two = not adaptive and j.p.kernel[0] == 2 and j.p.kernel[1] == 2 and \
        j.p.stride[0] == 2 and j.p.stride[1] == 2 and j.p.dilation[0] == 1 and \
        j.p.dilation[1] == 1 and j.p.padding[0] == 0 and j.p.padding[1] == 0
    if not adaptive:
        interior(j, 0, j.H, j.Ho, &h_lo, &h_hi)
        interior(j, 1, j.W, j.Wo, &w_lo, &w_hi)
    for oh in range(j.Ho):
        window(j, adaptive, 0, oh, j.H, j.Ho, &hs, &hc, &hst)
        if not (h_lo <= oh < h_hi and w_lo < w_hi):
            for ow in range(j.Wo):
                max_edge(j, adaptive, x, y, ix, oh, ow, hs, hc, hst)
            continue
        # the windows inside the plane, without bounds checks; the edges on either side
        if two:
            if real_t is float:
                ember_max2x2_row_f32(x + hs * j.W, j.W, hs * j.W, y + oh * j.Wo,
                                     ix + oh * j.Wo, w_hi)
            else:
                ember_max2x2_row_f64(x + hs * j.W, j.W, hs * j.W, y + oh * j.Wo,
                                     ix + oh * j.Wo, w_hi)
        else:
            for ow in range(w_lo, w_hi):
                ws = ow * j.p.stride[1] - j.p.padding[1]
                if real_t is float:
                    ember_max_window_f32(x + hs * j.W + ws, j.W, hs * j.W + ws, hc,
                                         j.p.kernel[1], hst, j.p.dilation[1],
                                         y + oh * j.Wo + ow, ix + oh * j.Wo + ow)
                else:
                    ember_max_window_f64(x + hs * j.W + ws, j.W, hs * j.W + ws, hc,
                                         j.p.kernel[1], hst, j.p.dilation[1],
                                         y + oh * j.Wo + ow, ix + oh * j.Wo + ow)
        for ow in range(w_lo):
            max_edge(j, adaptive, x, y, ix, oh, ow, hs, hc, hst)
        for ow in range(w_hi, j.Wo):
            max_edge(j, adaptive, x, y, ix, oh, ow, hs, hc, hst)


# the averaging window of one output along one dim: [lo, hi) inside the input and the
# divisor factor
cdef inline void avg_bounds(const PoolJob *j, bint adaptive, int d, int64_t o, int64_t size,
                            int64_t out, int64_t *lo, int64_t *hi,
                            int64_t *factor) noexcept nogil:
    cdef int64_t s, c, st, end
    window(j, adaptive, d, o, size, out, &s, &c, &st)
    if adaptive:
        lo[0], hi[0], factor[0] = s, s + c, c
        return
    end = min(s + c, size + j.p.padding[d])
    factor[0] = end - s
    lo[0] = max(s, 0)
    hi[0] = min(end, size)
    if not j.p.count_include_pad:
        factor[0] = hi[0] - lo[0]


cdef void avg_plane(const PoolJob *j, int64_t pl, real_t *tag) noexcept nogil:
    cdef bint backward = j.op == EMBER_POOL_AVG_BACKWARD or \
        j.op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD
    cdef bint adaptive = j.op == EMBER_POOL_ADAPTIVE_AVG or \
        j.op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD
    cdef real_t *big = <real_t *>j.out if backward else <real_t *>j.a
    cdef real_t *small = <real_t *>j.a if backward else <real_t *>j.out
    cdef int64_t oh, ow, h0, h1, fh, w0, w1, fw, ih, iw, div
    cdef real_t s, share
    big += pl * j.H * j.W
    small += pl * j.Ho * j.Wo
    if backward:
        memset(big, 0, j.H * j.W * sizeof(real_t))
    for oh in range(j.Ho):
        avg_bounds(j, adaptive, 0, oh, j.H, j.Ho, &h0, &h1, &fh)
        for ow in range(j.Wo):
            avg_bounds(j, adaptive, 1, ow, j.W, j.Wo, &w0, &w1, &fw)
            div = j.p.divisor_override if j.p.divisor_override > 0 and not adaptive \
                else fh * fw
            if backward:
                share = small[oh * j.Wo + ow] / <real_t>div
                for ih in range(h0, h1):
                    for iw in range(w0, w1):
                        big[ih * j.W + iw] += share
            else:
                s = 0
                for ih in range(h0, h1):
                    for iw in range(w0, w1):
                        s = s + big[ih * j.W + iw]
                small[oh * j.Wo + ow] = s / <real_t>div


# grad_input plane = 0, then += grad_output at the indices; 1 on an index out of range
cdef int max_backward_plane(const PoolJob *j, int64_t pl, real_t *tag) noexcept nogil:
    cdef real_t *gi = <real_t *>j.out + pl * j.H * j.W
    cdef const real_t *g = <const real_t *>j.a + pl * j.Ho * j.Wo
    cdef const int64_t *ix = j.indices + pl * j.Ho * j.Wo
    cdef int64_t o, i, n = j.H * j.W
    memset(gi, 0, n * sizeof(real_t))
    for o in range(j.Ho * j.Wo):
        i = ix[o]
        if i < 0 or i >= n:
            return 1
        gi[i] += g[o]
    return 0


cdef int run_plane(const PoolJob *j, int64_t pl, real_t *tag) noexcept nogil:
    if j.op == EMBER_POOL_MAX or j.op == EMBER_POOL_ADAPTIVE_MAX:
        max_plane(j, pl, tag)
    elif j.op == EMBER_POOL_MAX_BACKWARD:
        return max_backward_plane(j, pl, tag)
    else:
        avg_plane(j, pl, tag)
    return 0


ctypedef struct PlaneJob:      # run_items' view of a pool call: its planes, typed
    const PoolJob *j
    bint f64
    int bad                    # a plane met an index out of range


cdef void plane_item(void *job, int64_t pl) noexcept nogil:
    cdef PlaneJob *pj = <PlaneJob *>job
    cdef int bad
    if pj.f64:
        bad = run_plane(pj.j, pl, <double *>NULL)
    else:
        bad = run_plane(pj.j, pl, <float *>NULL)
    if bad:
        pj.bad = 1             # only ever set: a race between planes writes the same value


cdef int pool_kernel(ember_ctx *ctx, int32_t op, const ember_pool_params *p,
                     const ember_view *out, const ember_view *indices,
                     const ember_view *a) noexcept nogil:
    cdef PoolJob j
    cdef const ember_view *big
    cdef const ember_view *small
    cdef bint backward = op == EMBER_POOL_MAX_BACKWARD or op == EMBER_POOL_AVG_BACKWARD or \
        op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD
    cdef bint needs_indices = op == EMBER_POOL_MAX or op == EMBER_POOL_MAX_BACKWARD or \
        op == EMBER_POOL_ADAPTIVE_MAX
    cdef int64_t planes
    if op < 0 or op >= EMBER_POOL_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "pool", "unknown op code")
    if backward:
        big, small = out, a
    else:
        big, small = a, out
    if out.ndim != 4 or a.ndim != 4 or big.sizes[0] != small.sizes[0] or \
            big.sizes[1] != small.sizes[1]:
        return set_error(ctx, EMBER_ERR_VALUE, "pool", "expects [N, C, H, W] operands")
    if needs_indices and (indices == NULL or indices.dtype != EMBER_INT64 or
                          indices.ndim != 4 or not contiguous(indices)):
        return set_error(ctx, EMBER_ERR_VALUE, "pool", "needs contiguous int64 indices")
    if a.dtype != out.dtype or (out.dtype != EMBER_FLOAT32 and out.dtype != EMBER_FLOAT64):
        return set_error(ctx, EMBER_ERR_TYPE, "pool", "expects float32 or float64 operands")
    if not contiguous(out) or not contiguous(a):
        return set_error(ctx, EMBER_ERR_VALUE, "pool", "expects contiguous operands")
    j.op = op
    j.p = p
    j.out = out.data
    j.a = a.data
    j.indices = <int64_t *>indices.data if needs_indices else NULL
    j.H, j.W, j.Ho, j.Wo = big.sizes[2], big.sizes[3], small.sizes[2], small.sizes[3]
    planes = big.sizes[0] * big.sizes[1]
    if planes == 0 or j.H * j.W == 0:
        return EMBER_OK
    cdef PlaneJob pj
    pj.j, pj.f64, pj.bad = &j, out.dtype == EMBER_FLOAT64, 0
    run_items(plane_item, &pj, planes, planes * (j.H * j.W + j.Ho * j.Wo))
    if pj.bad:
        return set_error(ctx, EMBER_ERR_INDEX, "max_pool2d_with_indices_backward",
                         "an index is out of range for its input plane")
    return EMBER_OK
