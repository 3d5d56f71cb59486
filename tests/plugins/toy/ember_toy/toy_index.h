/* The toy device's index family (abi.h: `index`, `search`): serial loops over the index's
 * positions in row-major order, so duplicates combine in that order, as the ABI asks.
 * Included by toy_kernels.h after its helpers (toy_iter, load_d/store_d, toy_fail). */
#ifndef EMBER_TOY_INDEX_H
#define EMBER_TOY_INDEX_H

static double toy_combine_d(int32_t op, double x, double y) {
    switch (op) {
    case EMBER_INDEX_SCATTER_ADD: return x + y;
    case EMBER_INDEX_SCATTER_MUL: return x * y;
    case EMBER_INDEX_SCATTER_AMAX: return x != x || x > y ? x : (y != y || y > x ? y : x);
    default: return x != x || x < y ? x : (y != y || y < x ? y : x);   /* AMIN */
    }
}

static int64_t toy_combine_i(int32_t op, int64_t x, int64_t y) {
    switch (op) {
    case EMBER_INDEX_SCATTER_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case EMBER_INDEX_SCATTER_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case EMBER_INDEX_SCATTER_AMAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

static int toy_index(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                     const ember_view *index, int32_t dim) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_SAME_DTYPE(ctx, out, a);
    int wrap = (op & EMBER_INDEX_WRAP) != 0, nd = index->ndim;
    op &= ~EMBER_INDEX_WRAP;
    if (op < 0 || op >= EMBER_INDEX_COUNT || index->dtype != EMBER_INT64 || nd < 1 ||
        out->ndim != nd || a->ndim != nd || dim < 0 || dim >= nd)
        return toy_fail(ctx, EMBER_ERR_VALUE, "toy: bad index call (op %d)", (int)op);
    int gather = op == EMBER_INDEX_GATHER;
    const ember_view *w = gather ? out : a, *t = gather ? a : out;  /* walked, addressed */
    int64_t limit = t->sizes[dim], item = toy_itemsize(out->dtype);
    int fl = toy_is_float(out->dtype);
    toy_iter it;                                 /* over index's positions */
    it_init(&it, nd, index->sizes);
    it_add(&it, w->data, w->strides, w->dtype);
    it_add(&it, t->data, t->strides, t->dtype);
    it_add(&it, index->data, index->strides, EMBER_INT64);
    int64_t n = toy_numel(nd, index->sizes);
    for (int64_t i = 0; i < n; i++, it_next(&it)) {
        int64_t raw = *(const int64_t *)it.ptr[2], j = raw < 0 && wrap ? raw + limit : raw;
        if (j < 0 || j >= limit)
            return toy_fail(ctx, EMBER_ERR_INDEX,
                            "index %lld is out of bounds for dimension %d with size %lld",
                            (long long)raw, (int)dim, (long long)limit);
        /* it.ptr[1] sits at index's position in t; move along dim to j */
        char *pt = it.ptr[1] + (j - it.idx[dim]) * t->strides[dim] * item, *pw = it.ptr[0];
        if (gather) memcpy(pw, pt, (size_t)item);
        else if (op == EMBER_INDEX_SCATTER) memcpy(pt, pw, (size_t)item);
        else if (fl) store_d(pt, out->dtype, toy_combine_d(op, load_d(pt, out->dtype),
                                                           load_d(pw, a->dtype)));
        else store_i(pt, out->dtype, toy_combine_i(op, load_i(pt, out->dtype),
                                                   load_i(pw, a->dtype)));
    }
    return EMBER_OK;
}

/* x < y with NaN the largest */
static int toy_lt(double x, double y) { return x < y || (y != y && x == x); }

static int toy_search(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
                      const ember_view *values) {
    TOY_CHECK_VIEW(ctx, values);
    TOY_SAME_DTYPE(ctx, sorted, values);
    int nd = values->ndim, last = nd - 1;
    if (op < 0 || op >= EMBER_SEARCH_COUNT || nd < 1 || sorted->ndim != nd || out->ndim != nd ||
        (out->dtype != EMBER_INT64 && out->dtype != EMBER_INT32))
        return toy_fail(ctx, EMBER_ERR_VALUE, "toy: bad search call (op %d)", (int)op);
    int64_t m = sorted->sizes[last], nv = values->sizes[last];
    int64_t ss = sorted->strides[last] * toy_itemsize(sorted->dtype);
    int64_t sv = values->strides[last] * toy_itemsize(values->dtype);
    int64_t so = out->strides[last] * toy_itemsize(out->dtype);
    toy_iter it;                                 /* over the leading dims */
    it_init(&it, last, values->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    it_add(&it, sorted->data, sorted->strides, sorted->dtype);
    it_add(&it, values->data, values->strides, values->dtype);
    int64_t rows = toy_numel(last, values->sizes);
    for (int64_t r = 0; r < rows; r++, it_next(&it)) {
        double total = 0;
        if (op == EMBER_SEARCH_MULTINOMIAL) {    /* check the row, then linear scans */
            for (int64_t i = 0; i < m; i++) {
                double w = load_d(it.ptr[1] + i * ss, sorted->dtype);
                if (!(w >= 0) || isinf(w))
                    return toy_fail(ctx, EMBER_ERR_RUNTIME, "probability tensor contains "
                                    "either `inf`, `nan` or element < 0");
                total += w;
            }
            if (!(total > 0))
                return toy_fail(ctx, EMBER_ERR_RUNTIME,
                                "invalid multinomial distribution (sum of probabilities <= 0)");
        }
        for (int64_t j = 0; j < nv; j++) {
            double v = load_d(it.ptr[2] + j * sv, values->dtype);
            int64_t lo = 0;
            if (op == EMBER_SEARCH_MULTINOMIAL) {
                double acc = 0, u = v * total;
                for (lo = 0; lo < m - 1; lo++) {
                    acc += load_d(it.ptr[1] + lo * ss, sorted->dtype);
                    if (acc > u) break;
                }
            } else {
                for (lo = 0; lo < m; lo++) {     /* a linear search: clear, not fast */
                    double x = load_d(it.ptr[1] + lo * ss, sorted->dtype);
                    if (op == EMBER_SEARCH_RIGHT ? toy_lt(v, x) : !toy_lt(x, v)) break;
                }
            }
            store_i(it.ptr[0] + j * so, out->dtype, lo);
        }
    }
    return EMBER_OK;
}

#endif
