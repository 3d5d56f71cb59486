/* The fused conv and pool kernels (optional entries; NULL makes the core run conv as
 * unfold + matmul and pooling as its composites).  Every operand is C-contiguous and
 * float32 or float64, N >= 1, C >= 1, 1-d ops arrive as 2-d with H = 1.
 *
 * Every output element is computed by gathering its inputs (never by scattering into it),
 * summing in double in one fixed order, so results do not depend on anything else.  The
 * pooling backward ops that the ABI defines as scatters (max: out[indices] += a; avg:
 * each window's share) walk a in row-major order, as the ABI asks.
 */
#include <math.h>
#include <string.h>

#include "reference.h"

typedef struct { int64_t n, c, h, w; } shape4;

static int get4(ember_ctx *ctx, const char *name, const ember_view *v, shape4 *s) {
    if (v->ndim != 4 || !ref_is_contiguous(v))
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: expects C-contiguous 4-d views", name);
    *s = (shape4){v->sizes[0], v->sizes[1], v->sizes[2], v->sizes[3]};
    return EMBER_OK;
}

static double at4(const ember_view *v, const shape4 *s, int64_t n, int64_t c, int64_t h,
                  int64_t w) {
    return ref_load_d(v->data + (((n * s->c + c) * s->h + h) * s->w + w) * ref_itemsize(v->dtype),
                      v->dtype);
}

static void set4(const ember_view *v, const shape4 *s, int64_t n, int64_t c, int64_t h,
                 int64_t w, double x) {
    ref_store_d(v->data + (((n * s->c + c) * s->h + h) * s->w + w) * ref_itemsize(v->dtype),
                v->dtype, x);
}

static int check_float(ember_ctx *ctx, const char *name, const ember_view *out,
                       const ember_view *a) {
    REF_TRY(ref_check_same_dtype(ctx, name, out, a));
    if (out->dtype != EMBER_FLOAT32 && out->dtype != EMBER_FLOAT64)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s is not implemented for %s", name,
                        ref_dtype_name(out->dtype));
    return EMBER_OK;
}

/* ---- conv ------------------------------------------------------------------------------ */

static const char *const conv_names[EMBER_CONV_COUNT] = {
    "conv", "conv_backward_input", "conv_backward_weight"};

/* the input position an output position reads through kernel tap k (may be outside) */
static int64_t tap(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
    return o * stride - pad + k * dil;
}

int ref_conv(ember_ctx *ctx, int32_t op, const ember_conv_params *p, const ember_view *out_dev,
             const ember_view *a_dev, const ember_view *b_dev, const ember_view *c_dev) {
    if (op < 0 || op >= EMBER_CONV_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "conv: unknown op code %d", (int)op);
    const char *name = conv_names[op];
    ember_view out, a, b, c_storage;
    const ember_view *c;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    REF_TRY(ref_map_view(ctx, &b, b_dev, name));
    REF_TRY(ref_map_optional(ctx, &c_storage, &c, c_dev, name));
    REF_TRY(check_float(ctx, name, &out, &a));
    REF_TRY(ref_check_same_dtype(ctx, name, &out, &b));
    /* name the three tensors of the convolution: x [N,Cin,H,W], w [Cout,Cin/g,kH,kW],
     * y [N,Cout,Ho,Wo] */
    const ember_view *xv = op == EMBER_CONV_FORWARD ? &a : op == EMBER_CONV_BACKWARD_INPUT
                           ? &out : &b;
    const ember_view *wv = op == EMBER_CONV_BACKWARD_WEIGHT ? &out : &b;
    const ember_view *yv = op == EMBER_CONV_FORWARD ? &out : &a;
    shape4 xs = {0}, ws = {0}, ys = {0};
    REF_TRY(get4(ctx, name, xv, &xs));
    REF_TRY(get4(ctx, name, wv, &ws));
    REF_TRY(get4(ctx, name, yv, &ys));
    int64_t G = p->groups, cin_g = ws.c, cout_g = G > 0 ? ws.n / G : 0;
    if (G < 1 || cin_g * G != xs.c || cout_g * G != ws.n || ys.c != ws.n || xs.n != ys.n)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: shapes do not match (groups %lld)", name,
                        (long long)G);
    const int64_t *st = p->stride, *pd = p->padding, *dl = p->dilation;
    if (op == EMBER_CONV_FORWARD) {          /* y = sum over (ci, kh, kw) of x * w, + bias */
        for (int64_t n = 0; n < ys.n; n++)
            for (int64_t co = 0; co < ys.c; co++)
                for (int64_t ho = 0; ho < ys.h; ho++)
                    for (int64_t wo = 0; wo < ys.w; wo++) {
                        double s = c ? ref_load_d(c->data + co * ref_itemsize(c->dtype), c->dtype) : 0;
                        int64_t g = co / cout_g;
                        for (int64_t ci = 0; ci < cin_g; ci++)
                            for (int64_t kh = 0; kh < ws.h; kh++)
                                for (int64_t kw = 0; kw < ws.w; kw++) {
                                    int64_t h = tap(ho, kh, st[0], pd[0], dl[0]);
                                    int64_t w = tap(wo, kw, st[1], pd[1], dl[1]);
                                    if (h < 0 || h >= xs.h || w < 0 || w >= xs.w) continue;
                                    s += at4(xv, &xs, n, g * cin_g + ci, h, w) *
                                         at4(wv, &ws, co, ci, kh, kw);
                                }
                        set4(yv, &ys, n, co, ho, wo, s);
                    }
    } else if (op == EMBER_CONV_BACKWARD_INPUT) {   /* gx = sum over taps reaching it */
        for (int64_t n = 0; n < xs.n; n++)
            for (int64_t cx = 0; cx < xs.c; cx++)
                for (int64_t h = 0; h < xs.h; h++)
                    for (int64_t w = 0; w < xs.w; w++) {
                        int64_t g = cx / cin_g, ci = cx % cin_g;
                        double s = 0;
                        for (int64_t co = g * cout_g; co < (g + 1) * cout_g; co++)
                            for (int64_t kh = 0; kh < ws.h; kh++)
                                for (int64_t kw = 0; kw < ws.w; kw++) {
                                    /* the output ho with tap(ho, kh) == h, if any */
                                    int64_t th = h + pd[0] - kh * dl[0], tw = w + pd[1] - kw * dl[1];
                                    if (th < 0 || tw < 0 || th % st[0] || tw % st[1]) continue;
                                    int64_t ho = th / st[0], wo = tw / st[1];
                                    if (ho >= ys.h || wo >= ys.w) continue;
                                    s += at4(yv, &ys, n, co, ho, wo) * at4(wv, &ws, co, ci, kh, kw);
                                }
                        set4(xv, &xs, n, cx, h, w, s);
                    }
    } else {                                  /* gw = sum over (n, ho, wo) of gy * x */
        for (int64_t co = 0; co < ws.n; co++) {
            int64_t g = co / cout_g;
            for (int64_t ci = 0; ci < cin_g; ci++)
                for (int64_t kh = 0; kh < ws.h; kh++)
                    for (int64_t kw = 0; kw < ws.w; kw++) {
                        double s = 0;
                        for (int64_t n = 0; n < ys.n; n++)
                            for (int64_t ho = 0; ho < ys.h; ho++)
                                for (int64_t wo = 0; wo < ys.w; wo++) {
                                    int64_t h = tap(ho, kh, st[0], pd[0], dl[0]);
                                    int64_t w = tap(wo, kw, st[1], pd[1], dl[1]);
                                    if (h < 0 || h >= xs.h || w < 0 || w >= xs.w) continue;
                                    s += at4(yv, &ys, n, co, ho, wo) *
                                         at4(xv, &xs, n, g * cin_g + ci, h, w);
                                }
                        set4(wv, &ws, co, ci, kh, kw, s);
                    }
            if (c) {                          /* grad_bias = sum of gy over (n, ho, wo) */
                double s = 0;
                for (int64_t n = 0; n < ys.n; n++)
                    for (int64_t ho = 0; ho < ys.h; ho++)
                        for (int64_t wo = 0; wo < ys.w; wo++) s += at4(yv, &ys, n, co, ho, wo);
                ref_store_d(c->data + co * ref_itemsize(c->dtype), c->dtype, s);
            }
        }
    }
    return EMBER_OK;
}

/* ---- pool ------------------------------------------------------------------------------ */

static const char *const pool_names[EMBER_POOL_COUNT] = {
    "max_pool", "max_pool_backward", "avg_pool", "avg_pool_backward", "adaptive_avg_pool",
    "adaptive_avg_pool_backward", "adaptive_max_pool"};

/* the input window [lo, hi) of output position o along one dim, and its divisor share */
typedef struct { int64_t lo, hi, step, padded; } window;

/* a strided window (max/avg pooling): taps lo, lo + step, ... below hi, clipped to [0, size);
 * `padded` is avg pooling's window size clipped to the padded input */
static window strided_window(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dil,
                             int64_t size) {
    int64_t start = o * stride - pad, end = start + (k - 1) * dil + 1;
    window win = {start, end, dil, 0};
    int64_t padded_end = start + k < size + pad ? start + k : size + pad;
    win.padded = padded_end - start;
    while (win.lo < 0) win.lo += dil;
    if (win.hi > size) win.hi = size;
    return win;
}

/* adaptive pooling's window: [floor(o * size / out), ceil((o + 1) * size / out)) */
static window adaptive_window(int64_t o, int64_t out, int64_t size) {
    window win = {o * size / out, ((o + 1) * size + out - 1) / out, 1, 0};
    return win;
}

static int64_t taps(const window *w) {
    return w->hi > w->lo ? (w->hi - w->lo + w->step - 1) / w->step : 0;
}

int ref_pool(ember_ctx *ctx, int32_t op, const ember_pool_params *p, const ember_view *out_dev,
             const ember_view *indices_dev, const ember_view *a_dev) {
    if (op < 0 || op >= EMBER_POOL_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "pool: unknown op code %d", (int)op);
    const char *name = pool_names[op];
    ember_view out, a, idx_storage;
    const ember_view *indices;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    REF_TRY(ref_map_optional(ctx, &idx_storage, &indices, indices_dev, name));
    REF_TRY(check_float(ctx, name, &out, &a));
    int is_max = op == EMBER_POOL_MAX || op == EMBER_POOL_ADAPTIVE_MAX;
    int backward = op == EMBER_POOL_MAX_BACKWARD || op == EMBER_POOL_AVG_BACKWARD ||
                   op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD;
    int adaptive = op == EMBER_POOL_ADAPTIVE_AVG || op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD ||
                   op == EMBER_POOL_ADAPTIVE_MAX;
    if ((is_max || op == EMBER_POOL_MAX_BACKWARD) &&
        (!indices || indices->dtype != EMBER_INT64 || !ref_is_contiguous(indices)))
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: needs contiguous int64 indices", name);
    /* the input plane x and the output plane y: out/a depending on the direction */
    const ember_view *xv = backward ? &out : &a, *yv = backward ? &a : &out;
    shape4 xs = {0}, ys = {0};
    REF_TRY(get4(ctx, name, xv, &xs));
    REF_TRY(get4(ctx, name, yv, &ys));
    if (xs.n != ys.n || xs.c != ys.c)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: batch and channels must match", name);
    const int64_t *idx = indices ? (const int64_t *)indices->data : NULL;
    if (backward)                             /* grad_input starts at zero */
        memset(out.data, 0, (size_t)(ref_numel(4, out.sizes) * ref_itemsize(out.dtype)));
    for (int64_t n = 0; n < ys.n; n++)
        for (int64_t c = 0; c < ys.c; c++)
            for (int64_t ho = 0; ho < ys.h; ho++)
                for (int64_t wo = 0; wo < ys.w; wo++) {
                    int64_t flat = ((n * ys.c + c) * ys.h + ho) * ys.w + wo;
                    if (op == EMBER_POOL_MAX_BACKWARD) {   /* grad_input[index] += grad */
                        int64_t i = idx[flat];
                        if (i < 0 || i >= xs.h * xs.w)
                            return ref_data_error(ctx, EMBER_ERR_INDEX, "max_pool_backward: "
                                                  "index %lld is out of bounds", (long long)i);
                        int64_t h = i / xs.w, w = i % xs.w;
                        set4(xv, &xs, n, c, h, w, at4(xv, &xs, n, c, h, w) +
                             at4(yv, &ys, n, c, ho, wo));
                        continue;
                    }
                    window wh = adaptive ? adaptive_window(ho, ys.h, xs.h)
                        : strided_window(ho, p->kernel[0], p->stride[0], p->padding[0],
                                         is_max ? p->dilation[0] : 1, xs.h);
                    window ww = adaptive ? adaptive_window(wo, ys.w, xs.w)
                        : strided_window(wo, p->kernel[1], p->stride[1], p->padding[1],
                                         is_max ? p->dilation[1] : 1, xs.w);
                    if (is_max) {   /* the first maximum; a NaN wins (the last, as torch) */
                        double best = -INFINITY;
                        int64_t at = -1;
                        for (int64_t h = wh.lo; h < wh.hi; h += wh.step)
                            for (int64_t w = ww.lo; w < ww.hi; w += ww.step) {
                                double v = at4(xv, &xs, n, c, h, w);
                                if (at < 0 || v != v || v > best)
                                    best = v, at = h * xs.w + w;
                            }
                        set4(yv, &ys, n, c, ho, wo, at < 0 ? -INFINITY : best);
                        /* no tap inside the input: torch's -inf at its first tap past
                         * the padding */
                        ((int64_t *)indices->data)[flat] = at < 0 ? wh.lo * xs.w + ww.lo : at;
                        continue;
                    }
                    /* average: divisor_override, else the window clipped to the padded
                     * input (count_include_pad) or to the input; adaptive: the window */
                    int64_t count = taps(&wh) * taps(&ww);
                    double divisor = adaptive ? (double)count
                        : p->divisor_override > 0 ? (double)p->divisor_override
                        : p->count_include_pad ? (double)(wh.padded * ww.padded) : (double)count;
                    if (!backward) {
                        double s = 0;
                        for (int64_t h = wh.lo; h < wh.hi; h++)
                            for (int64_t w = ww.lo; w < ww.hi; w++) s += at4(xv, &xs, n, c, h, w);
                        set4(yv, &ys, n, c, ho, wo, s / divisor);
                    } else {                      /* each input of the window gets its share */
                        double share = at4(yv, &ys, n, c, ho, wo) / divisor;
                        for (int64_t h = wh.lo; h < wh.hi; h++)
                            for (int64_t w = ww.lo; w < ww.hi; w++)
                                set4(xv, &xs, n, c, h, w, at4(xv, &xs, n, c, h, w) + share);
                    }
                }
    return EMBER_OK;
}
