/* The fused row kernels (optional entries; a NULL entry makes the core run its composite):
 *   softmax  the softmax family along the last dim (strided views, any floating dtype);
 *   norm     layer norm and batch norm, forward and backward (C-contiguous views);
 *   nll      negative log-likelihood and fused cross-entropy (C-contiguous views).
 * Every row is computed in double in one fixed order, so results never depend on anything
 * but the inputs.
 */
#include <math.h>

#include "reference.h"

/* ---- softmax --------------------------------------------------------------------------- */

static const char *const softmax_names[EMBER_SOFTMAX_COUNT] = {
    "softmax", "log_softmax", "softmax_backward", "log_softmax_backward"};

int ref_softmax(ember_ctx *ctx, int32_t op, const ember_view *out_dev, const ember_view *a_dev,
                const ember_view *b_dev) {
    if (op < 0 || op >= EMBER_SOFTMAX_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "softmax: unknown op code %d", (int)op);
    const char *name = softmax_names[op];
    int backward = op == EMBER_SOFTMAX_BACKWARD || op == EMBER_LOG_SOFTMAX_BACKWARD;
    ember_view out, a, b;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    REF_TRY(ref_check_same_dtype(ctx, name, &out, &a));
    if (backward) {
        REF_TRY(ref_map_view(ctx, &b, b_dev, name));
        REF_TRY(ref_check_same_dtype(ctx, name, &out, &b));
    }
    if (!ref_is_float(out.dtype))
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s is not implemented for %s", name,
                        ref_dtype_name(out.dtype));
    if (out.ndim < 1 || a.ndim != out.ndim)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad operands", name);
    int last = out.ndim - 1, dt = out.dtype;
    int64_t len = out.sizes[last], item = ref_itemsize(dt);
    int64_t so = out.strides[last] * item, sa = a.strides[last] * item;
    int64_t sb = backward ? b.strides[last] * item : 0;
    ref_iter it;                              /* over the rows */
    ref_iter_init(&it, last, out.sizes);
    ref_iter_add(&it, out.data, out.strides, dt);
    ref_iter_add(&it, a.data, a.strides, dt);
    if (backward) ref_iter_add(&it, b.data, b.strides, dt);
    int64_t rows = ref_numel(last, out.sizes);
    for (int64_t r = 0; r < rows; r++, ref_iter_next(&it)) {
        char *po = it.ptr[0], *pa = it.ptr[1], *pb = backward ? it.ptr[2] : NULL;
        if (!backward) {
            /* m = max (a NaN makes the row NaN through exp below), s = sum exp(a - m) */
            double m = -INFINITY, s = 0;
            for (int64_t j = 0; j < len; j++) m = ref_maximum(m, ref_load_d(pa + j * sa, dt));
            for (int64_t j = 0; j < len; j++) s += exp(ref_load_d(pa + j * sa, dt) - m);
            double logs = log(s);
            for (int64_t j = 0; j < len; j++) {   /* out may alias a: read, then write */
                double x = ref_load_d(pa + j * sa, dt) - m;
                ref_store_d(po + j * so, dt, op == EMBER_SOFTMAX ? exp(x) / s : x - logs);
            }
        } else if (op == EMBER_SOFTMAX_BACKWARD) {   /* out = b * (a - sum(a * b)) */
            double dot = 0;
            for (int64_t j = 0; j < len; j++)
                dot += ref_load_d(pa + j * sa, dt) * ref_load_d(pb + j * sb, dt);
            for (int64_t j = 0; j < len; j++)
                ref_store_d(po + j * so, dt,
                            ref_load_d(pb + j * sb, dt) * (ref_load_d(pa + j * sa, dt) - dot));
        } else {                                     /* out = a - exp(b) * sum(a) */
            double sum = 0;
            for (int64_t j = 0; j < len; j++) sum += ref_load_d(pa + j * sa, dt);
            for (int64_t j = 0; j < len; j++)
                ref_store_d(po + j * so, dt,
                            ref_load_d(pa + j * sa, dt) - exp(ref_load_d(pb + j * sb, dt)) * sum);
        }
    }
    return EMBER_OK;
}

/* ---- shared by norm and nll: C-contiguous views read by flat element index ---------- */

#define NORM_SLOTS 8
/* map the views v[0..count) (NULL slots stay NULL); each must be C-contiguous and of
 * dtype `dt` (float32 or float64) */
static int map_flat(ember_ctx *ctx, const char *name, const ember_view *const *v, int count,
                    ember_view *storage, const ember_view **views, int32_t *dt) {
    *dt = -1;
    for (int k = 0; k < count; k++) {
        REF_TRY(ref_map_optional(ctx, &storage[k], &views[k], v[k], name));
        if (!views[k] || views[k]->dtype == EMBER_INT64) continue;    /* nll's target */
        if (*dt < 0) *dt = views[k]->dtype;
        if (views[k]->dtype != *dt)
            return ref_fail(ctx, EMBER_ERR_TYPE, "%s: views must share one dtype", name);
        if (!ref_is_contiguous(views[k]))
            return ref_fail(ctx, EMBER_ERR_VALUE, "%s: view %d is not C-contiguous", name, k);
    }
    if (*dt != EMBER_FLOAT32 && *dt != EMBER_FLOAT64)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s is not implemented for %s", name,
                        ref_dtype_name(*dt));
    return EMBER_OK;
}

/* element i of an optional flat view (`absent` when the view is NULL) */
static double get(const ember_view *v, int64_t i, int32_t dt, double absent) {
    return v ? ref_load_d(v->data + i * ref_itemsize(dt), dt) : absent;
}

static void put(const ember_view *v, int64_t i, int32_t dt, double x) {
    if (v) ref_store_d(v->data + i * ref_itemsize(dt), dt, x);
}

/* ---- norm ------------------------------------------------------------------------------ */

static const char *const norm_names[EMBER_NORM_COUNT] = {
    "layer_norm", "layer_norm_backward", "batch_norm_stats", "batch_norm_apply",
    "batch_norm_backward", "batch_norm_backward_eval"};
static const int norm_slots[EMBER_NORM_COUNT] = {6, 8, 3, 6, 8, 8};

/* one group of `n` elements of x (element k at x[at(k, geo)]): its mean and biased rstd */
static void moments(const ember_view *x, int32_t dt, int64_t n,
                    int64_t (*at)(int64_t k, const int64_t *geo), const int64_t *geo,
                    double eps, double *mean, double *rstd) {
    double s = 0, q = 0;
    for (int64_t k = 0; k < n; k++) s += get(x, at(k, geo), dt, 0);
    *mean = s / (double)n;
    for (int64_t k = 0; k < n; k++) {
        double d = get(x, at(k, geo), dt, 0) - *mean;
        q += d * d;
    }
    *rstd = 1.0 / sqrt(q / (double)n + eps);
}

/* the element positions of one group: a layer-norm row (geo = {row start}) or a batch-norm
 * channel (geo = {C, L, channel}: element k is batch k / L, position k % L) */
static int64_t row_at(int64_t k, const int64_t *geo) { return geo[0] + k; }
static int64_t channel_at(int64_t k, const int64_t *geo) {
    int64_t C = geo[0], L = geo[1], c = geo[2];
    return ((k / L) * C + c) * L + k % L;
}

/* the backward of one group: with h = g * w and xhat = (x - mean) * rstd,
 * training: gx = rstd * (h - mean(h) - xhat * mean(h * xhat)); eval: gx = h * rstd;
 * gw and gb (for the group's one weight, batch norm) come back through sums */
static void norm_backward_group(const ember_view *const *v, int32_t dt, int64_t n,
                                int64_t (*at)(int64_t, const int64_t *), const int64_t *geo,
                                double mean, double rstd, double (*weight)(int64_t k, void *),
                                void *wctx, int eval, double *sum_gxhat, double *sum_g) {
    const ember_view *gx = v[0], *g = v[3], *x = v[4];
    double mh = 0, mhx = 0;
    *sum_gxhat = *sum_g = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = at(k, geo);
        double gi = get(g, i, dt, 0), xhat = (get(x, i, dt, 0) - mean) * rstd;
        double h = gi * weight(k, wctx);
        mh += h;
        mhx += h * xhat;
        *sum_gxhat += gi * xhat;
        *sum_g += gi;
    }
    mh /= (double)n;
    mhx /= (double)n;
    for (int64_t k = 0; k < n && gx; k++) {
        int64_t i = at(k, geo);
        double h = get(g, i, dt, 0) * weight(k, wctx);
        double xhat = (get(x, i, dt, 0) - mean) * rstd;
        put(gx, i, dt, eval ? h * rstd : rstd * (h - mh - xhat * mhx));
    }
}

typedef struct { const ember_view *w; int32_t dt; int64_t fixed; int per_element; } weight_ctx;
static double weight_of(int64_t k, void *p) {
    weight_ctx *c = p;
    return get(c->w, c->per_element ? k : c->fixed, c->dt, 1.0);
}

int ref_norm(ember_ctx *ctx, int32_t op, const ember_view *const *v_dev, double eps) {
    if (op < 0 || op >= EMBER_NORM_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "norm: unknown op code %d", (int)op);
    const char *name = norm_names[op];
    ember_view storage[NORM_SLOTS];
    const ember_view *v[NORM_SLOTS];
    int32_t dt;
    REF_TRY(map_flat(ctx, name, v_dev, norm_slots[op], storage, v, &dt));
    if (op == EMBER_LAYER_NORM || op == EMBER_LAYER_NORM_BACKWARD) {
        const ember_view *x = op == EMBER_LAYER_NORM ? v[3] : v[4];
        if (!x || x->ndim < 1) return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad x", name);
        int64_t N = x->sizes[x->ndim - 1], M = N ? ref_numel(x->ndim, x->sizes) / N : 0;
        for (int64_t r = 0; r < M; r++) {
            int64_t geo[1] = {r * N};
            if (op == EMBER_LAYER_NORM) {     /* v = {y, mean, rstd, x, w, b} */
                double mean, rstd;
                moments(x, dt, N, row_at, geo, eps, &mean, &rstd);
                put(v[1], r, dt, mean);
                put(v[2], r, dt, rstd);
                for (int64_t k = 0; k < N; k++)
                    put(v[0], r * N + k, dt, (get(x, r * N + k, dt, 0) - mean) * rstd *
                        get(v[4], k, dt, 1.0) + get(v[5], k, dt, 0.0));
            } else {                          /* v = {gx, gw, gb, g, x, mean, rstd, w} */
                weight_ctx w = {v[7], dt, 0, 1};
                double sgx, sg;
                norm_backward_group(v, dt, N, row_at, geo, get(v[5], r, dt, 0),
                                    get(v[6], r, dt, 0), weight_of, &w, 0, &sgx, &sg);
            }
        }
        if (op == EMBER_LAYER_NORM_BACKWARD && (v[1] || v[2])) {
            /* gw = sum over rows of g * xhat, gb = sum over rows of g (rows in order) */
            for (int64_t k = 0; k < N; k++) {
                double gw = 0, gb = 0;
                for (int64_t r = 0; r < M; r++) {
                    double g = get(v[3], r * N + k, dt, 0);
                    gw += g * (get(v[4], r * N + k, dt, 0) - get(v[5], r, dt, 0)) *
                          get(v[6], r, dt, 0);
                    gb += g;
                }
                put(v[1], k, dt, gw);
                put(v[2], k, dt, gb);
            }
        }
        return EMBER_OK;
    }
    /* batch norm over x [B, C, L]: x is v[2] (stats), v[1] (apply) or v[4] (backward) */
    const ember_view *x = op == EMBER_BATCH_NORM_STATS ? v[2] : op == EMBER_BATCH_NORM_APPLY
                          ? v[1] : v[4];
    if (!x || x->ndim != 3) return ref_fail(ctx, EMBER_ERR_VALUE, "%s: x must be [B, C, L]", name);
    int64_t B = x->sizes[0], C = x->sizes[1], L = x->sizes[2], n = B * L;
    for (int64_t c = 0; c < C; c++) {
        int64_t geo[3] = {C, L, c};
        if (op == EMBER_BATCH_NORM_STATS) {  /* v = {mean, rstd, x} */
            double mean, rstd;
            moments(x, dt, n, channel_at, geo, eps, &mean, &rstd);
            put(v[0], c, dt, mean);
            put(v[1], c, dt, rstd);
        } else if (op == EMBER_BATCH_NORM_APPLY) {   /* v = {y, x, mean, rstd, w, b} */
            double mean = get(v[2], c, dt, 0), rstd = get(v[3], c, dt, 1);
            double w = get(v[4], c, dt, 1.0), b = get(v[5], c, dt, 0.0);
            for (int64_t k = 0; k < n; k++) {
                int64_t i = channel_at(k, geo);
                put(v[0], i, dt, (get(x, i, dt, 0) - mean) * rstd * w + b);
            }
        } else {                              /* v = {gx, gw, gb, g, x, mean, rstd, w} */
            weight_ctx w = {v[7], dt, c, 0};
            double mean = get(v[5], c, dt, 0), rstd = get(v[6], c, dt, 1), sgx, sg;
            norm_backward_group(v, dt, n, channel_at, geo, mean, rstd, weight_of, &w,
                                op == EMBER_BATCH_NORM_BACKWARD_EVAL, &sgx, &sg);
            put(v[1], c, dt, sgx);
            put(v[2], c, dt, sg);
        }
    }
    return EMBER_OK;
}

/* ---- nll ------------------------------------------------------------------------------- */

static const char *const nll_names[EMBER_NLL_COUNT] = {
    "nll_loss", "cross_entropy", "nll_loss_backward", "cross_entropy_backward"};

int ref_nll(ember_ctx *ctx, int32_t op, const ember_view *const *v_dev, int64_t ignore_index) {
    if (op < 0 || op >= EMBER_NLL_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "nll: unknown op code %d", (int)op);
    const char *name = nll_names[op];
    ember_view storage[5];
    const ember_view *v[5];
    int32_t dt;
    REF_TRY(map_flat(ctx, name, v_dev, 5, storage, v, &dt));
    /* v = {loss or gx, wt or scale, a (logits/log-probs, NULL for NLL_BACKWARD), target, w} */
    const ember_view *target = v[3], *w = v[4];
    const ember_view *wide = op == EMBER_NLL_BACKWARD ? v[0] : v[2];   /* an [R, C] view */
    if (!target || target->dtype != EMBER_INT64 || !wide || wide->ndim < 1)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad operands", name);
    int64_t R = ref_numel(target->ndim, target->sizes), C = wide->sizes[wide->ndim - 1];
    const int64_t *t = (const int64_t *)target->data;
    for (int64_t r = 0; r < R; r++)           /* every target is checked before any write */
        if (t[r] != ignore_index && (t[r] < 0 || t[r] >= C))
            return ref_data_error(ctx, EMBER_ERR_INDEX, "Target %lld is out of bounds.",
                                  (long long)t[r]);
    for (int64_t r = 0; r < R; r++) {
        int ignored = t[r] == ignore_index;
        double wt = ignored ? 0.0 : get(w, t[r], dt, 1.0);
        const ember_view *a = v[2];
        double lse = 0;                       /* logsumexp of the row (cross-entropy) */
        if (op == EMBER_CROSS_ENTROPY || op == EMBER_CROSS_ENTROPY_BACKWARD) {
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) m = ref_maximum(m, get(a, r * C + c, dt, 0));
            for (int64_t c = 0; c < C; c++) s += exp(get(a, r * C + c, dt, 0) - m);
            lse = m + log(s);
        }
        switch (op) {
        case EMBER_NLL:                       /* v = {loss, wt, a, target, w} */
        case EMBER_CROSS_ENTROPY:
            put(v[0], r, dt, ignored ? 0.0 : -wt * (get(a, r * C + t[r], dt, 0) - lse));
            put(v[1], r, dt, wt);
            break;
        case EMBER_NLL_BACKWARD:              /* v = {gx, scale, NULL, target, w} */
            for (int64_t c = 0; c < C; c++)
                put(v[0], r * C + c, dt, !ignored && c == t[r] ? -get(v[1], r, dt, 0) * wt : 0.0);
            break;
        default: {                            /* CROSS_ENTROPY_BACKWARD */
            double scale = get(v[1], r, dt, 0) * wt;
            for (int64_t c = 0; c < C; c++) {
                double p = exp(get(a, r * C + c, dt, 0) - lse);
                put(v[0], r * C + c, dt, ignored ? 0.0 : scale * (p - (c == t[r])));
            }
        }
        }
    }
    return EMBER_OK;
}
