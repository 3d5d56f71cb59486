// Convolution kernels of one dtype (float32/float64) for csrc/conv.c, which runs the GEMMs
// in cuBLAS: im2col, its adjoint written as a gather (col2im), the bias broadcast and the
// bias gradient.  No atomics: every output element is written by one thread, summing in a
// fixed order, so results do not depend on scheduling.
//
// The column buffer of a chunk of nc images is [C * kh * kw, nc, Ho * Wo]: row
// r = (c * kh + ki) * kw + kj (group g's K = Cg * kh * kw rows are contiguous), then the
// image, then the output position.  Per group, the chunk's columns are one K x (nc * L)
// row-major matrix, and image n's part of it starts n * L further on.

// csrc/conv.c's conv_geom, by value
struct ConvGeom {
    i64 C, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
    i64 nc;                   // images in the chunk
};

// f(l, r, c) for this thread's positions l = r * width + c of [l0, l1): l0 + threadIdx.x,
// then every blockDim.x, with (r, c) stepped without a division.  The host keeps
// positions below 2^30.
template <typename F>
__device__ __forceinline__ void plane_loop(int l0, int l1, int width, F f) {
    const int T = blockDim.x;
    int l = l0 + threadIdx.x;
    if (l >= l1) return;
    int r = l / width, c = l - r * width;
    const int dr = T / width, dc = T - dr * width;
    for (; l < l1; l += T) {
        f(l, r, c);
        r += dr;
        c += dc;
        if (c >= width) {
            c -= width;
            r++;
        }
    }
}

// the segment [l0, l1) of a plane of `size` positions that blockIdx.z covers
__device__ __forceinline__ void segment(int size, int span, int *l0, int *l1) {
    *l0 = (int)blockIdx.z * span;
    *l1 = min(size, *l0 + span);
}

// col[r, n, :] for row r = blockIdx.x and image n = blockIdx.y: the tap (ki, kj) of channel
// c at every output position, zero in the padding
extern "C" __global__ void im2col(const scalar_t *__restrict__ x, scalar_t *__restrict__ col,
                                  ConvGeom g, int span) {
    const int r = blockIdx.x, n = blockIdx.y;
    const int kw = (int)g.kw, kh = (int)g.kh;
    const int kj = r % kw, t = r / kw, ki = t % kh, c = t / kh;
    const int H = (int)g.H, W = (int)g.W, sh = (int)g.sh, sw = (int)g.sw;
    const int L = (int)(g.Ho * g.Wo);
    const int h0 = ki * (int)g.dh - (int)g.ph, w0 = kj * (int)g.dw - (int)g.pw;
    const scalar_t *xp = x + ((i64)n * g.C + c) * H * W;
    scalar_t *cp = col + ((i64)r * g.nc + n) * L;
    int l0, l1;
    segment(L, span, &l0, &l1);
    plane_loop(l0, l1, (int)g.Wo, [&](int l, int oh, int ow) {
        const int ih = h0 + oh * sh, iw = w0 + ow * sw;
        cp[l] = ((unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W) ? xp[ih * W + iw]
                                                                           : scalar_t(0);
    });
}

// the output positions (oh, ow) that tap (ki, kj) reads input (ih, iw) from: t = ih + ph -
// ki * dh must be a multiple of the stride; UNIT skips the division (stride 1)
template <bool UNIT>
__device__ __forceinline__ int tap_output(int t, int stride, int out) {
    int o = UNIT ? t : t / stride;
    if (!UNIT && o * stride != t) return -1;
    return o < out ? o : -1;
}

// dx[n, c, ih, iw] = the sum of the column entries that read it, taps in row-major order
// (ki, kj): the adjoint of im2col as a gather
template <bool UNIT>
__device__ __forceinline__ void col2im_body(const scalar_t *__restrict__ col,
                                            scalar_t *__restrict__ dx, const ConvGeom &g,
                                            int span) {
    const int c = blockIdx.x, n = blockIdx.y;
    const int kh = (int)g.kh, kw = (int)g.kw, sh = (int)g.sh, sw = (int)g.sw;
    const int Ho = (int)g.Ho, Wo = (int)g.Wo, ph = (int)g.ph, pw = (int)g.pw;
    const int dh = (int)g.dh, dw = (int)g.dw;
    const int L = Ho * Wo, HW = (int)(g.H * g.W);
    const i64 tap_stride = g.nc * L;                       // between rows of the buffer
    const scalar_t *cp = col + ((i64)c * kh * kw * g.nc + n) * L;
    scalar_t *dp = dx + ((i64)n * g.C + c) * HW;
    int l0, l1;
    segment(HW, span, &l0, &l1);
    plane_loop(l0, l1, (int)g.W, [&](int p, int ih, int iw) {
        acc_t s = 0;
        for (int ki = 0; ki < kh; ki++) {
            const int th = ih + ph - ki * dh;
            if (th < 0) break;                             // and for every later ki
            const int oh = tap_output<UNIT>(th, sh, Ho);
            if (oh < 0) continue;
            for (int kj = 0; kj < kw; kj++) {
                const int tw = iw + pw - kj * dw;
                if (tw < 0) break;
                const int ow = tap_output<UNIT>(tw, sw, Wo);
                if (ow < 0) continue;
                s += to_acc(cp[(ki * kw + kj) * tap_stride + oh * Wo + ow]);
            }
        }
        dp[p] = Store<EC_DTYPE>::from(s);
    });
}

extern "C" __global__ void col2im(const scalar_t *__restrict__ col, scalar_t *__restrict__ dx,
                                  ConvGeom g, int span) {
    if (g.sh == 1 && g.sw == 1)
        col2im_body<true>(col, dx, g, span);
    else
        col2im_body<false>(col, dx, g, span);
}

// y[n, co, :] = bias[co] for co = blockIdx.x, before a GEMM that adds with beta = 1
extern "C" __global__ void bias_fill(scalar_t *__restrict__ y, const scalar_t *__restrict__ bias,
                                     i64 N, i64 Cout, int L, int span) {
    const i64 co = blockIdx.x;
    const scalar_t b = bias[co];
    int l0, l1;
    segment(L, span, &l0, &l1);
    for (i64 n = blockIdx.y; n < N; n += gridDim.y) {
        scalar_t *yp = y + (n * Cout + co) * L;
        for (int l = l0 + threadIdx.x; l < l1; l += blockDim.x) yp[l] = b;
    }
}

struct AddDouble {
    __device__ double operator()(double a, double b) const { return a + b; }
};

// the bias gradient, first pass: block (co, part) sums dy[n, co, l] over its share
// [j0, j1) of j = n * L + l, in double, each thread in order, then a fixed tree
extern "C" __global__ void bias_grad_partial(const scalar_t *__restrict__ dy,
                                             double *__restrict__ part, i64 Cout, i64 L, i64 NL,
                                             int parts) {
    __shared__ double shared[32];
    const i64 co = blockIdx.x;
    const int pi = blockIdx.y;
    const i64 j0 = NL * pi / parts, j1 = NL * (pi + 1) / parts;
    const i64 T = blockDim.x, dn = T / L, dl = T - dn * L;
    double s = 0;
    i64 j = j0 + threadIdx.x;
    if (j < j1) {
        i64 n = j / L, l = j - n * L;
        for (; j < j1; j += T) {
            s += (double)dy[(n * Cout + co) * L + l];
            n += dn;
            l += dl;
            if (l >= L) {
                l -= L;
                n++;
            }
        }
    }
    s = block_reduce(s, AddDouble(), 0.0, shared);
    if (threadIdx.x == 0) part[co * parts + pi] = s;
}

// second pass: each channel's parts in order
extern "C" __global__ void bias_grad_final(const double *__restrict__ part,
                                           scalar_t *__restrict__ db, i64 Cout, int parts) {
    for (i64 co = global_id(); co < Cout; co += global_threads()) {
        double s = 0;
        for (int i = 0; i < parts; i++) s += part[co * parts + i];
        db[co] = Store<EC_DTYPE>::from(s);
    }
}
