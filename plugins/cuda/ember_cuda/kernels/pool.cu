// Pooling kernels of one dtype (float32/float64) for csrc/pool.c: max (with indices), average
// and their adaptive forms, and the backward ops as gathers: each input element sums, in
// row-major order of the outputs, what the outputs whose window covers it send back.  That
// is the CPU plugin's scatter (zero, then += in row-major order of grad_output) to the bit,
// with one writer per element and no atomics.  Semantics: plugins/cpu/ember_cpu/_pool.pyx.

// csrc/pool.c's pool_geom, by value
struct PoolGeom {
    i64 planes, H, W, Ho, Wo;
    i64 kernel[2], stride[2], padding[2], dilation[2];
    i64 divisor;                  // divisor_override; 0: none
    int count_include_pad;
    int adaptive;                 // PyTorch's adaptive windows instead of the params'
};

// flat position i of planes x rows x cols as (plane, row, col); 32-bit division when the
// whole range fits
struct Pos {
    i64 plane;
    i64 r, c;
};

__device__ __forceinline__ Pos split(i64 i, i64 rows, i64 cols, bool narrow) {
    Pos p;
    if (narrow) {
        const u32 a = (u32)i, pc = (u32)(rows * cols);
        const u32 q = a / pc, o = a - q * pc, r = o / (u32)cols;
        p.plane = q;
        p.r = r;
        p.c = o - r * (u32)cols;
    } else {
        const i64 pc = rows * cols, q = i / pc, o = i - q * pc, r = o / cols;
        p.plane = q;
        p.r = r;
        p.c = o - r * cols;
    }
    return p;
}

// window o along dim d (size inputs, out outputs): taps start + i * step for i < count,
// some of which may fall outside the input
struct Win {
    i64 start, count, step;
};

__device__ __forceinline__ Win window(const PoolGeom &g, int d, i64 o, i64 size, i64 out) {
    Win w;
    if (g.adaptive) {
        w.start = o * size / out;
        w.count = ((o + 1) * size + out - 1) / out - w.start;
        w.step = 1;
    } else {
        w.start = o * g.stride[d] - g.padding[d];
        w.count = g.kernel[d];
        w.step = g.dilation[d];
    }
    return w;
}

// the averaging window of output o along dim d: [lo, hi) inside the input, and its factor
// of the divisor (clipped to the padded input, or to the input without count_include_pad)
__device__ __forceinline__ void avg_bounds(const PoolGeom &g, int d, i64 o, i64 size, i64 out,
                                           i64 *lo, i64 *hi, i64 *factor) {
    const Win w = window(g, d, o, size, out);
    if (g.adaptive) {
        *lo = w.start;
        *hi = w.start + w.count;
        *factor = w.count;
        return;
    }
    const i64 end = min(w.start + w.count, size + g.padding[d]);
    *lo = max(w.start, (i64)0);
    *hi = min(end, size);
    *factor = g.count_include_pad ? end - w.start : *hi - *lo;
}

__device__ __forceinline__ i64 floor_div(i64 a, i64 b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// [lo, hi): the outputs along dim d whose window may hold input i (size inputs, out
// outputs); `span` is the window's reach past its start, (kernel - 1) * dilation
__device__ __forceinline__ void cover(const PoolGeom &g, int d, i64 i, i64 size, i64 out,
                                      i64 span, i64 *lo, i64 *hi) {
    if (g.adaptive) {            // start(o) <= i  and  end(o) > i
        *lo = i * out / size;
        *hi = ((i + 1) * out - 1) / size + 1;
    } else {                     // o * stride - padding <= i <= o * stride - padding + span
        const i64 s = g.stride[d], t = i + g.padding[d];
        *lo = -floor_div(span - t, s);
        *hi = floor_div(t, s) + 1;
    }
    *lo = max(*lo, (i64)0);
    *hi = min(*hi, out);
}

// out = the window maxima, ix = their flat positions h * W + w; the first maximum wins and
// a NaN beats any number (the last NaN, as PyTorch's); a window with no tap inside the input
// gives -inf at its first tap past the padding, as PyTorch's
extern "C" __global__ void max_pool(const scalar_t *__restrict__ x, scalar_t *__restrict__ y,
                                    i64 *__restrict__ ix, PoolGeom g) {
    const i64 total = g.planes * g.Ho * g.Wo;
    const bool narrow = total <= 0xffffffffLL;
    for (i64 i = global_id(); i < total; i += global_threads()) {
        const Pos p = split(i, g.Ho, g.Wo, narrow);
        const Win wh = window(g, 0, p.r, g.H, g.Ho), ww = window(g, 1, p.c, g.W, g.Wo);
        const scalar_t *xp = x + p.plane * g.H * g.W;
        i64 best_i = -1;
        scalar_t best = 0;
        for (i64 a = 0; a < wh.count; a++) {
            const i64 ih = wh.start + a * wh.step;
            if (ih < 0 || ih >= g.H) continue;
            for (i64 b = 0; b < ww.count; b++) {
                const i64 iw = ww.start + b * ww.step;
                if (iw < 0 || iw >= g.W) continue;
                const scalar_t v = xp[ih * g.W + iw];
                if (best_i < 0 || v > best || v != v) {
                    best = v;
                    best_i = ih * g.W + iw;
                }
            }
        }
        if (best_i < 0) {   // no tap inside the input: -inf at the first tap past the padding
            i64 ih = wh.start, iw = ww.start;
            while (ih < 0) ih += wh.step;
            while (iw < 0) iw += ww.step;
            best = -INFINITY;
            best_i = ih * g.W + iw;
        }
        y[i] = best;
        ix[i] = best_i;
    }
}

// the divisor of output (oh, ow)
__device__ __forceinline__ scalar_t avg_divisor(const PoolGeom &g, i64 fh, i64 fw) {
    return (scalar_t)(g.divisor > 0 && !g.adaptive ? g.divisor : fh * fw);
}

// out = the window sums (in scalar_t, row-major) over the divisor
extern "C" __global__ void avg_pool(const scalar_t *__restrict__ x, scalar_t *__restrict__ y,
                                    PoolGeom g) {
    const i64 total = g.planes * g.Ho * g.Wo;
    const bool narrow = total <= 0xffffffffLL;
    for (i64 i = global_id(); i < total; i += global_threads()) {
        const Pos p = split(i, g.Ho, g.Wo, narrow);
        i64 h0, h1, fh, w0, w1, fw;
        avg_bounds(g, 0, p.r, g.H, g.Ho, &h0, &h1, &fh);
        avg_bounds(g, 1, p.c, g.W, g.Wo, &w0, &w1, &fw);
        const scalar_t *xp = x + p.plane * g.H * g.W;
        scalar_t s = 0;
        for (i64 ih = h0; ih < h1; ih++)
            for (i64 iw = w0; iw < w1; iw++) s = s + xp[ih * g.W + iw];
        y[i] = s / avg_divisor(g, fh, fw);
    }
}

// grad_input (ih, iw) = the sum, in row-major order of the outputs whose window may hold
// it, of the grad_output of those whose index is (ih, iw)
extern "C" __global__ void max_pool_backward(const scalar_t *__restrict__ gy,
                                             const i64 *__restrict__ ix,
                                             scalar_t *__restrict__ gx, PoolGeom g) {
    const i64 total = g.planes * g.H * g.W;
    const bool narrow = total <= 0xffffffffLL;
    const i64 span_h = (g.kernel[0] - 1) * g.dilation[0], span_w = (g.kernel[1] - 1) * g.dilation[1];
    for (i64 i = global_id(); i < total; i += global_threads()) {
        const Pos p = split(i, g.H, g.W, narrow);
        i64 h0, h1, w0, w1;
        cover(g, 0, p.r, g.H, g.Ho, span_h, &h0, &h1);
        cover(g, 1, p.c, g.W, g.Wo, span_w, &w0, &w1);
        const i64 base = p.plane * g.Ho * g.Wo, here = p.r * g.W + p.c;
        scalar_t s = 0;
        for (i64 oh = h0; oh < h1; oh++)
            for (i64 ow = w0; ow < w1; ow++) {
                const i64 o = base + oh * g.Wo + ow;
                if (ix[o] == here) s = s + gy[o];
            }
        gx[i] = s;
    }
}

// grad_input (ih, iw) = the sum, in row-major order of the outputs covering it, of their
// grad_output over their divisor
extern "C" __global__ void avg_pool_backward(const scalar_t *__restrict__ gy,
                                             scalar_t *__restrict__ gx, PoolGeom g) {
    const i64 total = g.planes * g.H * g.W;
    const bool narrow = total <= 0xffffffffLL;
    const i64 span_h = g.kernel[0] - 1, span_w = g.kernel[1] - 1;
    for (i64 i = global_id(); i < total; i += global_threads()) {
        const Pos p = split(i, g.H, g.W, narrow);
        i64 h0, h1, w0, w1, lo, hi, fh, fw;
        cover(g, 0, p.r, g.H, g.Ho, span_h, &h0, &h1);
        cover(g, 1, p.c, g.W, g.Wo, span_w, &w0, &w1);
        const scalar_t *gp = gy + p.plane * g.Ho * g.Wo;
        scalar_t s = 0;
        for (i64 oh = h0; oh < h1; oh++) {
            avg_bounds(g, 0, oh, g.H, g.Ho, &lo, &hi, &fh);
            for (i64 ow = w0; ow < w1; ow++) {
                avg_bounds(g, 1, ow, g.W, g.Wo, &lo, &hi, &fw);
                s = s + gp[oh * g.Wo + ow] / avg_divisor(g, fh, fw);
            }
        }
        gx[i] = s;
    }
}
