/* The scan entry: cumsum, cumprod, cummax, cummin along the last dim (kernels/scan.cu).
 * The other dims are rows, coalesced over out, a (and indices); a row goes to one thread
 * when short, else to one warp, or to one block when rows are long and too few to give
 * every SM warps of its own. */
#include <stdio.h>

#include "ec.h"
#include "entries.h"

#define THREADS 256          /* threads per block in warp and thread modes */
#define ROW_BLOCK 512        /* threads per block in block mode: kernels/scan.cu's MAX_THREADS */
#define SHORT_ROW 16         /* rows of at most this many elements: one thread each */

enum { M_WARP, M_BLOCK, M_THREAD };    /* kernels/scan.cu's M_* */

static const char *const names[] = {"cumsum", "cumprod", "cummax", "cummin"};
typedef char names_check[sizeof names / sizeof *names == EMBER_SCAN_COUNT ? 1 : -1];

/* kernels/scan.cu's ScanPlan */
typedef struct {
    int64_t rows, L;
    int64_t so, sa, si;
    int32_t mode, pad;
} splan;

static int check(ember_ctx *ctx, const char *name, int n, const ember_view *const *v) {
    int nd = v[0]->ndim;
    if (nd < 1 || nd > EMBER_MAX_DIM)
        return ec_fail(ctx, EMBER_ERR_VALUE, "%s: bad number of dimensions", name);
    for (int k = 0; k < n; k++) {
        if (v[k]->ndim != nd)
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: bad number of dimensions", name);
        for (int d = 0; d < nd; d++) {
            if (v[k]->sizes[d] < 0 || v[k]->sizes[d] != v[0]->sizes[d])
                return ec_fail(ctx, EMBER_ERR_VALUE, "%s: operand shapes do not match", name);
            if (v[k]->strides[d] < 0)
                return ec_fail(ctx, EMBER_ERR_VALUE, "%s: negative stride", name);
        }
    }
    return EMBER_OK;
}

/* the rows: every dim but the last, size-1 dims dropped, neighbours merged where every
 * operand steps evenly across both; returns the row count */
static int64_t rows_make(ec_layout *L, int n, const ember_view *const *v) {
    int nd = v[0]->ndim - 1, m = 0;
    int64_t rows = 1;
    for (int d = 0; d < nd; d++) {
        int64_t size = v[0]->sizes[d];
        rows *= size;
        if (size == 1) continue;
        int merge = m > 0;
        for (int k = 0; k < n && merge; k++)
            merge = L->strides[k][m - 1] == v[k]->strides[d] * size;
        if (merge) {
            L->sizes[m - 1] *= size;
            for (int k = 0; k < n; k++) L->strides[k][m - 1] = v[k]->strides[d];
            continue;
        }
        L->sizes[m] = size;
        for (int k = 0; k < n; k++) L->strides[k][m] = v[k]->strides[d];
        m++;
    }
    L->ndim = m;
    L->index32 = rows < ((int64_t)1 << 31);
    return rows;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int ec_scan(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
            const ember_view *a) {
    if (op < 0 || op >= EMBER_SCAN_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "scan: unknown op code");
    const char *name = names[op];
    if (a->dtype != out->dtype)
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: out must have the input's dtype", name);
    if (!ec_itemsize(a->dtype)) return ec_fail(ctx, EMBER_ERR_TYPE, "%s: unknown dtype code", name);
    if (a->dtype == EMBER_BOOL && (op == EMBER_SCAN_CUMSUM || op == EMBER_SCAN_CUMPROD))
        return ec_fail_dtype(ctx, name, a->dtype);
    int extreme = op == EMBER_SCAN_CUMMAX || op == EMBER_SCAN_CUMMIN;
    if (extreme) {
        if (indices == NULL)
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: needs an indices view", name);
        if (indices->dtype != EMBER_INT64)
            return ec_fail(ctx, EMBER_ERR_TYPE, "%s: indices must be int64", name);
    }
    const ember_view *v[3] = {out, a, indices};
    int n = extreme ? 3 : 2, rc;
    if ((rc = check(ctx, name, n, v))) return rc;

    ec_layout Lrow = {0};
    int last = a->ndim - 1;
    splan P = {0};
    P.rows = rows_make(&Lrow, n, v);
    P.L = a->sizes[last];
    P.so = out->strides[last];
    P.sa = a->strides[last];
    P.si = extreme ? indices->strides[last] : 0;
    if (P.rows == 0 || P.L == 0) return EMBER_OK;
    if ((rc = ec_enter(ctx))) return rc;
    int sms = ec_devices[ctx->device].sm_count;
    P.mode = P.L <= SHORT_ROW ? M_THREAD
             : (P.L > 2048 && P.rows < (int64_t)32 * sms) ? M_BLOCK : M_WARP;
    unsigned threads = P.mode == M_BLOCK ? ROW_BLOCK : THREADS;
    int64_t per_block = P.mode == M_BLOCK ? 1 : P.mode == M_WARP ? THREADS / 32 : THREADS;
    int64_t grid = min64((P.rows + per_block - 1) / per_block,
                         (int64_t)(P.mode == M_BLOCK ? 16 : 32) * sms);

    static ec_kernel cache[EMBER_SCAN_COUNT][16];
    char kname[32];
    snprintf(kname, sizeof kname, "scan_%s", name);
    CUfunction f;
    if ((rc = ec_fn(ctx, cache[op], "scan", a->dtype, kname, &f))) return rc;
    char *pi = extreme ? indices->data : NULL;
    void *args[] = {(void *)&out->data, &pi, (void *)&a->data, &Lrow, &P};
    return ec_launch(ctx, f, (unsigned)grid, 1, 1, threads, 0, args);
}
