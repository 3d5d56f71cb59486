/* The memory entries: strided copies with casts, fill, and the host transfers. */
#include <stdio.h>
#include <string.h>

#include "ec.h"

int ec_copy(ember_ctx *ctx, const ember_view *out, const ember_view *a) {
    int rc;
    if ((rc = ec_check_view(ctx, "copy", out)) || (rc = ec_check_view(ctx, "copy", a))) return rc;
    if (ec_is_scalar(a)) return ec_fail(ctx, EMBER_ERR_VALUE, "copy: a host scalar source");
    const ember_view *v[2] = {out, a};
    ec_layout L;
    int64_t n = ec_layout_make(&L, 2, v);
    if (n == 0) return EMBER_OK;
    int flat = ec_layout_flat(&L, 2, 0);
    if ((rc = ec_enter(ctx))) return rc;
    if (flat && out->dtype == a->dtype) {           /* the copy engine moves the bytes */
        int slot = ec_profiling ? ec_profile_begin(ctx, EC_PROF_MEMCPY) : -1;
        CUresult r = cu.MemcpyDtoDAsync((CUdeviceptr)(uintptr_t)out->data,
                                        (CUdeviceptr)(uintptr_t)a->data,
                                        (size_t)n * ec_itemsize(out->dtype),
                                        ec_stream(ctx->device));
        if (slot >= 0) ec_profile_end(ctx, slot);
        return r == CUDA_SUCCESS ? EMBER_OK : ec_cu_fail(ctx, r, "cuMemcpyDtoDAsync");
    }
    static ec_kernel cache[16][16];                 /* [source dtype][destination dtype] */
    char name[16];
    snprintf(name, sizeof name, "copy_to_%d", (int)out->dtype);
    CUfunction f;
    if ((rc = ec_fn(ctx, cache[out->dtype & 15], "copy", a->dtype, name, &f))) return rc;
    void *args[] = {(void *)&out->data, (void *)&a->data, &n, &flat, &L};
    return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}

int ec_fill(ember_ctx *ctx, const ember_view *out, const void *value) {
    int rc;
    if ((rc = ec_check_view(ctx, "fill_", out))) return rc;
    const ember_view *v[1] = {out};
    ec_layout L;
    int64_t n = ec_layout_make(&L, 1, v);
    if (n == 0) return EMBER_OK;
    int flat = ec_layout_flat(&L, 1, 0), size = ec_itemsize(out->dtype);
    if ((rc = ec_enter(ctx))) return rc;
    static const char zeros[8];
    if (flat && memcmp(value, zeros, (size_t)size) == 0) {     /* all-zero bytes: memset */
        int slot = ec_profiling ? ec_profile_begin(ctx, EC_PROF_MEMSET) : -1;
        CUresult r = cu.MemsetD8Async((CUdeviceptr)(uintptr_t)out->data, 0, (size_t)n * size,
                                      ec_stream(ctx->device));
        if (slot >= 0) ec_profile_end(ctx, slot);
        return r == CUDA_SUCCESS ? EMBER_OK : ec_cu_fail(ctx, r, "cuMemsetD8Async");
    }
    ember_view s = *out;                 /* the value, read as a host scalar of out's dtype */
    s.data = (char *)value;
    ec_scalar sv = ec_read_scalar(&s);
    static ec_kernel cache[16];
    CUfunction f;
    if ((rc = ec_fn(ctx, cache, "ew", out->dtype, "fill_kernel", &f))) return rc;
    void *args[] = {(void *)&out->data, &sv, &n, &flat, &L};
    return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}

/* device -> host: ordered after the current stream's work, complete on return */
int ec_to_host(ember_ctx *ctx, void *host_dst, const void *device_src, int64_t nbytes) {
    int rc;
    if (nbytes <= 0) return EMBER_OK;
    if ((rc = ec_enter(ctx))) return rc;
    CUstream s = ec_stream(ctx->device);
    CUresult r = cu.MemcpyDtoHAsync(host_dst, (CUdeviceptr)(uintptr_t)device_src, (size_t)nbytes, s);
    if (r == CUDA_SUCCESS) r = cu.StreamSynchronize(s);
    if (r != CUDA_SUCCESS) return ec_cu_fail(ctx, r, "copy to host");
    return ec_take_error(ctx, 1);         /* an error a kernel found while we waited */
}

/* host -> device: the host buffer may be reused as soon as this returns (it may be pinned,
 * where the driver would copy asynchronously), so wait for the copy */
int ec_from_host(ember_ctx *ctx, void *device_dst, const void *host_src, int64_t nbytes) {
    int rc;
    if (nbytes <= 0) return EMBER_OK;
    if ((rc = ec_enter(ctx))) return rc;
    CUstream s = ec_stream(ctx->device);
    CUresult r = cu.MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device_dst, host_src, (size_t)nbytes, s);
    if (r == CUDA_SUCCESS) r = cu.StreamSynchronize(s);
    return r == CUDA_SUCCESS ? EMBER_OK : ec_cu_fail(ctx, r, "copy from host");
}
