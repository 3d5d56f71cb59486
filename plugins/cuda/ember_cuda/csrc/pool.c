/* The fused pooling entry (the optional `pool` table entry): max, average and adaptive
 * pooling and their backward ops over contiguous float32/float64 [N, C, H, W] planes
 * (kernels/pool.cu).  Checks and messages follow the CPU plugin's _pool.pyx.
 *
 * The backward ops are gathers over the outputs whose window covers each input element,
 * so POOL_MAX_BACKWARD reads the window geometry from the params: the core passes the
 * forward's (kernel <= 0: adaptive windows, as adaptive_max_pool2d_backward passes).  An
 * index outside its output's window (never one the forward made) is ignored, as PyTorch's
 * CUDA max_pool2d backward ignores it, where the CPU plugin would scatter it. */
#include "ec.h"

typedef struct {                  /* kernels/pool.cu's PoolGeom */
    int64_t planes, H, W, Ho, Wo;
    int64_t kernel[2], stride[2], padding[2], dilation[2];
    int64_t divisor;
    int32_t count_include_pad;
    int32_t adaptive;
} pool_geom;

static int fail(ember_ctx *ctx, int code, const char *msg) {
    return ec_fail(ctx, code, "pool: %s", msg);
}

static int is_backward(int op) {
    return op == EMBER_POOL_MAX_BACKWARD || op == EMBER_POOL_AVG_BACKWARD ||
           op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD;
}

static int needs_indices(int op) {
    return op == EMBER_POOL_MAX || op == EMBER_POOL_MAX_BACKWARD || op == EMBER_POOL_ADAPTIVE_MAX;
}

/* the kernel of each op code (pool.cu) */
static int kernel_of(int op) {
    switch (op) {
    case EMBER_POOL_MAX: case EMBER_POOL_ADAPTIVE_MAX: return 0;
    case EMBER_POOL_MAX_BACKWARD: return 1;
    case EMBER_POOL_AVG: case EMBER_POOL_ADAPTIVE_AVG: return 2;
    default: return 3;
    }
}

static const char *const kernel_names[] = {"max_pool", "max_pool_backward", "avg_pool",
                                           "avg_pool_backward"};

static int check(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
                 const ember_view *a) {
    if (op < 0 || op >= EMBER_POOL_COUNT) return fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "unknown op code");
    const ember_view *big = is_backward(op) ? out : a, *small = is_backward(op) ? a : out;
    if (out->ndim != 4 || a->ndim != 4 || big->sizes[0] != small->sizes[0] ||
        big->sizes[1] != small->sizes[1])
        return fail(ctx, EMBER_ERR_VALUE, "expects [N, C, H, W] operands");
    if (needs_indices(op)) {
        int ok = indices != NULL && indices->dtype == EMBER_INT64 && indices->ndim == 4 &&
                 ec_contiguous(indices);
        for (int d = 0; ok && d < 4; d++) ok = indices->sizes[d] == small->sizes[d];
        if (!ok) return fail(ctx, EMBER_ERR_VALUE, "needs contiguous int64 indices");
    }
    if (a->dtype != out->dtype || (out->dtype != EMBER_FLOAT32 && out->dtype != EMBER_FLOAT64))
        return fail(ctx, EMBER_ERR_TYPE, "expects float32 or float64 operands");
    if (!ec_contiguous(out) || !ec_contiguous(a))
        return fail(ctx, EMBER_ERR_VALUE, "expects contiguous operands");
    return EMBER_OK;
}

int ec_pool(ember_ctx *ctx, int32_t op, const ember_pool_params *p, const ember_view *out,
            const ember_view *indices, const ember_view *a) {
    int rc = check(ctx, op, out, indices, a);
    if (rc) return rc;
    const ember_view *big = is_backward(op) ? out : a, *small = is_backward(op) ? a : out;
    pool_geom g;
    g.planes = big->sizes[0] * big->sizes[1];
    g.H = big->sizes[2];
    g.W = big->sizes[3];
    g.Ho = small->sizes[2];
    g.Wo = small->sizes[3];
    for (int d = 0; d < 2; d++) {
        g.kernel[d] = p->kernel[d];
        g.stride[d] = p->stride[d] > 0 ? p->stride[d] : 1;   /* unused by adaptive windows */
        g.padding[d] = p->padding[d];
        g.dilation[d] = p->dilation[d];
    }
    g.divisor = p->divisor_override;
    g.count_include_pad = p->count_include_pad;
    g.adaptive = op == EMBER_POOL_ADAPTIVE_AVG || op == EMBER_POOL_ADAPTIVE_AVG_BACKWARD ||
                 op == EMBER_POOL_ADAPTIVE_MAX ||
                 (op == EMBER_POOL_MAX_BACKWARD && (p->kernel[0] <= 0 || p->kernel[1] <= 0));
    if (g.planes == 0 || g.H * g.W == 0) return EMBER_OK;
    /* forward ops: a thread per output; backward ops: a thread per input element */
    int64_t work = g.planes * (is_backward(op) ? g.H * g.W : g.Ho * g.Wo);
    if (work == 0) return EMBER_OK;
    static ec_kernel cache[4][16];
    int k = kernel_of(op);
    CUfunction f;
    if ((rc = ec_fn(ctx, cache[k], "pool", out->dtype, kernel_names[k], &f))) return rc;
    void *ix = indices ? (void *)indices->data : NULL;
    unsigned blocks = ec_blocks(ctx, work, 1);
    switch (k) {
    case 0: {                                         /* x, y, indices */
        void *args[] = {(void *)&a->data, (void *)&out->data, &ix, &g};
        return ec_launch(ctx, f, blocks, 1, 1, EC_THREADS, 0, args);
    }
    case 1: {                                         /* grad_output, indices, grad_input */
        void *args[] = {(void *)&a->data, &ix, (void *)&out->data, &g};
        return ec_launch(ctx, f, blocks, 1, 1, EC_THREADS, 0, args);
    }
    default: {                                        /* source, destination */
        void *args[] = {(void *)&a->data, (void *)&out->data, &g};
        return ec_launch(ctx, f, blocks, 1, 1, EC_THREADS, 0, args);
    }
    }
}
