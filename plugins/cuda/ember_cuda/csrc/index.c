/* The index family's entries: gather/scatter along one dim (ec_index, kernels/index.cu) and
 * binary search / multinomial draws along the last dim (ec_search, kernels/search.cu).
 * Checks, semantics and messages are the CPU plugin's (_index.pyx).  A bad index or a bad
 * row of weights is found by the kernels and reported through the device error slot; both
 * entries wait for their kernels, as the ABI asks, and return that error.
 *
 * How a scatter is split (duplicate indices must combine in row-major order of p):
 *   - reductions: atomics, one thread per position (integers give the same bits in any
 *     order; floats do not), except in deterministic mode, where floats walk each line
 *     along dim in order (one thread per line, as the CPU plugin);
 *   - plain SCATTER: one thread per position when no duplicates can occur (index's size
 *     along dim is 1), or when the index is constant outside dim (index_copy, index_put_,
 *     put_, advanced setitem): a first pass records the last position of each index value
 *     and the second writes only those; otherwise the in-order line walk. */
#include <string.h>

#include "ec.h"

static const char *const index_names[] = {"gather", "scatter", "scatter_add", "scatter_mul",
                                          "scatter_amax", "scatter_amin"};
static const char *const search_names[] = {"searchsorted", "searchsorted", "multinomial"};
typedef char index_names_check[
    sizeof index_names / sizeof *index_names == EMBER_INDEX_COUNT ? 1 : -1];
typedef char search_names_check[
    sizeof search_names / sizeof *search_names == EMBER_SEARCH_COUNT ? 1 : -1];

typedef struct {
    ember_ctx *ctx;
    int32_t op, wrap, dim;
    const ember_view *w;          /* walked at index's positions: out (gather) or a */
    const ember_view *t;          /* addressed through the index along dim: a or out */
    const ember_view *ix;
    int64_t length, limit;        /* index's size along dim; valid indices are [0, limit) */
    CUdeviceptr err;              /* the error slot */
} index_call;

/* v over the index's positions: index's sizes, v's strides but `dim_stride` along dim */
static ember_view at_positions(const ember_view *v, const ember_view *ix, int dim,
                               int64_t dim_stride) {
    ember_view r = *v;
    r.ndim = ix->ndim;
    memcpy(r.sizes, ix->sizes, sizeof r.sizes);
    r.strides[dim] = dim_stride;
    r.flags = 0;
    return r;
}

/* v over the index's positions with dim left out (`skip` = dim), or v's leading dims
 * (`skip` = the last dim, the only one dropped) */
static ember_view without(const ember_view *v, const ember_view *shape, int skip) {
    ember_view r = *v;
    int k = 0;
    for (int d = 0; d < shape->ndim; d++) {
        if (d == skip) continue;
        r.sizes[k] = shape->sizes[d];
        r.strides[k] = v->strides[d];
        k++;
    }
    r.ndim = k;
    r.flags = 0;
    return r;
}

/* the layout over the positions: w, t (stride 0 along dim), index, and with `coord` the
 * position's coordinate along dim as a fourth operand */
static int64_t positions(ec_layout *L, const index_call *c, int coord) {
    ember_view vw = at_positions(c->w, c->ix, c->dim, c->w->strides[c->dim]);
    ember_view vt = at_positions(c->t, c->ix, c->dim, 0);
    ember_view vc = at_positions(c->ix, c->ix, c->dim, 1);
    for (int d = 0; d < vc.ndim; d++)
        if (d != c->dim) vc.strides[d] = 0;
    const ember_view *v[4] = {&vw, &vt, c->ix, &vc};
    return ec_layout_make(L, coord ? 4 : 3, v);
}

static int launch_elems(const index_call *c, int op, CUdeviceptr winner) {
    static ec_kernel cache[16];
    ec_layout L;
    int64_t n = positions(&L, c, winner != 0);
    int64_t st = c->t->strides[c->dim];
    CUfunction f;
    int rc = ec_fn(c->ctx, cache, "index", c->w->dtype, "index_elems", &f);
    if (rc) return rc;
    void *args[] = {(void *)&c->w->data, (void *)&c->t->data, (void *)&c->ix->data, &winner,
                    &n, &op, (void *)&c->limit, &st, (void *)&c->wrap, (void *)&c->dim,
                    (void *)&c->err, &L};
    return ec_launch(c->ctx, f, ec_blocks(c->ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}

/* The unit (4, 8 or 16 bytes) whole rows can be gathered in, or 0: the layout's last dim
 * is contiguous in w and t and holds one index, and every row start is unit-aligned. */
static int row_unit(const ec_layout *L, const index_call *c, int itemsize) {
    int k = L->ndim - 1;
    if (k < 0 || L->strides[0][k] != 1 || L->strides[1][k] != 1 || L->strides[2][k] != 0)
        return 0;
    int64_t bytes = L->sizes[k] * itemsize, st = c->t->strides[c->dim] * itemsize;
    for (int u = 16; u > itemsize && u >= 4; u /= 2) {
        int ok = bytes % u == 0 && st % u == 0 && (uintptr_t)c->w->data % u == 0 &&
                 (uintptr_t)c->t->data % u == 0;
        for (int d = 0; d < k && ok; d++)
            ok = (L->strides[0][d] * itemsize) % u == 0 && (L->strides[1][d] * itemsize) % u == 0;
        if (ok) return u;
    }
    return 0;
}

static int gather(const index_call *c) {
    ec_layout L;
    int64_t n = positions(&L, c, 0);
    int itemsize = ec_itemsize(c->w->dtype), unit = row_unit(&L, c, itemsize);
    if (!unit) return launch_elems(c, EMBER_INDEX_GATHER, 0);
    static ec_kernel cache[3][16];
    static const char *const names[] = {"index_rows4", "index_rows8", "index_rows16"};
    int which = unit == 4 ? 0 : unit == 8 ? 1 : 2;
    int64_t row = L.sizes[L.ndim - 1], nrows = n / row, units = row * itemsize / unit;
    int64_t st = c->t->strides[c->dim];
    L.ndim--;                                      /* the rows' positions */
    CUfunction f;
    int rc = ec_fn(c->ctx, cache[which], "index", c->w->dtype, names[which], &f);
    if (rc) return rc;
    void *args[] = {(void *)&c->w->data, (void *)&c->t->data, (void *)&c->ix->data, &nrows,
                    &units, (void *)&c->limit, &st, (void *)&c->wrap, (void *)&c->dim,
                    (void *)&c->err, &L};
    return ec_launch(c->ctx, f, ec_blocks(c->ctx, nrows * units, 1), 1, 1, EC_THREADS, 0, args);
}

/* the fixed-order scatters: one thread per line outside dim, walking dim in order */
static int walk(const index_call *c, int op) {
    static ec_kernel cache[16];
    ember_view vw = without(c->w, c->ix, c->dim), vt = without(c->t, c->ix, c->dim);
    ember_view vi = without(c->ix, c->ix, c->dim);
    const ember_view *v[3] = {&vw, &vt, &vi};
    ec_layout L;
    int64_t lines = ec_layout_make(&L, 3, v);
    int64_t sw = c->w->strides[c->dim], st = c->t->strides[c->dim];
    int64_t si = c->ix->strides[c->dim];
    CUfunction f;
    int rc = ec_fn(c->ctx, cache, "index", c->w->dtype, "index_walk", &f);
    if (rc) return rc;
    void *args[] = {(void *)&c->w->data, (void *)&c->t->data, (void *)&c->ix->data, &lines,
                    (void *)&c->length, &op, (void *)&c->limit, &sw, &st, &si,
                    (void *)&c->wrap, (void *)&c->dim, (void *)&c->err, &L};
    return ec_launch(c->ctx, f, ec_blocks(c->ctx, lines, 1), 1, 1, EC_THREADS, 0, args);
}

/* whether the index is the same at every position outside dim (a 1-d index viewed along
 * dim), so that one winner per index value decides a plain scatter */
static int constant_outside(const index_call *c) {
    for (int d = 0; d < c->ix->ndim; d++)
        if (d != c->dim && c->ix->sizes[d] != 1 && c->ix->strides[d] != 0) return 0;
    return 1;
}

/* plain SCATTER through winners: index_claim keeps, per index value, the last coordinate
 * along dim naming it; index_elems then writes those positions only */
static int scatter_winners(const index_call *c) {
    static ec_kernel cache[16];
    int64_t bytes = c->limit * (int64_t)sizeof(int64_t), si = c->ix->strides[c->dim];
    void *p = ec_alloc(c->ctx, bytes);
    if (!p) return EMBER_ERR_MEMORY;
    CUdeviceptr winner = (CUdeviceptr)(uintptr_t)p;
    CUfunction f;
    int rc = ec_fn(c->ctx, cache, "index", c->w->dtype, "index_claim", &f);
    if (!rc) {
        CUresult r = cu.MemsetD8Async(winner, 0xff, (size_t)bytes, ec_stream(c->ctx->device));
        rc = r == CUDA_SUCCESS ? EMBER_OK : ec_cu_fail(c->ctx, r, "cuMemsetD8Async");
    }
    if (!rc) {
        void *args[] = {(void *)&c->ix->data, (void *)&c->length, &si, (void *)&c->limit,
                        (void *)&c->wrap, (void *)&c->dim, (void *)&c->err, &winner};
        rc = ec_launch(c->ctx, f, ec_blocks(c->ctx, c->length, 1), 1, 1, EC_THREADS, 0, args);
    }
    if (!rc) rc = launch_elems(c, EMBER_INDEX_SCATTER, winner);
    ec_free(c->ctx->device, p);                    /* reused in stream order: no wait */
    return rc;
}

static int scatter(const index_call *c, int op) {
    if (c->length == 1) return launch_elems(c, op, 0);     /* no duplicates possible */
    if (op == EMBER_INDEX_SCATTER) {
        int64_t work = ec_numel(c->ix);
        if (c->limit > 0 && constant_outside(c) && c->limit <= 4 * work + ((int64_t)1 << 20))
            return scatter_winners(c);
        return walk(c, op);
    }
    if (c->ctx->deterministic && ec_is_floating(c->w->dtype)) return walk(c, op);
    return launch_elems(c, op, 0);
}

static int check_operands(ember_ctx *ctx, const char *name, int n, const ember_view *const *v) {
    for (int k = 0; k < n; k++) {
        int rc = ec_check_view(ctx, name, v[k]);
        if (rc) return rc;
        if (ec_is_scalar(v[k]))
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: a host scalar operand", name);
    }
    return EMBER_OK;
}

int ec_index(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
             const ember_view *index, int32_t dim) {
    int wrap = (op & EMBER_INDEX_WRAP) != 0;
    op &= ~EMBER_INDEX_WRAP;
    if (op < 0 || op >= EMBER_INDEX_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "index: unknown op code");
    const char *name = index_names[op];
    int nd = index->ndim;
    if (nd < 1 || nd > EMBER_MAX_DIM || out->ndim != nd || a->ndim != nd || dim < 0 ||
        dim >= nd)
        return ec_fail(ctx, EMBER_ERR_VALUE, "%s: bad number of dimensions or dim", name);
    const ember_view *v[3] = {out, a, index};
    int rc = check_operands(ctx, name, 3, v);
    if (rc) return rc;
    if (index->dtype != EMBER_INT64)
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: index must be int64", name);
    if (a->dtype != out->dtype)
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: out and a need one known dtype", name);
    int gathering = op == EMBER_INDEX_GATHER;
    index_call c = {ctx, op, wrap, dim, gathering ? out : a, gathering ? a : out, index,
                    index->sizes[dim], 0, 0};
    c.limit = c.t->sizes[dim];
    for (int d = 0; d < nd; d++)
        if (c.w->sizes[d] < index->sizes[d] || (d != dim && c.t->sizes[d] < index->sizes[d]) ||
            (gathering && out->sizes[d] != index->sizes[d]))
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: operand shapes do not match", name);
    if (ec_numel(index) == 0) return EMBER_OK;
    if ((rc = ec_enter(ctx))) return rc;
    if (!(c.err = ec_error_slot(ctx)))
        return ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: could not map the error slot", name);
    rc = gathering ? gather(&c) : scatter(&c, op);
    return rc ? rc : ec_sync_errors(ctx, name);
}

/* -- search ------------------------------------------------------------------------------- */

int ec_search(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
              const ember_view *values) {
    if (op < 0 || op >= EMBER_SEARCH_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "search: unknown op code");
    const char *name = search_names[op];
    int nd = values->ndim, last = nd - 1;
    if (nd < 1 || nd > EMBER_MAX_DIM || sorted->ndim != nd || out->ndim != nd)
        return ec_fail(ctx, EMBER_ERR_VALUE, "%s: bad number of dimensions", name);
    const ember_view *v[3] = {out, sorted, values};
    int rc = check_operands(ctx, name, 3, v);
    if (rc) return rc;
    if (sorted->dtype != values->dtype)
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: sorted and values need one known dtype", name);
    if (out->dtype != EMBER_INT64 && out->dtype != EMBER_INT32)
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: out must be int64 or int32", name);
    if (op == EMBER_SEARCH_MULTINOMIAL && !ec_is_floating(values->dtype))
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: needs floating weights", name);
    if (values->dtype == EMBER_BOOL) return ec_fail_dtype(ctx, name, EMBER_BOOL);
    int64_t rows = 1;
    for (int d = 0; d < nd; d++) {
        if (out->sizes[d] != values->sizes[d] || (d < last && sorted->sizes[d] != values->sizes[d]))
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: operand shapes do not match", name);
        if (d < last) rows *= values->sizes[d];
    }
    int64_t m = sorted->sizes[last], n = values->sizes[last], ss = sorted->strides[last];
    if (rows == 0 || (n == 0 && op != EMBER_SEARCH_MULTINOMIAL)) return EMBER_OK;
    if ((rc = ec_enter(ctx))) return rc;
    CUdeviceptr err = ec_error_slot(ctx);
    if (!err) return ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: could not map the error slot", name);
    int out32 = out->dtype == EMBER_INT32;
    ec_layout L;
    CUfunction f;
    if (op == EMBER_SEARCH_MULTINOMIAL) {
        static ec_kernel cache[16];
        ember_view lo = without(out, out, last), ls = without(sorted, out, last);
        ember_view lv = without(values, out, last);
        const ember_view *lv3[3] = {&lo, &ls, &lv};
        ec_layout_make(&L, 3, lv3);
        int64_t sv = values->strides[last], so = out->strides[last];
        if ((rc = ec_fn(ctx, cache, "search", values->dtype, "multinomial_rows", &f))) return rc;
        void *args[] = {(void *)&out->data, (void *)&sorted->data, (void *)&values->data, &rows,
                        &m, &n, &ss, &sv, &so, &out32, &err, &L};
        rc = ec_launch(ctx, f, ec_blocks(ctx, rows * EC_THREADS, 1), 1, 1, EC_THREADS, 0, args);
    } else {
        static ec_kernel cache[16];
        ember_view vs = at_positions(sorted, values, last, 0);
        const ember_view *vv[3] = {out, &vs, values};
        int64_t count = ec_layout_make(&L, 3, vv);
        int right = op == EMBER_SEARCH_RIGHT;
        if ((rc = ec_fn(ctx, cache, "search", values->dtype, "search_sorted", &f))) return rc;
        void *args[] = {(void *)&out->data, (void *)&sorted->data, (void *)&values->data, &count,
                        &m, &ss, &right, &out32, &L};
        rc = ec_launch(ctx, f, ec_blocks(ctx, count, 1), 1, 1, EC_THREADS, 0, args);
    }
    return rc ? rc : ec_sync_errors(ctx, name);
}
