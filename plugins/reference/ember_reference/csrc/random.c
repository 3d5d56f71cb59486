/* Random fills, counter-based as the ABI asks: element i of out (in row-major order of
 * out's shape, whatever its strides) is a pure function of (seed, offset + i), so the same
 * seed gives the same numbers however the work is split, and two draws of n and m elements
 * equal one draw of n + m.  The mixing function is SplitMix64 (Steele, Lea and Flood 2014):
 * small and good enough for a reference; it need not match the CPU plugin's Philox stream.
 */
#include <math.h>

#include "reference.h"

static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

int ref_random(ember_ctx *ctx, int32_t op, const ember_view *out_dev, uint64_t seed,
               uint64_t offset, double p0, double p1) {
    if (op != EMBER_RANDOM_UNIFORM && op != EMBER_RANDOM_NORMAL)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "random: unknown op code %d", (int)op);
    ember_view out;
    REF_TRY(ref_map_view(ctx, &out, out_dev, "random"));
    if (!ref_is_float(out.dtype))
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "random is not implemented for %s",
                        ref_dtype_name(out.dtype));
    /* uniform draws keep only the target's mantissa bits, so U[0, 1) never rounds up to 1 */
    int bits = out.dtype == EMBER_FLOAT64 ? 53 : out.dtype == EMBER_FLOAT32 ? 24
             : out.dtype == EMBER_FLOAT16 ? 11 : 8;
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    int64_t n = ref_numel(out.ndim, out.sizes);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) {
        uint64_t r = splitmix64(seed ^ splitmix64(offset + (uint64_t)i));
        double v;
        if (op == EMBER_RANDOM_UNIFORM) {
            v = p0 + (p1 - p0) * ldexp((double)(r >> (64 - bits)), -bits);
        } else {                              /* Box-Muller on two 53-bit uniforms */
            double u1 = ldexp((double)((r >> 11) + 1), -53);           /* (0, 1] */
            double u2 = ldexp((double)(splitmix64(r) >> 11), -53);      /* [0, 1) */
            v = p0 + p1 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        }
        ref_store_d(it.ptr[0], out.dtype, v);
    }
    return EMBER_OK;
}
