/* The reduce entry: sum, mean, prod, max, min, argmax, argmin over the trailing `nreduce`
 * dims of `a` (kernels/reduce.cu holds the kernels and the summation orders).
 *
 * The kept dims (operands out, a) and the reduced dims (a) are coalesced apart; both are
 * first sorted by a's stride, largest outermost (stride-0 dims outermost of all), so that
 * any permutation of a contiguous tensor reduces like the contiguous one.  Arg-reductions
 * keep the reduced dims in order: the position they return is row-major over them.
 *
 * Planning (a function of the shapes, the strides and the SM count only, so results are
 * reproducible bit for bit):
 *   outer    the kept dims move fastest in memory (a's innermost kept stride is below the
 *            innermost reduced one), or the reductions are tiny (<= 16 elements) or empty:
 *            blocks of BX outputs x BY reducers;
 *   inner    the rest, one warp per output for short reductions over many outputs, else
 *            one block per output (`inner` when each output's elements are one unit-stride
 *            run, `strided` otherwise).
 * Either splits long reductions across blocks when the outputs alone would not fill the
 * GPU (e.g. a full sum of a large tensor: one wave of 4 blocks per SM, each reducing a
 * fixed range, the last block to finish combining the partials in a fixed order).  Split
 * kernels count finished blocks in per-stream tickets that start at zero and are left at
 * zero (kernels on one stream never overlap; two streams never share tickets). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "ec.h"
#include "entries.h"

#define THREADS 256          /* kernels/reduce.cu's THREADS */
#define MIN_BLOCKS 4         /* ... and MIN_BLOCKS: blocks of THREADS resident per SM */
#define UNROLL 4             /* ... and UNROLL */
#define TICKETS 4096         /* ticket counters per stream: split outputs (or blocks) at most */
#define TICKET_STREAMS 16    /* streams per device with tickets of their own */
#define MIN_SPLIT_ROWS 16    /* outer: reduced elements per thread and split, at least */

static const char *const names[] = {"sum", "mean", "prod", "max", "min", "argmax", "argmin"};
static const char *const kernel_ops[] = {"sum", "sum", "prod", "max", "min", "argmax",
                                         "argmin"};
typedef char names_check[sizeof names / sizeof *names == EMBER_REDUCE_COUNT ? 1 : -1];

/* kernels/reduce.cu's Plan */
typedef struct {
    int64_t K, R, chunk;
    void *ws;
    unsigned *ticket;
    int32_t S, warp, op, bx;
} rplan;

enum { L_INNER, L_STRIDED, L_OUTER };
static const char *const layout_names[] = {"inner", "strided", "outer"};

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* -- dims -------------------------------------------------------------------------------- */

/* Sort L's dims by operand `key`'s stride, largest (stride 0: largest of all) outermost,
 * keeping the order of equals; drop size-1 dims; merge neighbours every operand steps
 * evenly across.  Returns the element count. */
static int64_t dims_make(ec_layout *L, int nops, int key, int sort) {
    if (sort) {
        for (int d = 1; d < L->ndim; d++) {
            for (int j = d; j > 0; j--) {
                uint64_t s0 = (uint64_t)L->strides[key][j - 1] - 1;   /* 0 wraps to the top */
                uint64_t s1 = (uint64_t)L->strides[key][j] - 1;
                if (s1 <= s0) break;
                int64_t t = L->sizes[j];
                L->sizes[j] = L->sizes[j - 1];
                L->sizes[j - 1] = t;
                for (int k = 0; k < nops; k++) {
                    t = L->strides[k][j];
                    L->strides[k][j] = L->strides[k][j - 1];
                    L->strides[k][j - 1] = t;
                }
            }
        }
    }
    int m = 0;
    int64_t numel = 1;
    for (int d = 0; d < L->ndim; d++) {
        numel *= L->sizes[d];
        if (L->sizes[d] == 1) continue;
        int merge = m > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = L->strides[k][m - 1] == L->strides[k][d] * L->sizes[d];
        if (merge) {
            L->sizes[m - 1] *= L->sizes[d];
            for (int k = 0; k < nops; k++) L->strides[k][m - 1] = L->strides[k][d];
            continue;
        }
        L->sizes[m] = L->sizes[d];
        for (int k = 0; k < nops; k++) L->strides[k][m] = L->strides[k][d];
        m++;
    }
    L->ndim = m;
    L->index32 = numel < ((int64_t)1 << 31);    /* the kernels divide positions in 32 bits */
    return numel;
}

/* -- tickets ------------------------------------------------------------------------------- */

typedef struct {
    int used;
    CUstream stream;
    CUdeviceptr ptr;
} ticket_slot;

static ticket_slot slots[EC_MAX_DEVICES][TICKET_STREAMS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* TICKETS zeroed counters of the current stream (made on its first split reduction); 0
 * when every slot is taken */
static CUdeviceptr stream_tickets(ember_ctx *ctx) {
    int d = ctx->device;
    CUstream s = ec_stream(d);
    CUdeviceptr p = 0;
    pthread_mutex_lock(&slots_lock);
    for (int i = 0; i < TICKET_STREAMS; i++) {
        ticket_slot *t = &slots[d][i];
        if (t->used && t->stream == s) {
            p = t->ptr;
            break;
        }
        if (!t->used) {
            CUdeviceptr q = 0;
            if (cu.MemAlloc(&q, TICKETS * sizeof(unsigned)) != CUDA_SUCCESS) break;
            if (cu.MemsetD8Async(q, 0, TICKETS * sizeof(unsigned), s) != CUDA_SUCCESS) {
                cu.MemFree(q);
                break;
            }
            t->used = 1;
            t->stream = s;
            t->ptr = q;
            p = q;
            break;
        }
    }
    pthread_mutex_unlock(&slots_lock);
    return p;
}

/* -- planning ------------------------------------------------------------------------------ */

static int vec_of(int itemsize) {           /* kernels/reduce.cu's VEC */
    int v = 16 / itemsize;
    return v > 8 ? 8 : v;
}

/* the grid of the outer layout, and its plan */
static void plan_outer(rplan *P, int sms, unsigned *gx) {
    int64_t target = (int64_t)MIN_BLOCKS * sms;
    int bx = 1;
    while (bx < 32 && bx < P->K) bx <<= 1;
    int by = THREADS / bx;
    int64_t blocks = cdiv(P->K, bx);
    int64_t S = 1;
    if (blocks <= target / 2 && P->R >= 2 * by * MIN_SPLIT_ROWS)
        S = min64(min64(cdiv(target, blocks), P->R / (by * MIN_SPLIT_ROWS)), 65535);
    P->chunk = P->R ? cdiv(P->R, S) : 0;
    P->S = P->R ? (int32_t)cdiv(P->R, P->chunk) : 1;
    P->bx = bx;
    *gx = (unsigned)(P->S > 1 ? blocks : min64(blocks, (int64_t)sms * 32));
}

/* the grid of the inner layouts: warps for short reductions over many outputs, else
 * blocks, split when the outputs are too few to fill one wave */
static void plan_inner(rplan *P, int sms, int vec, unsigned *gx) {
    int64_t target = (int64_t)MIN_BLOCKS * sms;
    int64_t nv = cdiv(P->R, vec);
    int64_t S = 1;
    P->warp = nv <= 64 || (nv <= 512 && P->K >= (int64_t)16 * sms);
    if (P->warp) {
        *gx = (unsigned)min64(cdiv(P->K, THREADS / 32), (int64_t)sms * 32);
    } else {
        if (P->K <= target / 2 && P->K <= TICKETS)
            S = min64(min64(cdiv(target, P->K), max64(nv / (THREADS * UNROLL), 1)), 65535);
        *gx = (unsigned)(S > 1 ? P->K : min64(P->K, (int64_t)sms * 32));
    }
    P->chunk = cdiv(nv, S);
    P->S = (int32_t)cdiv(nv, P->chunk);
}

/* -- the entry ------------------------------------------------------------------------------ */

static int check(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                 int32_t nreduce) {
    const char *name = names[op];
    if (op == EMBER_REDUCE_ARGMAX || op == EMBER_REDUCE_ARGMIN) {
        if (out->dtype != EMBER_INT64)
            return ec_fail(ctx, EMBER_ERR_TYPE, "%s: out must be int64", name);
    } else if (a->dtype != out->dtype) {
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: out must have the input's dtype", name);
    }
    if (!ec_itemsize(a->dtype)) return ec_fail(ctx, EMBER_ERR_TYPE, "%s: unknown dtype code", name);
    if (op == EMBER_REDUCE_MEAN && !ec_is_floating(a->dtype))
        return ec_fail_dtype(ctx, name, a->dtype);
    int nkeep = a->ndim - nreduce;
    if (a->ndim < 0 || a->ndim > EMBER_MAX_DIM || nreduce < 0 || nkeep < 0 || out->ndim != nkeep)
        return ec_fail(ctx, EMBER_ERR_VALUE, "%s: bad number of dimensions", name);
    for (int d = 0; d < a->ndim; d++) {
        if (a->sizes[d] < 0 || (d < nkeep && out->sizes[d] != a->sizes[d]))
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: out's shape does not match", name);
        if (a->strides[d] < 0 || (d < nkeep && out->strides[d] < 0))
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: negative stride", name);
    }
    return EMBER_OK;
}

int ec_reduce(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
              int32_t nreduce) {
    if (op < 0 || op >= EMBER_REDUCE_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "reduce: unknown op code");
    int rc = check(ctx, op, out, a, nreduce);
    if (rc) return rc;
    int arg = op == EMBER_REDUCE_ARGMAX || op == EMBER_REDUCE_ARGMIN;
    int nkeep = a->ndim - nreduce;

    ec_layout K = {0}, Lr = {0};
    K.ndim = nkeep;
    for (int d = 0; d < nkeep; d++) {
        K.sizes[d] = a->sizes[d];
        K.strides[0][d] = out->strides[d];
        K.strides[1][d] = a->strides[d];
    }
    Lr.ndim = nreduce;
    for (int d = 0; d < nreduce; d++) {
        Lr.sizes[d] = a->sizes[nkeep + d];
        Lr.strides[0][d] = a->strides[nkeep + d];
    }
    rplan P = {0};
    P.op = op;
    P.K = dims_make(&K, 2, 1, 1);
    P.R = dims_make(&Lr, 1, 0, !arg);
    if (P.K == 0) return EMBER_OK;
    if (P.R == 0 && op >= EMBER_REDUCE_MAX)
        return ec_fail(ctx, EMBER_ERR_RUNTIME,
                       "%s: cannot reduce over an empty dimension (it has no identity)", names[op]);
    if ((rc = ec_enter(ctx))) return rc;

    int64_t ka = K.ndim ? K.strides[1][K.ndim - 1] : 0;
    int64_t ra = Lr.ndim ? Lr.strides[0][Lr.ndim - 1] : 0;
    int layout = (P.R == 0 || Lr.ndim == 0 || (K.ndim > 0 && (ka < ra || P.R <= 16)))
                 ? L_OUTER : (Lr.ndim == 1 && ra == 1) ? L_INNER : L_STRIDED;
    int sms = ec_devices[ctx->device].sm_count;
    unsigned gx;
    if (layout == L_OUTER)
        plan_outer(&P, sms, &gx);
    else
        plan_inner(&P, sms, vec_of(ec_itemsize(a->dtype)), &gx);

    static ec_kernel cache[3][EMBER_REDUCE_COUNT][16];
    char kname[32];
    snprintf(kname, sizeof kname, "reduce_%s_%s", layout_names[layout], kernel_ops[op]);
    CUfunction f;
    if ((rc = ec_fn(ctx, cache[layout][op], "reduce", a->dtype, kname, &f))) return rc;

    void *ws = NULL, *own_tickets = NULL;
    if (P.S > 1) {
        int tsize = arg ? 16 : (a->dtype == EMBER_FLOAT64 || !ec_is_floating(a->dtype)) ? 8 : 4;
        if (!(ws = ec_alloc(ctx, P.S * P.K * tsize))) return EMBER_ERR_MEMORY;
        P.ws = ws;
        P.ticket = (unsigned *)(uintptr_t)stream_tickets(ctx);
        if (!P.ticket) {                 /* every slot taken: zeroed tickets of this call's own */
            if (!(own_tickets = ec_alloc(ctx, TICKETS * sizeof(unsigned)))) {
                ec_free(ctx->device, ws);
                return EMBER_ERR_MEMORY;
            }
            CUresult r = cu.MemsetD8Async((CUdeviceptr)(uintptr_t)own_tickets, 0,
                                          TICKETS * sizeof(unsigned), ec_stream(ctx->device));
            if (r != CUDA_SUCCESS) rc = ec_cu_fail(ctx, r, "cuMemsetD8Async");
            P.ticket = own_tickets;
        }
    }
    if (!rc) {
        void *args[] = {(void *)&out->data, (void *)&a->data, &K, &Lr, &P};
        rc = ec_launch(ctx, f, gx, (unsigned)P.S, 1, THREADS, 0, args);
    }
    ec_free(ctx->device, ws);            /* stream-ordered: safe once the kernel is queued */
    ec_free(ctx->device, own_tickets);
    return rc;
}
