/* Batched matmul: out [B, M, N] = a [B, M, K] @ b [B, K, N] over 3-d views of any strides
 * (a batch stride of 0 broadcasts).  Floats accumulate each dot product in double, in
 * order of k; integers in int64 with wrapping arithmetic (PyTorch multiplies integer
 * matrices too).  matmul_precision may allow a faster format: this device always computes
 * at full precision, which every precision setting permits.
 */
#include "reference.h"

int ref_matmul(ember_ctx *ctx, const ember_view *out_dev, const ember_view *a_dev,
               const ember_view *b_dev) {
    ember_view out, a, b;
    REF_TRY(ref_map_view(ctx, &out, out_dev, "matmul"));
    REF_TRY(ref_map_view(ctx, &a, a_dev, "matmul"));
    REF_TRY(ref_map_view(ctx, &b, b_dev, "matmul"));
    REF_TRY(ref_check_same_dtype(ctx, "matmul", &out, &a));
    REF_TRY(ref_check_same_dtype(ctx, "matmul", &out, &b));
    if (out.ndim != 3 || a.ndim != 3 || b.ndim != 3)
        return ref_fail(ctx, EMBER_ERR_VALUE, "matmul: expects 3-d views");
    if (out.dtype == EMBER_BOOL)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "matmul is not implemented for bool");
    int64_t B = out.sizes[0], M = out.sizes[1], N = out.sizes[2], K = a.sizes[2];
    if (a.sizes[1] != M || b.sizes[1] != K || b.sizes[2] != N)
        return ref_fail(ctx, EMBER_ERR_VALUE, "matmul: shapes do not match");
    int fl = ref_is_float(out.dtype);
    int64_t item = ref_itemsize(out.dtype);
    const int64_t *so = out.strides, *sa = a.strides, *sb = b.strides;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                const char *pa = a.data + (bi * sa[0] + i * sa[1]) * item;
                const char *pb = b.data + (bi * sb[0] + j * sb[2]) * item;
                char *po = out.data + (bi * so[0] + i * so[1] + j * so[2]) * item;
                double accd = 0.0;
                uint64_t acci = 0;
                for (int64_t k = 0; k < K; k++, pa += sa[2] * item, pb += sb[1] * item) {
                    if (fl) accd += ref_load_d(pa, a.dtype) * ref_load_d(pb, b.dtype);
                    else acci += (uint64_t)ref_load_i(pa, a.dtype) * (uint64_t)ref_load_i(pb, b.dtype);
                }
                if (fl) ref_store_d(po, out.dtype, accd);
                else ref_store_i(po, out.dtype, (int64_t)acci);
            }
    return EMBER_OK;
}
