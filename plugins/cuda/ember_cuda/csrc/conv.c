/* The fused convolution entry (the optional `conv` table entry): forward, input gradient,
 * weight (+ bias) gradient of a grouped 2-d convolution over contiguous float32/float64
 * [N, C, H, W], as im2col + cuBLAS GEMM (kernels/conv.cu has the column kernels).  Checks
 * and messages follow the CPU plugin's _conv.pyx.
 *
 * Layouts.  x [N, C, H, W], w [Cout, Cg, kh, kw] (per group a row-major Coutg x K matrix,
 * K = Cg kh kw), y [N, Cout, Ho, Wo] (per image and group a row-major Coutg x L matrix,
 * L = Ho Wo).  The batch runs in chunks of nc images whose column buffer (im2col) is
 * [C kh kw, nc, L]: per group a row-major K x (nc L) matrix, image n's K x L part at
 * n L with leading dim nc L.  cuBLAS is column-major: a row-major R x C matrix with row
 * stride ld is, to it, the C x R matrix (its transpose) with leading dim ld.  So:
 *   forward         y_ng^T (L x Coutg) = col_ng^T (L x K) . w_g^T (K x Coutg)
 *   input gradient  col_ng^T (L x K)  = dy_ng^T (L x Coutg) . w_g (Coutg x K), then col2im
 *   weight gradient dw_g^T (K x Coutg) = col_g (K x nc L) . dyT_g (nc L x Coutg), where dyT
 *                   is the chunk's dy as [Cout, nc, L], summed over chunks with beta = 1
 * A 1x1 kernel with stride 1 and no padding reads x as its columns (forward, input
 * gradient).  The forward and input-gradient GEMMs are batched over the images or the
 * groups of a chunk, whichever are more (strided batches need one stride per operand).
 *
 * Determinism: the chunking depends on the shapes alone, the chunks are summed in order,
 * col2im is a gather (each input element sums its taps in order) and the bias gradient is
 * a fixed-order reduction; cuBLAS gives the same bits for the same call on one stream. */
#include <limits.h>

#include "ec.h"
#include "entries.h"

#ifndef WORKSPACE_BYTES                        /* (a build may shrink it to test chunking) */
#define WORKSPACE_BYTES ((int64_t)256 << 20)  /* a chunk's buffers (one image at least) */
#endif
#define MAX_CHUNK 65535                        /* images per chunk: the kernels' grid.y */
#define POS_LIMIT ((int64_t)1 << 30)           /* the kernels index a plane with int */
#define BIAS_PART 8192                         /* elements a bias-gradient block sums */
#define BIAS_PARTS 64

typedef struct {                  /* kernels/conv.cu's ConvGeom */
    int64_t C, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t nc;
} conv_geom;

typedef struct {
    int dtype, isz;
    int direct;                   /* 1x1, stride 1, no padding: x is its own column matrix */
    int64_t N, Cout, Coutg, G, K, L;
    conv_geom g;
} conv;

/* a GEMM operand: address, leading dim, element strides between images and groups */
typedef struct {
    char *p;
    int64_t ld, img, grp;
} operand;

static int fail(ember_ctx *ctx, int code, const char *msg) {
    return ec_fail(ctx, code, "conv: %s", msg);
}

/* one GEMM per image (of `images`) and group, as strided batches over the larger count */
static int gemm_grid(ember_ctx *ctx, const conv *c, int ta, int tb, int64_t m, int64_t n,
                     int64_t k, operand A, operand B, double beta, operand C, int64_t images) {
    int rc = EMBER_OK;
    int64_t s = c->isz;
    if (images >= c->G) {
        for (int64_t g = 0; g < c->G && !rc; g++)
            rc = ec_gemm(ctx, c->dtype, ta, tb, m, n, k, A.p + g * A.grp * s, A.ld, A.img,
                         B.p + g * B.grp * s, B.ld, B.img, beta, C.p + g * C.grp * s, C.ld,
                         C.img, images);
    } else {
        for (int64_t i = 0; i < images && !rc; i++)
            rc = ec_gemm(ctx, c->dtype, ta, tb, m, n, k, A.p + i * A.img * s, A.ld, A.grp,
                         B.p + i * B.img * s, B.ld, B.grp, beta, C.p + i * C.img * s, C.ld,
                         C.grp, c->G);
    }
    return rc;
}

/* blocks walking planes of `size` positions (conv.cu's plane_loop): threads per block, the
 * positions a block covers (span) and the blocks per plane (segments) */
typedef struct {
    unsigned threads, segments;
    int span;
} plane_grid;

static plane_grid grid_for(int64_t size) {
    plane_grid p;
    int64_t t = size < 256 ? (size + 31) / 32 * 32 : 256, span = t * 8;
    int64_t segs = (size + span - 1) / span;
    if (segs > 65535) {
        segs = 65535;
        span = (size + segs - 1) / segs;
    }
    p.threads = (unsigned)t;
    p.segments = (unsigned)(segs < 1 ? 1 : segs);
    p.span = (int)span;
    return p;
}

enum { K_IM2COL, K_COL2IM, K_BIAS_FILL, K_BIAS_PARTIAL, K_BIAS_FINAL, K_COUNT };
static const char *const kernel_names[K_COUNT] = {"im2col", "col2im", "bias_fill",
                                                  "bias_grad_partial", "bias_grad_final"};

static int launch(ember_ctx *ctx, const conv *c, int k, unsigned gx, unsigned gy, plane_grid pg,
                  void **args) {
    static ec_kernel cache[K_COUNT][16];
    CUfunction f;
    int rc = ec_fn(ctx, cache[k], "conv", c->dtype, kernel_names[k], &f);
    if (rc) return rc;
    return ec_launch(ctx, f, gx, gy, pg.segments, pg.threads, 0, args);
}

/* the columns of images [n0, n0 + g.nc) of x */
static int im2col(ember_ctx *ctx, const conv *c, const char *x, char *col) {
    plane_grid pg = grid_for(c->L);
    void *args[] = {&x, &col, (void *)&c->g, &pg.span};
    return launch(ctx, c, K_IM2COL, (unsigned)(c->g.C * c->g.kh * c->g.kw), (unsigned)c->g.nc,
                  pg, args);
}

/* dx of the chunk's images from their column gradients */
static int col2im(ember_ctx *ctx, const conv *c, const char *col, char *dx) {
    plane_grid pg = grid_for(c->g.H * c->g.W);
    void *args[] = {&col, &dx, (void *)&c->g, &pg.span};
    return launch(ctx, c, K_COL2IM, (unsigned)c->g.C, (unsigned)c->g.nc, pg, args);
}

static int bias_fill(ember_ctx *ctx, const conv *c, char *y, const char *bias) {
    plane_grid pg = grid_for(c->L);
    int L = (int)c->L;
    int64_t N = c->N, Cout = c->Cout;
    void *args[] = {&y, &bias, &N, &Cout, &L, &pg.span};
    return launch(ctx, c, K_BIAS_FILL, (unsigned)Cout, (unsigned)(N < 65535 ? N : 65535), pg,
                  args);
}

/* db[co] = the sum of dy[:, co] in double: fixed parts, then the parts in order */
static int bias_grad(ember_ctx *ctx, const conv *c, char *db, const char *dy) {
    int64_t NL = c->N * c->L, Cout = c->Cout, L = c->L;
    int parts = (int)((NL + BIAS_PART - 1) / BIAS_PART);
    if (parts > BIAS_PARTS) parts = BIAS_PARTS;
    double *part = ec_alloc(ctx, Cout * parts * (int64_t)sizeof(double));
    if (!part) return EMBER_ERR_MEMORY;
    plane_grid pg = {EC_THREADS, 1, 0};
    void *a1[] = {&dy, &part, &Cout, &L, &NL, &parts};
    int rc = launch(ctx, c, K_BIAS_PARTIAL, (unsigned)Cout, (unsigned)parts, pg, a1);
    if (!rc) {
        void *a2[] = {&part, &db, &Cout, &parts};
        rc = launch(ctx, c, K_BIAS_FINAL, ec_blocks(ctx, Cout, 1), 1, pg, a2);
    }
    ec_free(ctx->device, part);
    return rc;
}

/* images per chunk: buffers of `per_image` elements each within WORKSPACE_BYTES */
static int64_t chunk_of(const conv *c, int64_t per_image) {
    int64_t nc = WORKSPACE_BYTES / (per_image * c->isz);
    if (nc < 1) nc = 1;
    if (nc > c->N) nc = c->N;
    return nc > MAX_CHUNK ? MAX_CHUNK : nc;
}

/* y = conv(x, w) (+ bias: y starts as the bias and the GEMMs add with beta = 1) */
static int forward(ember_ctx *ctx, conv *c, char *y, const char *x, const char *w,
                   const char *bias) {
    int rc;
    int64_t s = c->isz, L = c->L, K = c->K, xs = c->g.C * c->g.H * c->g.W, ys = c->Cout * L;
    double beta = 0;
    if (bias) {
        if ((rc = bias_fill(ctx, c, y, bias))) return rc;
        beta = 1;
    }
    operand W = {(char *)w, K, 0, c->Coutg * K};
    int64_t nc = c->direct ? (c->N < MAX_CHUNK ? c->N : MAX_CHUNK) : chunk_of(c, c->G * K * L);
    char *col = c->direct ? NULL : ec_alloc(ctx, c->G * K * nc * L * s);
    if (!c->direct && !col) return EMBER_ERR_MEMORY;
    rc = EMBER_OK;
    for (int64_t n0 = 0; n0 < c->N && !rc; n0 += nc) {
        int64_t m = c->N - n0 < nc ? c->N - n0 : nc;
        operand A = {(char *)x + n0 * xs * s, L, xs, K * L};   /* x as its own columns */
        if (!c->direct) {
            c->g.nc = m;
            if ((rc = im2col(ctx, c, x + n0 * xs * s, col))) break;
            A = (operand){col, m * L, L, K * m * L};
        }
        operand Y = {y + n0 * ys * s, L, ys, c->Coutg * L};
        rc = gemm_grid(ctx, c, 0, 0, L, c->Coutg, K, A, W, beta, Y, m);
    }
    if (col) ec_free(ctx->device, col);
    return rc;
}

/* dx from dy: the column gradients by GEMM, then col2im */
static int backward_input(ember_ctx *ctx, conv *c, char *dx, const char *dy, const char *w) {
    int64_t s = c->isz, L = c->L, K = c->K, xs = c->g.C * c->g.H * c->g.W, ys = c->Cout * L;
    operand W = {(char *)w, K, 0, c->Coutg * K};
    int64_t nc = c->direct ? (c->N < MAX_CHUNK ? c->N : MAX_CHUNK) : chunk_of(c, c->G * K * L);
    char *col = c->direct ? NULL : ec_alloc(ctx, c->G * K * nc * L * s);
    if (!c->direct && !col) return EMBER_ERR_MEMORY;
    int rc = EMBER_OK;
    for (int64_t n0 = 0; n0 < c->N && !rc; n0 += nc) {
        int64_t m = c->N - n0 < nc ? c->N - n0 : nc;
        operand D = {(char *)dy + n0 * ys * s, L, ys, c->Coutg * L};
        operand X = c->direct ? (operand){dx + n0 * xs * s, L, xs, K * L}
                              : (operand){col, m * L, L, K * m * L};
        if ((rc = gemm_grid(ctx, c, 0, 1, L, K, c->Coutg, D, W, 0.0, X, m))) break;
        if (!c->direct) {
            c->g.nc = m;
            rc = col2im(ctx, c, col, dx + n0 * xs * s);
        }
    }
    if (col) ec_free(ctx->device, col);
    return rc;
}

/* dyT [Cout, m, L] = the chunk's dy [m, Cout, L], through the strided copy */
static int transpose_dy(ember_ctx *ctx, const conv *c, char *dyt, const char *dy, int64_t m) {
    ember_view o = {0}, v = {0};
    o.ndim = v.ndim = 3;
    o.dtype = v.dtype = c->dtype;
    o.data = dyt;
    v.data = (char *)dy;
    int64_t sizes[3] = {m, c->Cout, c->L};
    int64_t os[3] = {c->L, m * c->L, 1}, vs[3] = {c->Cout * c->L, c->L, 1};
    for (int d = 0; d < 3; d++) {
        o.sizes[d] = v.sizes[d] = sizes[d];
        o.strides[d] = os[d];
        v.strides[d] = vs[d];
    }
    return ec_copy(ctx, &o, &v);
}

/* dw = sum over chunks of col . dyT (beta = 1 after the first chunk); db if asked */
static int backward_weight(ember_ctx *ctx, conv *c, char *dw, const char *dy, const char *x,
                           char *db) {
    int64_t s = c->isz, L = c->L, K = c->K, xs = c->g.C * c->g.H * c->g.W, ys = c->Cout * L;
    int64_t nc = chunk_of(c, c->G * K * L + c->Cout * L);
    char *col = ec_alloc(ctx, c->G * K * nc * L * s);
    char *dyt = nc > 1 ? ec_alloc(ctx, c->Cout * nc * L * s) : NULL;
    int rc = (!col || (nc > 1 && !dyt)) ? EMBER_ERR_MEMORY : EMBER_OK;
    operand Wg = {dw, K, 0, c->Coutg * K};
    for (int64_t n0 = 0; n0 < c->N && !rc; n0 += nc) {
        int64_t m = c->N - n0 < nc ? c->N - n0 : nc;
        c->g.nc = m;
        if ((rc = im2col(ctx, c, x + n0 * xs * s, col))) break;
        /* one image's dy [Cout, L] is already [Cout, 1, L] */
        char *src = m == 1 ? (char *)dy + n0 * ys * s : dyt;
        if (m > 1 && (rc = transpose_dy(ctx, c, dyt, dy + n0 * ys * s, m))) break;
        operand A = {col, m * L, 0, K * m * L}, B = {src, m * L, 0, c->Coutg * m * L};
        rc = gemm_grid(ctx, c, 1, 0, K, c->Coutg, m * L, A, B, n0 ? 1.0 : 0.0, Wg, 1);
    }
    if (col) ec_free(ctx->device, col);
    if (dyt) ec_free(ctx->device, dyt);
    if (!rc && db) rc = bias_grad(ctx, c, db, dy);
    return rc;
}

/* the CPU plugin's checks; fills *c from the operands */
static int setup(ember_ctx *ctx, int32_t op, const ember_conv_params *p, const ember_view *out,
                 const ember_view *a, const ember_view *b, const ember_view *cv, conv *c) {
    const ember_view *x, *w, *y;
    if (op == EMBER_CONV_FORWARD) x = a, w = b, y = out;
    else if (op == EMBER_CONV_BACKWARD_INPUT) x = out, w = b, y = a;
    else if (op == EMBER_CONV_BACKWARD_WEIGHT) x = b, w = out, y = a;
    else return fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "unknown op code");
    if (out->ndim != 4 || a->ndim != 4 || b->ndim != 4)
        return fail(ctx, EMBER_ERR_VALUE, "expects 4-d operands");
    if (a->dtype != out->dtype || b->dtype != out->dtype || (cv && cv->dtype != out->dtype) ||
        (out->dtype != EMBER_FLOAT32 && out->dtype != EMBER_FLOAT64))
        return fail(ctx, EMBER_ERR_TYPE, "expects float32 or float64 operands");
    if (!ec_contiguous(out) || !ec_contiguous(a) || !ec_contiguous(b) || (cv && !ec_contiguous(cv)))
        return fail(ctx, EMBER_ERR_VALUE, "expects contiguous operands");
    conv_geom *g = &c->g;
    c->dtype = out->dtype;
    c->isz = ec_itemsize(out->dtype);
    c->N = x->sizes[0];
    g->C = x->sizes[1], g->H = x->sizes[2], g->W = x->sizes[3];
    c->Cout = w->sizes[0], g->kh = w->sizes[2], g->kw = w->sizes[3];
    g->Ho = y->sizes[2], g->Wo = y->sizes[3];
    g->sh = p->stride[0], g->sw = p->stride[1], g->ph = p->padding[0], g->pw = p->padding[1];
    g->dh = p->dilation[0], g->dw = p->dilation[1];
    c->G = p->groups;
    int64_t Cg = w->sizes[1];
    if (c->G <= 0 || Cg * c->G != g->C || c->Cout % c->G || y->sizes[0] != c->N ||
        y->sizes[1] != c->Cout || (cv && (cv->ndim != 1 || cv->sizes[0] != c->Cout)) ||
        g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1 || g->ph < 0 || g->pw < 0 ||
        (g->Ho - 1) * g->sh + (g->kh - 1) * g->dh >= g->H + 2 * g->ph ||
        (g->Wo - 1) * g->sw + (g->kw - 1) * g->dw >= g->W + 2 * g->pw)
        return fail(ctx, EMBER_ERR_VALUE, "operand shapes do not match");
    c->Coutg = c->Cout / c->G;
    c->K = Cg * g->kh * g->kw;
    c->L = g->Ho * g->Wo;
    if (c->N == 0 || c->Cout == 0 || c->L == 0 || c->K == 0)
        return fail(ctx, EMBER_ERR_VALUE, "empty operands reach the core's composite, not the "
                    "kernel");
    if (c->K > INT_MAX || c->L > INT_MAX || c->Cout > INT_MAX || c->G * c->K > INT_MAX)
        return fail(ctx, EMBER_ERR_RUNTIME, "too large for 32-bit BLAS");
    if ((double)c->G * c->K * c->L * c->isz > 1e15)     /* one image's columns: no overflow */
        return fail(ctx, EMBER_ERR_MEMORY, "one image's column buffer is too large");
    if (g->H * g->W >= POS_LIMIT || c->L >= POS_LIMIT || g->H + 2 * g->ph >= POS_LIMIT ||
        g->W + 2 * g->pw >= POS_LIMIT || g->kh * g->dh >= POS_LIMIT ||
        g->kw * g->dw >= POS_LIMIT)
        return fail(ctx, EMBER_ERR_RUNTIME, "a plane too large for 32-bit indexing");
    c->direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 &&
                g->pw == 0;
    g->nc = 0;
    return EMBER_OK;
}

int ec_conv(ember_ctx *ctx, int32_t op, const ember_conv_params *p, const ember_view *out,
            const ember_view *a, const ember_view *b, const ember_view *cv) {
    conv c;
    int rc = setup(ctx, op, p, out, a, b, cv, &c);
    if (rc) return rc;
    if (op == EMBER_CONV_FORWARD)
        return forward(ctx, &c, out->data, a->data, b->data, cv ? cv->data : NULL);
    if (op == EMBER_CONV_BACKWARD_INPUT) return backward_input(ctx, &c, out->data, a->data, b->data);
    return backward_weight(ctx, &c, out->data, a->data, b->data, cv ? cv->data : NULL);
}
