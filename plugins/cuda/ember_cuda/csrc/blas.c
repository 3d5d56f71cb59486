/* matmul through cuBLAS (dlopen'd at the first matmul): out [B, M, N] = a [B, M, K] @
 * b [B, K, N] as one strided-batched GEMM.  cuBLAS is column-major, so the row-major
 * product is computed as out^T = b^T a^T: each row-major operand, read column-major, is its
 * transpose.  An operand whose last two dims have no unit stride is made contiguous first.
 * float32 computes in float32 unless ctx->matmul_precision allows TF32; float16/bfloat16
 * accumulate in float32.  Integer dtypes run a plain kernel (imatmul.cu). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ec.h"
#include "entries.h"

static cublas_api blas;
static cublasHandle_t handles[EC_MAX_DEVICES];
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;

static int blas_load(ember_ctx *ctx) {
    static int state = 0;
    static char failure[256];
    if (state == 1) return EMBER_OK;
    pthread_mutex_lock(&blas_lock);
    if (state == 0) {
        const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
        void *lib = NULL;
        for (int i = 0; names[i] && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (!lib) {
            snprintf(failure, sizeof failure, "matmul: cuBLAS (libcublas.so.13 or .12) was not "
                     "found on the loader path: %s", dlerror());
            state = -1;
        } else {
            *(void **)&blas.Create = dlsym(lib, "cublasCreate_v2");
            *(void **)&blas.SetStream = dlsym(lib, "cublasSetStream_v2");
            *(void **)&blas.SetMathMode = dlsym(lib, "cublasSetMathMode");
            *(void **)&blas.SetWorkspace = dlsym(lib, "cublasSetWorkspace_v2");
            *(void **)&blas.GemmStridedBatchedEx = dlsym(lib, "cublasGemmStridedBatchedEx");
            *(void **)&blas.GetStatusString = dlsym(lib, "cublasGetStatusString");
            if (!blas.Create || !blas.SetStream || !blas.SetMathMode || !blas.GemmStridedBatchedEx) {
                snprintf(failure, sizeof failure, "matmul: the cuBLAS found lacks the functions "
                         "ember-cuda needs");
                state = -1;
            } else {
                state = 1;
            }
        }
    }
    pthread_mutex_unlock(&blas_lock);
    return state == 1 ? EMBER_OK : ec_fail(ctx, EMBER_ERR_RUNTIME, "%s", failure);
}

static int blas_fail(ember_ctx *ctx, cublasStatus_t s, const char *what) {
    const char *text = blas.GetStatusString ? blas.GetStatusString(s) : "?";
    return ec_fail(ctx, EMBER_ERR_RUNTIME, "cuBLAS error %d (%s) in %s", (int)s, text, what);
}

static int handle_for(ember_ctx *ctx, cublasHandle_t *h) {
    int d = ctx->device;
    if (!handles[d]) {
        pthread_mutex_lock(&blas_lock);
        cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
        if (!handles[d]) s = blas.Create(&handles[d]);
        pthread_mutex_unlock(&blas_lock);
        if (s != CUBLAS_STATUS_SUCCESS) return blas_fail(ctx, s, "cublasCreate");
    }
    *h = handles[d];
    return EMBER_OK;
}

/* how a [B, R, C] view reads column-major: (transposed?, leading dim, batch stride), or -1
 * when neither of its last two dims has a unit stride */
static int as_colmajor(const ember_view *v, int *op, int64_t *ld) {
    int64_t R = v->sizes[1], C = v->sizes[2], rs = v->strides[1], cs = v->strides[2];
    if (cs == 1 || C == 1) {                 /* row-major: column-major of the transpose */
        *op = CUBLAS_OP_N;
        *ld = (R == 1 && rs < C) ? C : rs;
        if (*ld < C) *ld = C;
        return 0;
    }
    if (rs == 1 || R == 1) {                 /* column-major already: the transpose of it */
        *op = CUBLAS_OP_T;
        *ld = (C == 1 && cs < R) ? R : cs;
        if (*ld < R) *ld = R;
        return 0;
    }
    return -1;
}

/* a contiguous copy of a strided [B, R, C] view, in memory from the caching allocator */
static int contiguous(ember_ctx *ctx, const ember_view *v, ember_view *c) {
    int64_t n = ec_numel(v);
    *c = *v;
    c->data = (char *)ec_alloc(ctx, n * ec_itemsize(v->dtype));
    if (!c->data) return EMBER_ERR_MEMORY;
    c->strides[2] = 1;
    c->strides[1] = v->sizes[2];
    c->strides[0] = v->sizes[1] * v->sizes[2];
    int rc = ec_copy(ctx, c, v);
    if (rc) ec_free(ctx->device, c->data);
    return rc;
}

static int int_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                      const ember_view *b) {
    static ec_kernel cache[16];
    CUfunction f;
    int rc = ec_fn(ctx, cache, "imatmul", out->dtype, "imatmul", &f);
    if (rc) return rc;
    int64_t n = ec_numel(out);
    void *args[] = {(void *)&out->data, (void *)&a->data, (void *)&b->data,
                    (void *)out->sizes, (void *)&out->sizes[1], (void *)&out->sizes[2],
                    (void *)&a->sizes[2],
                    (void *)&out->strides[0], (void *)&out->strides[1], (void *)&out->strides[2],
                    (void *)&a->strides[0], (void *)&a->strides[1], (void *)&a->strides[2],
                    (void *)&b->strides[0], (void *)&b->strides[1], (void *)&b->strides[2]};
    return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}

static int dtype_types(int dtype, int precision, int *type, int *compute) {
    switch (dtype) {
    case EMBER_FLOAT64: *type = CUDA_R_64F; *compute = CUBLAS_COMPUTE_64F; return 1;
    case EMBER_FLOAT16: *type = CUDA_R_16F; *compute = CUBLAS_COMPUTE_32F; return 1;
    case EMBER_BFLOAT16: *type = CUDA_R_16BF; *compute = CUBLAS_COMPUTE_32F; return 1;
    case EMBER_FLOAT32:
        *type = CUDA_R_32F;
        *compute = precision == EMBER_MATMUL_HIGHEST ? CUBLAS_COMPUTE_32F
                                                     : CUBLAS_COMPUTE_32F_FAST_TF32;
        return 1;
    default: return 0;
    }
}

int ec_gemm(ember_ctx *ctx, int dtype, int transa, int transb, int64_t m, int64_t n, int64_t k,
            const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
            int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
            int64_t batch) {
    int rc, type, compute;
    if (!dtype_types(dtype, ctx->matmul_precision, &type, &compute))
        return ec_fail_dtype(ctx, "gemm", dtype);
    if ((rc = blas_load(ctx)) || (rc = ec_enter(ctx))) return rc;
    cublasHandle_t h = NULL;
    if ((rc = handle_for(ctx, &h))) return rc;
    blas.SetStream(h, ec_stream(ctx->device));
    float alpha32 = 1, beta32 = (float)beta;
    double alpha64 = 1, beta64 = beta;
    int wide = dtype == EMBER_FLOAT64;
    int slot = ec_profiling ? ec_profile_begin(ctx, EC_PROF_GEMM) : -1;
    cublasStatus_t s = blas.GemmStridedBatchedEx(
        h, transa ? CUBLAS_OP_T : CUBLAS_OP_N, transb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n,
        (int)k, wide ? (const void *)&alpha64 : (const void *)&alpha32, A, type, (int)lda,
        stride_a, B, type, (int)ldb, stride_b,
        wide ? (const void *)&beta64 : (const void *)&beta32, C, type, (int)ldc, stride_c,
        (int)batch, compute, CUBLAS_GEMM_DEFAULT);
    if (slot >= 0) ec_profile_end(ctx, slot);
    return s == CUBLAS_STATUS_SUCCESS ? EMBER_OK : blas_fail(ctx, s, "cublasGemmStridedBatchedEx");
}

int ec_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a, const ember_view *b) {
    int rc;
    if (out->ndim != 3 || a->ndim != 3 || b->ndim != 3)
        return ec_fail(ctx, EMBER_ERR_VALUE, "matmul: expects 3-d views");
    if ((rc = ec_check_view(ctx, "matmul", out)) || (rc = ec_check_view(ctx, "matmul", a)) ||
        (rc = ec_check_view(ctx, "matmul", b)))
        return rc;
    int64_t B = out->sizes[0], M = out->sizes[1], N = out->sizes[2], K = a->sizes[2];
    if (a->sizes[0] != B || b->sizes[0] != B || a->sizes[1] != M || b->sizes[2] != N ||
        b->sizes[1] != K)
        return ec_fail(ctx, EMBER_ERR_VALUE, "matmul: shapes do not match");
    if (a->dtype != out->dtype || b->dtype != out->dtype)
        return ec_fail(ctx, EMBER_ERR_TYPE, "matmul: operands must have out's dtype");
    if (out->dtype == EMBER_BOOL) return ec_fail_dtype(ctx, "addmm", out->dtype);
    if (B == 0 || M == 0 || N == 0) return EMBER_OK;
    if (K == 0) {                                 /* an empty sum: zeros */
        static const char zero[8];
        return ec_fill(ctx, out, zero);
    }
    if (!ec_is_floating(out->dtype)) return int_matmul(ctx, out, a, b);
    /* a batch of row blocks against one matrix (b's batch stride 0: linear over [B, T, K])
     * whose rows continue from batch to batch in a and out: one GEMM over all B * M rows,
     * which cuBLAS runs far better than B small ones */
    ember_view fa, fb, fo;
    if (B > 1 && b->strides[0] == 0 && a->strides[2] == 1 && out->strides[2] == 1 &&
        a->strides[0] == M * a->strides[1] && out->strides[0] == M * out->strides[1]) {
        fa = *a, fb = *b, fo = *out;
        fa.sizes[0] = fb.sizes[0] = fo.sizes[0] = 1;
        fa.sizes[1] = fo.sizes[1] = B * M;
        a = &fa, b = &fb, out = &fo;
        M *= B;
        B = 1;
    }
    if (M > 0x7fffffff || N > 0x7fffffff || K > 0x7fffffff || B > 0x7fffffff)
        return ec_fail(ctx, EMBER_ERR_VALUE, "matmul: a dimension exceeds 2^31 - 1");
    if ((rc = blas_load(ctx)) || (rc = ec_enter(ctx))) return rc;

    /* out must be writable column-major as out^T: row-major with unit column stride */
    ember_view o = *out, ca, cb;
    int tmp_out = !(out->strides[2] == 1 && out->strides[1] >= N) &&
                  !(N == 1 && out->strides[1] >= 1);
    if (tmp_out) {
        o.data = (char *)ec_alloc(ctx, B * M * N * ec_itemsize(out->dtype));
        if (!o.data) return EMBER_ERR_MEMORY;
        o.strides[2] = 1;
        o.strides[1] = N;
        o.strides[0] = M * N;
    }
    const ember_view *pa = a, *pb = b;
    int opa, opb;
    int64_t lda, ldb;
    char *tmp_a = NULL, *tmp_b = NULL;
    if (as_colmajor(pa, &opa, &lda)) {
        if ((rc = contiguous(ctx, a, &ca))) goto done;
        tmp_a = ca.data;
        pa = &ca;
        as_colmajor(pa, &opa, &lda);
    }
    if (as_colmajor(pb, &opb, &ldb)) {
        if ((rc = contiguous(ctx, b, &cb))) goto done;
        tmp_b = cb.data;
        pb = &cb;
        as_colmajor(pb, &opb, &ldb);
    }
    /* C^T [N, M] = B^T [N, K] @ A^T [K, M], all column-major */
    int64_t ldc = o.strides[1] >= N ? o.strides[1] : N;
    rc = ec_gemm(ctx, out->dtype, opb == CUBLAS_OP_T, opa == CUBLAS_OP_T, N, M, K,
                 pb->data, ldb, pb->strides[0], pa->data, lda, pa->strides[0], 0.0,
                 o.data, ldc, o.strides[0], B);
    if (rc) goto done;
    if (tmp_out) rc = ec_copy(ctx, out, &o);
done:
    if (tmp_a) ec_free(ctx->device, tmp_a);
    if (tmp_b) ec_free(ctx->device, tmp_b);
    if (tmp_out) ec_free(ctx->device, o.data);
    return rc;
}
