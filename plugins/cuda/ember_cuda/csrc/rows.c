/* The fused row entries: softmax (rows of any strides, the four floating dtypes), norm
 * (layer and batch norm) and nll (nll and fused cross-entropy), the last two on
 * C-contiguous float32/float64 views.  Checks follow the CPU plugin (the same codes and
 * messages); the kernels are kernels/softmax.cu and kernels/rows.cu, over
 * kernels/rowtile.cuh.  Everything is stream-ordered: workspaces go back to the caching
 * allocator right after the launches that use them. */
#include <stdint.h>
#include <stdio.h>

#include "ec.h"

static int fail(ember_ctx *ctx, int code, const char *op, const char *msg) {
    return ec_fail(ctx, code, "%s: %s", op, msg);
}

static int aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

static int ceil_log2(int64_t v) {
    int k = 0;
    while (((int64_t)1 << k) < v) k++;
    return k;
}

/* blocks for a grid-stride kernel: at most 32 per SM (a few waves) */
static unsigned grid_for(ember_ctx *ctx, int64_t blocks) {
    int64_t cap = (int64_t)ec_devices[ctx->device].sm_count * 32;
    if (blocks > cap) blocks = cap;
    return blocks < 1 ? 1 : (unsigned)blocks;
}

/* -- row kernels: the configuration a row length gets (rowtile.cuh) ------------------------
 * w lanes per row (0: the block), p elements per lane held in registers (0: streamed),
 * vec: 16-byte vectors.  Rows up to 32 (softmax): w = the next power of two, p = 1; up to
 * 1024: a warp, p = next power of two of n / 32 (at least pmin: rows.cu builds p >= 4);
 * up to 8192: a block of n / p threads, p = 8 or 16; longer: streamed by 512 threads. */
typedef struct {
    int w, p, vec, idx;
    unsigned threads, grid;
} row_plan;

#define NCFG 23                 /* row kernel configurations: see cfg_index */

static int cfg_index(const row_plan *pl) {
    if (pl->w && pl->w < 32) return ceil_log2(pl->w);                    /* 0..4 */
    if (pl->w == 32) return 5 + 2 * ceil_log2(pl->p) + pl->vec;          /* 5..16 */
    return 17 + 2 * (pl->p == 8 ? 0 : pl->p == 16 ? 1 : 2) + pl->vec;    /* 17..22 */
}

static void plan_rows(ember_ctx *ctx, int64_t rows, int64_t n, int itemsize, int can_vec,
                      int pmin, row_plan *pl) {
    int vecw = 16 / itemsize;
    if (n <= 32 && pmin == 1) {
        pl->w = 1 << ceil_log2(n);
        pl->p = 1;
    } else if (n <= 1024) {
        int p = 1 << ceil_log2((n + 31) / 32);
        pl->w = 32;
        pl->p = p < pmin ? pmin : p;
    } else {
        pl->w = 0;
        pl->p = n <= 4096 ? 8 : n <= 8192 ? 16 : 0;
    }
    /* the kernel's ROW_V: vectors only where a lane's elements hold whole ones */
    pl->vec = can_vec && (pl->p == 0 || pl->p >= vecw);
    if (pl->w)
        pl->threads = 128;
    else if (pl->p)
        pl->threads = (unsigned)(((n + pl->p - 1) / pl->p + 31) / 32 * 32);
    else
        pl->threads = 512;
    int64_t per = pl->w ? 128 / pl->w : 1;
    pl->grid = grid_for(ctx, (rows + per - 1) / per);
    pl->idx = cfg_index(pl);
}

static int launch_rows(ember_ctx *ctx, ec_kernel cache[NCFG][16], const char *family,
                       const char *prefix, int dtype, const row_plan *pl, void **args) {
    char name[48];
    snprintf(name, sizeof name, "%s_%d_%d_%d", prefix, pl->w, pl->p, pl->vec);
    CUfunction f;
    int rc = ec_fn(ctx, cache[pl->idx], family, dtype, name, &f);
    if (rc) return rc;
    return ec_launch(ctx, f, pl->grid, 1, 1, pl->threads, 0, args);
}

/* -- softmax -------------------------------------------------------------------------------- */

static const char *const softmax_names[] = {"softmax", "log_softmax", "softmax_backward",
                                            "log_softmax_backward"};

static int softmax_check(ember_ctx *ctx, const char *name, const ember_view *const *v) {
    int nd = v[0]->ndim;
    if (nd < 1 || nd > EMBER_MAX_DIM)
        return fail(ctx, EMBER_ERR_VALUE, name, "bad number of dimensions");
    for (int k = 0; k < 3; k++) {
        int rc = ec_check_view(ctx, name, v[k]);
        if (rc) return rc;
        if (v[k]->ndim != nd) return fail(ctx, EMBER_ERR_VALUE, name, "bad number of dimensions");
        for (int d = 0; d < nd; d++)
            if (v[k]->sizes[d] != v[0]->sizes[d])
                return fail(ctx, EMBER_ERR_VALUE, name, "operand shapes do not match");
    }
    return EMBER_OK;
}

int ec_softmax(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
               const ember_view *b) {
    if (op < 0 || op >= EMBER_SOFTMAX_COUNT)
        return fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "softmax", "unknown op code");
    const char *name = softmax_names[op];
    int has_b = op >= EMBER_SOFTMAX_BACKWARD;
    if (has_b && b == NULL) return fail(ctx, EMBER_ERR_VALUE, name, "needs the output view (b)");
    if (a->dtype != out->dtype || (has_b && b->dtype != out->dtype))
        return fail(ctx, EMBER_ERR_TYPE, name, "operands must have out's dtype");
    if (!ec_itemsize(out->dtype)) return fail(ctx, EMBER_ERR_TYPE, name, "unknown dtype code");
    if (!ec_is_floating(out->dtype)) return ec_fail_dtype(ctx, name, out->dtype);
    const ember_view *v[3] = {out, a, has_b ? b : a};          /* the forward ops pass a twice */
    int rc = softmax_check(ctx, name, v);
    if (rc) return rc;
    /* rows: the leading dims, coalesced; each operand steps along the last dim by st[k] */
    int nd = out->ndim;
    ember_view lead[3];
    const ember_view *lp[3];
    int64_t st[3];
    for (int k = 0; k < 3; k++) {
        lead[k] = *v[k];
        lead[k].ndim = nd - 1;
        lp[k] = &lead[k];
        st[k] = v[k]->strides[nd - 1];
    }
    ec_layout L;
    int64_t rows = ec_layout_make(&L, 3, lp), n = out->sizes[nd - 1];
    if (rows == 0 || n == 0) return EMBER_OK;
    if ((rc = ec_enter(ctx))) return rc;
    int size = ec_itemsize(out->dtype), vecw = 16 / size;
    int can_vec = n % vecw == 0;
    for (int k = 0; k < 3; k++) {
        can_vec = can_vec && st[k] == 1 && aligned16(v[k]->data);
        for (int d = 0; d < L.ndim; d++) can_vec = can_vec && L.strides[k][d] % vecw == 0;
    }
    row_plan pl;
    plan_rows(ctx, rows, n, size, can_vec, 1, &pl);
    static ec_kernel fwd[NCFG][16], bwd[NCFG][16];
    void *args[] = {(void *)&out->data, (void *)&a->data, (void *)&v[2]->data, &rows, &n,
                    &st[0], &st[1], &st[2], &op, &L};
    return launch_rows(ctx, has_b ? bwd : fwd, "softmax", has_b ? "softmax_bwd" : "softmax_fwd",
                       out->dtype, &pl, args);
}

/* -- column sums (rows.cu: col_partials, then col_finish) ------------------------------------- */

enum { PART_SUM = 0, PART_SQDEV = 1, PART_GRAD = 2, PART_LN = 3 };
enum { FIN_MEAN = 0, FIN_RSTD = 1, FIN_SUMS = 2 };
/* column-chunks of work per pass: the rows per chunk follow from the shape alone */
#define COL_WORK ((int64_t)1 << 18)

/* Over x (and g) as [rows, K], column j in group j / L (groups * L == K): the `mode` sums
 * of each group, finished as `fin` into o0 (and o1). */
static int col_sums(ember_ctx *ctx, int dtype, int mode, char *x, char *g, char *mean,
                    char *rstd, int64_t rows, int64_t K, int64_t L, int64_t groups, int fin,
                    double count, double eps, char *o0, char *o1) {
    static ec_kernel cache_p[16], cache_f[16];
    if (groups == 0) return EMBER_OK;
    int size = ec_itemsize(dtype), rc;
    int64_t nchunks = K > 0 ? (COL_WORK + K - 1) / K : 1;
    if (nchunks > rows) nchunks = rows;
    if (nchunks < 1) nchunks = 1;
    int64_t rpc = (rows + nchunks - 1) / nchunks;
    if (rpc < 1) rpc = 1;
    nchunks = (rows + rpc - 1) / rpc;
    if (nchunks < 1) nchunks = 1;
    CUfunction f;
    char *part = NULL;
    if (K > 0) {
        part = (char *)ec_alloc(ctx, 2 * nchunks * K * size);
        if (!part) return EMBER_ERR_MEMORY;
        if ((rc = ec_fn(ctx, cache_p, "rows", dtype, "col_partials", &f))) goto done;
        int64_t tiles = (K + 255) / 256;
        void *args[] = {&part, &x, &g, &mean, &rstd, &rows, &K, &L, &rpc, &nchunks, &mode};
        if ((rc = ec_launch(ctx, f, grid_for(ctx, tiles * nchunks), 1, 1, 256, 0, args)))
            goto done;
    }
    if ((rc = ec_fn(ctx, cache_f, "rows", dtype, "col_finish", &f))) goto done;
    int64_t per = nchunks * L;
    unsigned threads = per >= 1024 ? 1024 : per <= 32 ? 32 : (unsigned)((per + 31) / 32 * 32);
    unsigned grid = groups > 65535 ? 65535 : (unsigned)groups;
    void *args[] = {&part, &nchunks, &K, &L, &groups, &fin, &count, &eps, &o0, &o1};
    rc = ec_launch(ctx, f, grid, 1, 1, threads, 0, args);
done:
    if (part) ec_free(ctx->device, part);
    return rc;
}

/* -- norm -------------------------------------------------------------------------------------- */

static const char *const norm_names[] = {"layer_norm", "layer_norm_backward", "batch_norm",
                                         "batch_norm", "batch_norm_backward",
                                         "batch_norm_backward"};

/* the CPU plugin's table: per op, its slot count, then each slot's kind: 0 full ([M, N] or
 * [B, C, L]), 1 per row (layer) or channel, 2 per column (layer) or channel; negative: the
 * slot is required (the kind is -kind - 1) */
static const signed char norm_slots[EMBER_NORM_COUNT][9] = {
    {6, -1, -2, -2, -1, 2, 2},
    {8, 0, 2, 2, -1, -1, -2, -2, 2},
    {3, -3, -3, -1},
    {6, -1, -1, -3, -3, 2, 2},
    {8, 0, 2, 2, -1, -1, -3, -3, 2},
    {8, 0, 2, 2, -1, -1, -3, -3, 2},
};

static int check_view(ember_ctx *ctx, const char *op, const ember_view *v, int dtype, int ndim,
                      const int64_t *sizes) {
    if (v->dtype != dtype) return fail(ctx, EMBER_ERR_VALUE, op, "operands must share one dtype");
    if (v->ndim != ndim)
        return fail(ctx, EMBER_ERR_VALUE, op, "an operand has the wrong number of dims");
    int64_t expected = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (v->sizes[d] != sizes[d])
            return fail(ctx, EMBER_ERR_VALUE, op, "an operand has the wrong sizes");
        if (v->sizes[d] != 1 && v->strides[d] != expected)
            return fail(ctx, EMBER_ERR_VALUE, op, "operands must be C-contiguous");
        expected *= v->sizes[d];
    }
    return EMBER_OK;
}

/* dims: {M, N} (layer) or {B, C, L}; p[k]: slot k's data, NULL where absent */
static int norm_check(ember_ctx *ctx, int op, const ember_view *const *v, int dtype,
                      const int64_t *dims, char **p) {
    int layer = op <= EMBER_LAYER_NORM_BACKWARD;
    for (int k = 0; k < 8; k++) p[k] = NULL;
    for (int k = 0; k < norm_slots[op][0]; k++) {
        int kind = norm_slots[op][k + 1], rc;
        if (v[k] == NULL) {
            if (kind < 0)
                return fail(ctx, EMBER_ERR_VALUE, norm_names[op], "a required operand is NULL");
            continue;
        }
        kind = kind < 0 ? -kind - 1 : kind;
        if (kind == 0) {
            rc = check_view(ctx, norm_names[op], v[k], dtype, layer ? 2 : 3, dims);
        } else {
            int64_t s = layer ? dims[kind == 1 ? 0 : 1] : dims[1];
            rc = check_view(ctx, norm_names[op], v[k], dtype, 1, &s);
        }
        if (rc) return rc;
        p[k] = v[k]->data;
    }
    return EMBER_OK;
}

static int layer_norm(ember_ctx *ctx, int op, char **p, int dtype, int64_t M, int64_t N,
                      double eps) {
    static ec_kernel fwd[NCFG][16], bwd[NCFG][16];
    int size = ec_itemsize(dtype), vecw = 16 / size, rc;
    char *none = NULL;
    row_plan pl;
    if (op == EMBER_LAYER_NORM) {                 /* {y, mean, rstd, x, w, b} */
        if (M == 0) return EMBER_OK;
        plan_rows(ctx, M, N, size, N % vecw == 0 && aligned16(p[0]) && aligned16(p[3]), 4, &pl);
        void *args[] = {&p[0], &p[1], &p[2], &p[3], &none, &p[4], &p[5], &M, &N, &eps};
        return launch_rows(ctx, fwd, "rows", "ln_fwd", dtype, &pl, args);
    }
    /* {gx, gw, gb, g, x, mean, rstd, w} */
    if (p[0] && M > 0) {
        int can_vec = N % vecw == 0 && aligned16(p[0]) && aligned16(p[3]) && aligned16(p[4]);
        plan_rows(ctx, M, N, size, can_vec, 4, &pl);
        void *args[] = {&p[0], &p[5], &p[6], &p[4], &p[3], &p[7], &none, &M, &N, &eps};
        if ((rc = launch_rows(ctx, bwd, "rows", "ln_bwd", dtype, &pl, args))) return rc;
    }
    if (!p[1] && !p[2]) return EMBER_OK;
    return col_sums(ctx, dtype, PART_LN, p[4], p[3], p[5], p[6], M, N, 1, N, FIN_SUMS, 0, 0,
                    p[1], p[2]);
}

static int batch_norm(ember_ctx *ctx, int op, char **p, int dtype, int64_t B, int64_t C,
                      int64_t L, double eps) {
    static ec_kernel cache_apply[16], cache_grad[16];
    int64_t n = B * C * L, K = C * L;
    double count = (double)(B * L);
    int rc;
    CUfunction f;
    if (C == 0) return EMBER_OK;
    if (op == EMBER_BATCH_NORM_STATS) {           /* {mean, rstd, x}: two passes over x */
        if ((rc = col_sums(ctx, dtype, PART_SUM, p[2], NULL, NULL, NULL, B, K, L, C, FIN_MEAN,
                           count, eps, p[0], NULL)))
            return rc;
        return col_sums(ctx, dtype, PART_SQDEV, p[2], NULL, p[0], NULL, B, K, L, C, FIN_RSTD,
                        count, eps, p[1], NULL);
    }
    if (op == EMBER_BATCH_NORM_APPLY) {           /* {y, x, mean, rstd, w, b} */
        if (n == 0) return EMBER_OK;
        if ((rc = ec_fn(ctx, cache_apply, "rows", dtype, "bn_apply", &f))) return rc;
        void *args[] = {&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &n, &C, &L};
        return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
    }
    /* {gx, gw, gb, g, x, mean, rstd, w}: the channel sums where gw, gb or a training gx
     * needs them, then one elementwise pass */
    int train = op == EMBER_BATCH_NORM_BACKWARD;
    if (!p[0] && !p[1] && !p[2]) return EMBER_OK;
    char *sums = NULL;
    if (p[1] || p[2] || (train && p[0])) {
        int size = ec_itemsize(dtype);
        if (!(sums = (char *)ec_alloc(ctx, 2 * C * size))) return EMBER_ERR_MEMORY;
        if ((rc = col_sums(ctx, dtype, PART_GRAD, p[4], p[3], p[5], NULL, B, K, L, C, FIN_SUMS,
                           0, 0, sums, sums + C * size)))
            goto done;
    }
    int64_t ne = p[0] ? n : 0;
    if ((rc = ec_fn(ctx, cache_grad, "rows", dtype, "bn_grad", &f))) goto done;
    void *args[] = {&p[0], &p[3], &p[4], &p[5], &p[6], &p[7], &sums, &p[1], &p[2], &ne, &C, &L,
                    &count, &train};
    rc = ec_launch(ctx, f, ec_blocks(ctx, ne > C ? ne : C, 1), 1, 1, EC_THREADS, 0, args);
done:
    if (sums) ec_free(ctx->device, sums);
    return rc;
}

int ec_norm(ember_ctx *ctx, int32_t op, const ember_view *const *v, double eps) {
    if (op < 0 || op >= EMBER_NORM_COUNT)
        return fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "norm", "unknown op code");
    const char *name = norm_names[op];
    int layer = op <= EMBER_LAYER_NORM_BACKWARD;
    /* the full-size input sets the shape and the dtype: x, or g for the backward ops */
    int slot = op == EMBER_BATCH_NORM_STATS ? 2 : op == EMBER_BATCH_NORM_APPLY ? 1 : 3;
    const ember_view *x = v[slot];
    if (x == NULL) return fail(ctx, EMBER_ERR_VALUE, name, "the input view is NULL");
    int dtype = x->dtype;
    if (dtype != EMBER_FLOAT32 && dtype != EMBER_FLOAT64) return ec_fail_dtype(ctx, name, dtype);
    if (x->ndim != (layer ? 2 : 3))
        return fail(ctx, EMBER_ERR_VALUE, name,
                    layer ? "expected [M, N] views" : "expected [B, C, L] views");
    int64_t dims[3] = {x->sizes[0], x->sizes[1], layer ? 0 : x->sizes[2]};
    char *p[8];
    int rc = norm_check(ctx, op, v, dtype, dims, p);
    if (rc || (rc = ec_enter(ctx))) return rc;
    if (layer) return layer_norm(ctx, op, p, dtype, dims[0], dims[1], eps);
    return batch_norm(ctx, op, p, dtype, dims[0], dims[1], dims[2], eps);
}

/* -- nll ---------------------------------------------------------------------------------- */

static const char *const nll_names[] = {"nll_loss", "cross_entropy", "nll_loss_backward",
                                        "cross_entropy_backward"};

static int nll_views(ember_ctx *ctx, int op, const ember_view *const *v, int dtype,
                     int64_t R, int64_t C) {
    const char *name = nll_names[op];
    int fwd = op == EMBER_NLL || op == EMBER_CROSS_ENTROPY;
    int64_t rc_sizes[2] = {R, C};
    int rc = check_view(ctx, name, v[3], EMBER_INT64, 1, &R);
    for (int k = 0; k < 5 && !rc; k++) {
        if (v[k] == NULL || k == 3) continue;
        if (k == 4)
            rc = check_view(ctx, name, v[k], dtype, 1, &C);
        else if (k == 1 || (k == 0 && fwd))
            rc = check_view(ctx, name, v[k], dtype, 1, &R);
        else
            rc = check_view(ctx, name, v[k], dtype, 2, rc_sizes);
    }
    return rc;
}

/* every target in [0, C) or ignore, before anything is written: a check kernel reports
 * the first bad one through the error slot, and the host waits for it */
static int nll_targets(ember_ctx *ctx, const char *name, int dtype, char *t, int64_t R,
                       int64_t C, int64_t ignore) {
    static ec_kernel cache[16];
    CUdeviceptr slot = ec_error_slot(ctx);
    if (!slot) return ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: could not map the error slot", name);
    CUfunction f;
    int rc = ec_fn(ctx, cache, "rows", dtype, "nll_check", &f);
    if (rc) return rc;
    void *args[] = {&t, &R, &C, &ignore, &slot};
    if ((rc = ec_launch(ctx, f, 1, 1, 1, 1024, 0, args))) return rc;
    return ec_sync_errors(ctx, name);
}

int ec_nll(ember_ctx *ctx, int32_t op, const ember_view *const *v, int64_t ignore_index) {
    static ec_kernel cache_fwd[16], cache_bwd[16], ce_fwd[NCFG][16], ce_bwd[NCFG][16];
    if (op < 0 || op >= EMBER_NLL_COUNT)
        return fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "nll", "unknown op code");
    const char *name = nll_names[op];
    if (v[0] == NULL || v[1] == NULL || v[3] == NULL || (op != EMBER_NLL_BACKWARD && v[2] == NULL))
        return fail(ctx, EMBER_ERR_VALUE, name, "a required operand is NULL");
    int dtype = v[1]->dtype;
    if (dtype != EMBER_FLOAT32 && dtype != EMBER_FLOAT64) return ec_fail_dtype(ctx, name, dtype);
    if (v[3]->ndim != 1) return fail(ctx, EMBER_ERR_VALUE, name, "target must be 1-d");
    int64_t R = v[3]->sizes[0];
    const ember_view *full = v[op != EMBER_NLL_BACKWARD ? 2 : 0];     /* the class count */
    if (full->ndim != 2) return fail(ctx, EMBER_ERR_VALUE, name, "expected [R, C] views");
    int64_t C = full->sizes[1];
    int rc = nll_views(ctx, op, v, dtype, R, C);
    if (rc || R == 0) return rc;
    if ((rc = ec_enter(ctx))) return rc;
    char *p[5];
    for (int k = 0; k < 5; k++) p[k] = v[k] ? v[k]->data : NULL;
    if ((rc = nll_targets(ctx, name, dtype, p[3], R, C, ignore_index))) return rc;
    CUfunction f;
    if (op == EMBER_NLL) {                        /* {loss, wt, a, target, w} */
        if ((rc = ec_fn(ctx, cache_fwd, "rows", dtype, "nll_forward", &f))) return rc;
        void *args[] = {&p[0], &p[1], &p[2], &p[3], &p[4], &R, &C, &ignore_index};
        return ec_launch(ctx, f, ec_blocks(ctx, R, 1), 1, 1, EC_THREADS, 0, args);
    }
    if (op == EMBER_NLL_BACKWARD) {               /* {gx, scale, NULL, target, w}: a warp a row */
        if (C == 0) return EMBER_OK;
        if ((rc = ec_fn(ctx, cache_bwd, "rows", dtype, "nll_backward", &f))) return rc;
        void *args[] = {&p[0], &p[1], &p[3], &p[4], &R, &C, &ignore_index};
        return ec_launch(ctx, f, grid_for(ctx, (R + 7) / 8), 1, 1, 256, 0, args);
    }
    /* cross-entropy: forward {loss, wt, logits, target, w}; backward {gx, scale, logits, ...} */
    int bwd = op == EMBER_CROSS_ENTROPY_BACKWARD, size = ec_itemsize(dtype);
    if (bwd && C == 0) return EMBER_OK;
    char *out0 = p[0], *out1 = bwd ? NULL : p[1], *scale = bwd ? p[1] : NULL;
    int can_vec = C % (16 / size) == 0 && aligned16(p[2]) && (!bwd || aligned16(p[0]));
    row_plan pl;
    plan_rows(ctx, R, C, size, can_vec, 4, &pl);
    void *args[] = {&out0, &out1, &scale, &p[2], &p[3], &p[4], &R, &C, &ignore_index};
    return launch_rows(ctx, bwd ? ce_bwd : ce_fwd, "rows", bwd ? "ce_bwd" : "ce_fwd", dtype, &pl,
                       args);
}
