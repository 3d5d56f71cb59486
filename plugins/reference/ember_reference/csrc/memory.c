/* The memory family, the six entries every device must have: alloc, free, to_host,
 * from_host, copy (strided, any dtype to any dtype) and fill.
 *
 * to_host and from_host are the only entries that see device and host memory side by side:
 * they copy `nbytes` contiguous bytes between the caller's host buffer and the arena.
 * from_host has read all of host_src when it returns (the core may free it then).
 */
#include <string.h>

#include "reference.h"

void *ref_alloc(ember_ctx *ctx, int64_t nbytes) {
    if (ctx->device != 0) {              /* one device: "reference:1" must not alias it */
        ref_fail(ctx, EMBER_ERR_VALUE, "alloc: invalid device index %d (the reference "
                 "device has one device, index 0)", (int)ctx->device);
        return NULL;
    }
    return ref_arena_alloc(ctx, nbytes);
}

void ref_free(int32_t device, void *ptr) {
    (void)device;                             /* one device: index 0 */
    ref_arena_free(ptr);
}

int ref_to_host(ember_ctx *ctx, void *host_dst, const void *device_src, int64_t nbytes) {
    REF_TRY(ref_take_deferred_error(ctx));
    if (nbytes <= 0) return EMBER_OK;
    char *src;
    REF_TRY(ref_arena_translate(ctx, device_src, 0, nbytes, &src, "to_host"));
    memcpy(host_dst, src, (size_t)nbytes);
    return EMBER_OK;
}

int ref_from_host(ember_ctx *ctx, void *device_dst, const void *host_src, int64_t nbytes) {
    if (nbytes <= 0) return EMBER_OK;
    char *dst;
    REF_TRY(ref_arena_translate(ctx, device_dst, 0, nbytes, &dst, "from_host"));
    memcpy(dst, host_src, (size_t)nbytes);
    return EMBER_OK;
}

/* out = a elementwise, casting: integer to integer stays exact (int64, wrapping on store),
 * anything involving a float goes through double (floats truncate toward zero into
 * integers; bool is "nonzero", NaN included) */
int ref_copy(ember_ctx *ctx, const ember_view *out_dev, const ember_view *a_dev) {
    ember_view out, a;
    REF_TRY(ref_map_view(ctx, &out, out_dev, "copy"));
    REF_TRY(ref_map_view(ctx, &a, a_dev, "copy"));
    if (a.ndim != out.ndim)
        return ref_fail(ctx, EMBER_ERR_VALUE, "copy: out has %d dims, a has %d", (int)out.ndim,
                        (int)a.ndim);
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    int64_t n = ref_numel(out.ndim, out.sizes), item = ref_itemsize(out.dtype);
    int exact = !ref_is_float(out.dtype) && !ref_is_float(a.dtype);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) {
        if (out.dtype == a.dtype) memmove(it.ptr[0], it.ptr[1], (size_t)item);
        else if (exact) ref_store_i(it.ptr[0], out.dtype, ref_load_i(it.ptr[1], a.dtype));
        else ref_store_d(it.ptr[0], out.dtype, ref_load_d(it.ptr[1], a.dtype));
    }
    return EMBER_OK;
}

/* out[...] = *value: `value` is one element of out's dtype in host memory */
int ref_fill(ember_ctx *ctx, const ember_view *out_dev, const void *value) {
    ember_view out;
    REF_TRY(ref_map_view(ctx, &out, out_dev, "fill"));
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    int64_t n = ref_numel(out.ndim, out.sizes), item = ref_itemsize(out.dtype);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) memcpy(it.ptr[0], value, (size_t)item);
    return EMBER_OK;
}
