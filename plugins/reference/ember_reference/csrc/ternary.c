/* lerp, addcmul and addcdiv (optional entry `ternary`, ABI 6.5; NULL makes the core run
 * their composites): abi.h's EMBER_TERNARY_* formulas, one element at a time, with C99's
 * fma for the fused multiply-add.  float16, bfloat16 and float32 compute in float (fmaf),
 * float64 in double; the store rounds once.  Operands are broadcast views of out's shape
 * and dtype; c NULL: lerp's weight is the number p.
 */
#include <math.h>

#include "reference.h"

/* one element: w is lerp's weight (c's element or p), c addcmul/addcdiv's tensor2 */
#define TERNARY(T, FMA, ABS)                                                               \
    static T ternary_##T(int32_t op, T a, T b, T c, T p) {                                 \
        if (op == EMBER_TERNARY_ADDCMUL)                                                   \
            return FMA(p * b, c, a);                                                       \
        if (op == EMBER_TERNARY_ADDCDIV)                                                   \
            return a + (p * b) / c;                                                        \
        const int small = ABS(c) < (T)0.5;                     /* LERP: w = c */           \
        return FMA(small ? c : c - (T)1, b - a, small ? a : b);                            \
    }

TERNARY(float, fmaf, fabsf)
TERNARY(double, fma, fabs)

int ref_ternary(ember_ctx *ctx, int32_t op, const ember_view *out_dev, const ember_view *a_dev,
                const ember_view *b_dev, const ember_view *c_dev, double p) {
    if (op < 0 || op >= EMBER_TERNARY_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "ternary: unknown op code %d", op);
    if (!c_dev && op != EMBER_TERNARY_LERP)
        return ref_fail(ctx, EMBER_ERR_VALUE, "ternary: addcmul and addcdiv need c");
    ember_view out, a, b, cs;
    const ember_view *c = NULL;
    REF_TRY(ref_map_view(ctx, &out, out_dev, "ternary out"));
    REF_TRY(ref_map_view(ctx, &a, a_dev, "ternary a"));
    REF_TRY(ref_map_view(ctx, &b, b_dev, "ternary b"));
    REF_TRY(ref_map_optional(ctx, &cs, &c, c_dev, "ternary c"));
    REF_TRY(ref_check_same_dtype(ctx, "ternary", &out, &a));
    REF_TRY(ref_check_same_dtype(ctx, "ternary", &out, &b));
    if (c)
        REF_TRY(ref_check_same_dtype(ctx, "ternary", &out, c));
    if (!ref_is_float(out.dtype))
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "ternary: %s is not implemented",
                        ref_dtype_name(out.dtype));
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    ref_iter_add(&it, b.data, b.strides, b.dtype);
    if (c)
        ref_iter_add(&it, c->data, c->strides, c->dtype);
    const int wide = out.dtype == EMBER_FLOAT64;
    int64_t n = ref_numel(out.ndim, out.sizes);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) {
        double x = ref_load_d(it.ptr[1], a.dtype), y = ref_load_d(it.ptr[2], b.dtype);
        double w = c ? ref_load_d(it.ptr[3], c->dtype) : p;
        double r = wide ? ternary_double(op, x, y, w, p)
                        : ternary_float(op, (float)x, (float)y, (float)w, (float)p);
        ref_store_d(it.ptr[0], out.dtype, r);
    }
    return EMBER_OK;
}
