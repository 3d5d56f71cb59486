/* Reductions over the trailing `nreduce` dims of a (out holds a's leading dims), and scans
 * along a's last dim (the core moves the reduced or scanned dims there first).
 *
 * Floats accumulate in double, in row-major order of the reduced elements, so a result
 * never depends on anything but the input; integers accumulate in int64 with wrapping
 * arithmetic (exact: never through double).  A NaN wins max/min and their arg- forms.
 */
#include <math.h>

#include "reference.h"

static const char *const reduce_names[EMBER_REDUCE_COUNT] = {
    "sum", "mean", "prod", "max", "min", "argmax", "argmin"};

/* does v replace the running extreme `best` (for max, or for min when !is_max)?  NaN wins
 * and then stays */
static int beats(double v, double best, int is_max) {
    if (best != best) return 0;
    return v != v || (is_max ? v > best : v < best);
}

int ref_reduce(ember_ctx *ctx, int32_t op, const ember_view *out_dev, const ember_view *a_dev,
               int32_t nreduce) {
    if (op < 0 || op >= EMBER_REDUCE_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "reduce: unknown op code %d", (int)op);
    const char *name = reduce_names[op];
    ember_view out, a;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    int arg = op == EMBER_REDUCE_ARGMAX || op == EMBER_REDUCE_ARGMIN;
    int extreme = arg || op == EMBER_REDUCE_MAX || op == EMBER_REDUCE_MIN;
    int is_max = op == EMBER_REDUCE_MAX || op == EMBER_REDUCE_ARGMAX;
    if (arg && out.dtype != EMBER_INT64)
        return ref_fail(ctx, EMBER_ERR_TYPE, "%s: out must be int64", name);
    if (!arg) REF_TRY(ref_check_same_dtype(ctx, name, &out, &a));
    int fl = ref_is_float(a.dtype), nkeep = a.ndim - nreduce;
    if (nreduce < 0 || nkeep < 0 || nkeep != out.ndim)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: a has %d dims, nreduce is %d, out has %d dims",
                        name, (int)a.ndim, (int)nreduce, (int)out.ndim);
    if (op == EMBER_REDUCE_MEAN && !fl)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "mean is not implemented for %s",
                        ref_dtype_name(a.dtype));
    int64_t m = ref_numel(nreduce, a.sizes + nkeep), n = ref_numel(nkeep, a.sizes);
    if (extreme && m == 0 && n > 0)
        return ref_fail(ctx, EMBER_ERR_RUNTIME, "%s: empty reduction", name);
    ref_iter outer, inner;
    ref_iter_init(&outer, nkeep, a.sizes);
    ref_iter_add(&outer, out.data, out.strides, out.dtype);
    ref_iter_add(&outer, a.data, a.strides, a.dtype);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&outer)) {
        ref_iter_init(&inner, nreduce, a.sizes + nkeep);
        ref_iter_add(&inner, outer.ptr[1], a.strides + nkeep, a.dtype);
        if (extreme) {                        /* the first extreme and where it is */
            double best = 0;
            int64_t ibest = 0, at = 0;
            for (int64_t j = 0; j < m; j++, ref_iter_next(&inner)) {
                if (fl) {
                    double v = ref_load_d(inner.ptr[0], a.dtype);
                    if (j == 0 || beats(v, best, is_max)) best = v, at = j;
                } else {
                    int64_t v = ref_load_i(inner.ptr[0], a.dtype);
                    if (j == 0 || (is_max ? v > ibest : v < ibest)) ibest = v, at = j;
                }
            }
            if (arg) ref_store_i(outer.ptr[0], EMBER_INT64, at);
            else if (fl) ref_store_d(outer.ptr[0], out.dtype, best);
            else ref_store_i(outer.ptr[0], out.dtype, ibest);
            continue;
        }
        int prod = op == EMBER_REDUCE_PROD;
        double sd = prod ? 1.0 : 0.0;
        uint64_t si = prod ? 1 : 0;           /* wrapping integer accumulator */
        for (int64_t j = 0; j < m; j++, ref_iter_next(&inner)) {
            if (fl) {
                double v = ref_load_d(inner.ptr[0], a.dtype);
                sd = prod ? sd * v : sd + v;
            } else {
                uint64_t v = (uint64_t)ref_load_i(inner.ptr[0], a.dtype);
                si = prod ? si * v : si + v;
            }
        }
        if (op == EMBER_REDUCE_MEAN) sd /= (double)m;     /* m == 0: 0/0 = NaN */
        if (fl) ref_store_d(outer.ptr[0], out.dtype, sd);
        else ref_store_i(outer.ptr[0], out.dtype, (int64_t)si);
    }
    return EMBER_OK;
}

/* ---- scans along the last dim: cumsum, cumprod, cummax/cummin (with indices) ------------ */

static const char *const scan_names[EMBER_SCAN_COUNT] = {"cumsum", "cumprod", "cummax", "cummin"};

int ref_scan(ember_ctx *ctx, int32_t op, const ember_view *out_dev,
             const ember_view *indices_dev, const ember_view *a_dev) {
    if (op < 0 || op >= EMBER_SCAN_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "scan: unknown op code %d", (int)op);
    const char *name = scan_names[op];
    int extreme = op == EMBER_SCAN_CUMMAX || op == EMBER_SCAN_CUMMIN;
    int is_max = op == EMBER_SCAN_CUMMAX;
    ember_view out, a, idx_storage;
    const ember_view *indices;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    REF_TRY(ref_map_optional(ctx, &idx_storage, &indices, indices_dev, name));
    REF_TRY(ref_check_same_dtype(ctx, name, &out, &a));
    if (a.ndim < 1 || out.ndim != a.ndim || (extreme && (!indices || indices->dtype != EMBER_INT64)))
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad operands (ndim %d)", name, (int)a.ndim);
    int fl = ref_is_float(a.dtype), last = a.ndim - 1;
    int64_t len = a.sizes[last], rows = ref_numel(last, a.sizes);
    ref_iter it;                              /* over every dim but the last */
    ref_iter_init(&it, last, a.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    if (extreme) ref_iter_add(&it, indices->data, indices->strides, EMBER_INT64);
    int64_t so = out.strides[last] * ref_itemsize(out.dtype);
    int64_t sa = a.strides[last] * ref_itemsize(a.dtype);
    int64_t si = extreme ? indices->strides[last] * 8 : 0;
    for (int64_t r = 0; r < rows; r++, ref_iter_next(&it)) {
        double accd = op == EMBER_SCAN_CUMPROD ? 1.0 : 0.0;
        uint64_t acci = op == EMBER_SCAN_CUMPROD ? 1 : 0;
        int64_t at = 0;
        for (int64_t j = 0; j < len; j++) {
            char *po = it.ptr[0] + j * so, *pa = it.ptr[1] + j * sa;
            if (fl) {
                double v = ref_load_d(pa, a.dtype);
                if (op == EMBER_SCAN_CUMSUM) accd += v;
                else if (op == EMBER_SCAN_CUMPROD) accd *= v;
                /* a NaN takes over and stays; ties move to the latest index (PyTorch) */
                else if (j == 0 || v != v ||
                         (accd == accd && (is_max ? v >= accd : v <= accd))) accd = v, at = j;
                ref_store_d(po, out.dtype, accd);
            } else {
                int64_t v = ref_load_i(pa, a.dtype);
                if (op == EMBER_SCAN_CUMSUM) acci += (uint64_t)v;
                else if (op == EMBER_SCAN_CUMPROD) acci *= (uint64_t)v;
                else if (j == 0 || (is_max ? v >= (int64_t)acci : v <= (int64_t)acci))
                    acci = (uint64_t)v, at = j;
                ref_store_i(po, out.dtype, (int64_t)acci);
            }
            if (extreme) ref_store_i(it.ptr[2] + j * si, EMBER_INT64, at);
        }
    }
    return EMBER_OK;
}
