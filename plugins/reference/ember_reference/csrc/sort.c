/* `sort` (ABI 6.1): every row of `a` along its last dim, into `values` and `indices`.
 *
 * A stable merge sort of the row's positions: equal elements keep their row order whichever
 * the direction, and NaN orders above every number, so it comes last ascending and first
 * descending (PyTorch's order).  Elements are compared as double (floating dtypes) or int64
 * (integers, bool), which is exact for every dtype of the ABI.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

typedef struct {
    const char *row;              /* the row's first element (arena address) */
    int64_t stride;               /* bytes between its elements */
    int32_t dtype;
    int descending;
} sort_row;

/* whether element i goes strictly before element j */
static int before(const sort_row *r, int64_t i, int64_t j) {
    const char *x = r->row + i * r->stride, *y = r->row + j * r->stride;
    int gt, lt;
    if (ref_is_float(r->dtype)) {
        double a = ref_load_d(x, r->dtype), b = ref_load_d(y, r->dtype);
        int na = isnan(a), nb = isnan(b);          /* NaN is the largest; NaNs are equal */
        gt = na ? !nb : (!nb && a > b);
        lt = nb ? !na : (!na && a < b);
    } else {
        int64_t a = ref_load_i(x, r->dtype), b = ref_load_i(y, r->dtype);
        gt = a > b;
        lt = a < b;
    }
    return r->descending ? gt : lt;
}

/* sorts pos[0..n) with tmp as scratch; stable: on a tie the left run's element goes first */
static void merge_sort(const sort_row *r, int64_t *pos, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t half = n / 2;
    merge_sort(r, pos, tmp, half);
    merge_sort(r, pos + half, tmp, n - half);
    int64_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = before(r, pos[j], pos[i]) ? pos[j++] : pos[i++];
    while (i < half) tmp[k++] = pos[i++];
    while (j < n) tmp[k++] = pos[j++];
    memcpy(pos, tmp, (size_t)n * sizeof *pos);
}

int ref_sort(ember_ctx *ctx, const ember_view *values_dev, const ember_view *indices_dev,
             const ember_view *a_dev, int32_t descending) {
    ember_view values, indices, a;
    REF_TRY(ref_map_view(ctx, &values, values_dev, "sort"));
    REF_TRY(ref_map_view(ctx, &indices, indices_dev, "sort"));
    REF_TRY(ref_map_view(ctx, &a, a_dev, "sort"));
    REF_TRY(ref_check_same_dtype(ctx, "sort", &values, &a));
    int nd = a.ndim, last = nd - 1;
    if (nd < 1 || values.ndim != nd || indices.ndim != nd || indices.dtype != EMBER_INT64)
        return ref_fail(ctx, EMBER_ERR_VALUE, "sort: bad operands");
    int64_t m = a.sizes[last], item = ref_itemsize(a.dtype);
    int64_t rows = ref_numel(last, a.sizes);
    if (m == 0 || rows == 0) return EMBER_OK;
    int64_t *pos = malloc((size_t)(2 * m) * sizeof *pos);
    if (!pos) return ref_fail(ctx, EMBER_ERR_MEMORY, "sort: out of memory for %lld positions",
                              (long long)m);
    ref_iter it;                                  /* over the leading dims */
    ref_iter_init(&it, last, a.sizes);
    ref_iter_add(&it, values.data, values.strides, values.dtype);
    ref_iter_add(&it, indices.data, indices.strides, indices.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    for (int64_t r = 0; r < rows; r++, ref_iter_next(&it)) {
        sort_row row = {it.ptr[2], a.strides[last] * item, a.dtype, descending != 0};
        for (int64_t i = 0; i < m; i++) pos[i] = i;
        merge_sort(&row, pos, pos + m, m);
        for (int64_t i = 0; i < m; i++) {
            memcpy(it.ptr[0] + i * values.strides[last] * item, row.row + pos[i] * row.stride,
                   (size_t)item);
            ref_store_i(it.ptr[1] + i * indices.strides[last] * 8, EMBER_INT64, pos[i]);
        }
    }
    free(pos);
    return EMBER_OK;
}
