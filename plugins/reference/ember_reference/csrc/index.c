/* The index family: gather/scatter along one dim (`index`) and binary search/multinomial
 * sampling along the last dim (`search`).
 *
 * `index` walks the positions p of the index view in row-major order, one at a time, so
 * duplicate indices combine in exactly the order the ABI asks for (SCATTER keeps the last,
 * SCATTER_ADD gives the same bits every run).  An index out of range stops the kernel with
 * EMBER_ERR_INDEX and PyTorch's message; elements before it may already be written.
 */
#include <math.h>
#include <string.h>

#include "reference.h"

static const char *const index_names[EMBER_INDEX_COUNT] = {
    "gather", "scatter", "scatter_add", "scatter_mul", "scatter_amax", "scatter_amin"};

static double combine_d(int32_t op, double x, double y) {
    switch (op) {
    case EMBER_INDEX_SCATTER_ADD: return x + y;
    case EMBER_INDEX_SCATTER_MUL: return x * y;
    case EMBER_INDEX_SCATTER_AMAX: return ref_maximum(x, y);
    default: return ref_minimum(x, y);                            /* AMIN */
    }
}

static int64_t combine_i(int32_t op, int64_t x, int64_t y) {     /* bool: add is `or` */
    switch (op) {
    case EMBER_INDEX_SCATTER_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case EMBER_INDEX_SCATTER_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case EMBER_INDEX_SCATTER_AMAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

int ref_index(ember_ctx *ctx, int32_t op, const ember_view *out_dev, const ember_view *a_dev,
              const ember_view *index_dev, int32_t dim) {
    int wrap = (op & EMBER_INDEX_WRAP) != 0;
    op &= ~EMBER_INDEX_WRAP;
    if (op < 0 || op >= EMBER_INDEX_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "index: unknown op code %d", (int)op);
    const char *name = index_names[op];
    ember_view out, a, index;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    REF_TRY(ref_map_view(ctx, &index, index_dev, name));
    REF_TRY(ref_check_same_dtype(ctx, name, &out, &a));
    int nd = index.ndim;
    if (index.dtype != EMBER_INT64 || nd < 1 || out.ndim != nd || a.ndim != nd || dim < 0 ||
        dim >= nd)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad operands (index %s with %d dims, dim %d)",
                        name, ref_dtype_name(index.dtype), nd, (int)dim);
    int gather = op == EMBER_INDEX_GATHER;
    /* the walked operand has index's shape; the addressed one is moved along `dim` */
    const ember_view *walked = gather ? &out : &a, *addressed = gather ? &a : &out;
    int64_t limit = addressed->sizes[dim], item = ref_itemsize(out.dtype);
    int fl = ref_is_float(out.dtype);
    ref_iter it;
    ref_iter_init(&it, nd, index.sizes);
    ref_iter_add(&it, walked->data, walked->strides, walked->dtype);
    ref_iter_add(&it, addressed->data, addressed->strides, addressed->dtype);
    ref_iter_add(&it, index.data, index.strides, EMBER_INT64);
    int64_t n = ref_numel(nd, index.sizes);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) {
        int64_t raw = *(const int64_t *)it.ptr[2], j = raw < 0 && wrap ? raw + limit : raw;
        if (j < 0 || j >= limit)
            return ref_data_error(ctx, EMBER_ERR_INDEX,
                            "index %lld is out of bounds for dimension %d with size %lld",
                            (long long)raw, (int)dim, (long long)limit);
        /* it.ptr[1] sits at p in the addressed operand: move along dim to q[dim] = j */
        char *pw = it.ptr[0];
        char *pt = it.ptr[1] + (j - it.idx[dim]) * addressed->strides[dim] * item;
        if (gather) memcpy(pw, pt, (size_t)item);
        else if (op == EMBER_INDEX_SCATTER) memcpy(pt, pw, (size_t)item);
        else if (fl) ref_store_d(pt, out.dtype, combine_d(op, ref_load_d(pt, out.dtype),
                                                          ref_load_d(pw, a.dtype)));
        else ref_store_i(pt, out.dtype, combine_i(op, ref_load_i(pt, out.dtype),
                                                  ref_load_i(pw, a.dtype)));
    }
    return EMBER_OK;
}

/* ---- search --------------------------------------------------------------------------- */

/* x < y in the dtype's own order: floats with NaN the largest, integers exactly */
static int less(const char *x, const char *y, int32_t dt) {
    if (!ref_is_float(dt)) return ref_load_i(x, dt) < ref_load_i(y, dt);
    double a = ref_load_d(x, dt), b = ref_load_d(y, dt);
    return a < b || (b != b && a == a);
}

static const char *const search_names[EMBER_SEARCH_COUNT] = {
    "searchsorted", "searchsorted", "multinomial"};

int ref_search(ember_ctx *ctx, int32_t op, const ember_view *out_dev,
               const ember_view *sorted_dev, const ember_view *values_dev) {
    if (op < 0 || op >= EMBER_SEARCH_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "search: unknown op code %d", (int)op);
    const char *name = search_names[op];
    ember_view out, sorted, values;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &sorted, sorted_dev, name));
    REF_TRY(ref_map_view(ctx, &values, values_dev, name));
    REF_TRY(ref_check_same_dtype(ctx, name, &sorted, &values));
    int nd = values.ndim, last = nd - 1;
    if (nd < 1 || sorted.ndim != nd || out.ndim != nd ||
        (out.dtype != EMBER_INT64 && out.dtype != EMBER_INT32) || values.dtype == EMBER_BOOL)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad operands", name);
    int64_t m = sorted.sizes[last], nv = values.sizes[last];
    int64_t ss = sorted.strides[last] * ref_itemsize(sorted.dtype);
    int64_t sv = values.strides[last] * ref_itemsize(values.dtype);
    int64_t so = out.strides[last] * ref_itemsize(out.dtype);
    ref_iter it;                              /* over the leading dims */
    ref_iter_init(&it, last, values.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, sorted.data, sorted.strides, sorted.dtype);
    ref_iter_add(&it, values.data, values.strides, values.dtype);
    int64_t rows = ref_numel(last, values.sizes);
    for (int64_t r = 0; r < rows; r++, ref_iter_next(&it)) {
        const char *row = it.ptr[1];
        if (op == EMBER_SEARCH_MULTINOMIAL) {
            /* check the whole row (even when nothing is drawn from it), then draw by a
             * linear scan of the running sum; the last nonzero weight catches a u that
             * rounding leaves above the final partial sum */
            double total = 0;
            int64_t last_nonzero = 0;
            for (int64_t i = 0; i < m; i++) {
                double w = ref_load_d(row + i * ss, sorted.dtype);
                if (!(w >= 0) || isinf(w))
                    return ref_data_error(ctx, EMBER_ERR_RUNTIME, "probability tensor contains "
                                    "either `inf`, `nan` or element < 0");
                if (w > 0) last_nonzero = i;
                total += w;
            }
            if (!(total > 0))
                return ref_data_error(ctx, EMBER_ERR_RUNTIME,
                                      "invalid multinomial distribution (sum of probabilities <= 0)");
            for (int64_t j = 0; j < nv; j++) {
                double u = ref_load_d(it.ptr[2] + j * sv, values.dtype) * total, acc = 0;
                int64_t pick = last_nonzero;
                for (int64_t i = 0; i < m; i++) {
                    acc += ref_load_d(row + i * ss, sorted.dtype);
                    if (acc > u) {
                        pick = i;
                        break;
                    }
                }
                ref_store_i(it.ptr[0] + j * so, out.dtype, pick);
            }
            continue;
        }
        for (int64_t j = 0; j < nv; j++) {    /* bisection for the first i that qualifies */
            const char *v = it.ptr[2] + j * sv;
            int64_t lo = 0, hi = m;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                const char *x = row + mid * ss;
                /* LEFT: first x >= v, i.e. !(x < v); RIGHT: first x > v, i.e. v < x */
                int qualifies = op == EMBER_SEARCH_RIGHT ? less(v, x, sorted.dtype)
                                                         : !less(x, v, sorted.dtype);
                if (qualifies) hi = mid;
                else lo = mid + 1;
            }
            ref_store_i(it.ptr[0] + j * so, out.dtype, lo);
        }
    }
    return EMBER_OK;
}
