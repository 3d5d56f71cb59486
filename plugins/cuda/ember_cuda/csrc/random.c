/* The random fills (kernels/random.cu): the CPU plugin's counter-based Philox4x32-10, so a
 * seed gives the same uniform numbers on both devices.  Checks and messages are the CPU
 * plugin's (_random.pyx). */
#include "ec.h"

int ec_random(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed, uint64_t offset,
              double p0, double p1) {
    if (op < 0 || op >= EMBER_RANDOM_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "random: unknown op code");
    const char *name = op == EMBER_RANDOM_UNIFORM ? "uniform_" : "normal_";
    int rc = ec_check_view(ctx, name, out);
    if (rc) return rc;
    if (!ec_is_floating(out->dtype))
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s: not implemented for '%s'", name,
                       ec_dtype_name(out->dtype));
    if (op == EMBER_RANDOM_UNIFORM && !(p0 <= p1))
        return ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: expects from <= to", name);
    if (op == EMBER_RANDOM_NORMAL && !(p1 >= 0))
        return ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: expects std >= 0.0", name);
    /* no reordering of dims (ec_layout_make keeps their order): element i stays out's i-th
     * in row-major order, and draws counter offset + i */
    const ember_view *v[1] = {out};
    ec_layout L;
    int64_t n = ec_layout_make(&L, 1, v);
    if (n == 0) return EMBER_OK;
    int flat = ec_layout_flat(&L, 1, 0);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    static ec_kernel cache[16];
    CUfunction f;
    if ((rc = ec_fn(ctx, cache, "random", out->dtype, "random_fill", &f))) return rc;
    void *args[] = {(void *)&out->data, &n, &op, &k0, &k1, &offset, &p0, &p1, &flat, &L};
    return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}
