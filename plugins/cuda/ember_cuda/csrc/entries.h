/* The kernel-table entries ember-cuda implements, one file of csrc/ per family; _cuda.pyx
 * puts them in the ember_kernel_table it hands to the core. */
#ifndef EMBER_CUDA_ENTRIES_H
#define EMBER_CUDA_ENTRIES_H

#include "ember/abi.h"

/* alloc.c */
void *ec_alloc(ember_ctx *ctx, int64_t nbytes);
void ec_free(int32_t device, void *ptr);
/* copy.c */
int ec_copy(ember_ctx *ctx, const ember_view *out, const ember_view *a);
int ec_fill(ember_ctx *ctx, const ember_view *out, const void *value);
int ec_to_host(ember_ctx *ctx, void *host_dst, const void *device_src, int64_t nbytes);
int ec_from_host(ember_ctx *ctx, void *device_dst, const void *host_src, int64_t nbytes);
/* elementwise.c */
int ec_unary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a);
int ec_binary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
              const ember_view *b);
int ec_where(ember_ctx *ctx, const ember_view *out, const ember_view *cond, const ember_view *a,
             const ember_view *b);
int ec_ternary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
               const ember_view *b, const ember_view *c, double p);
int ec_activation(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                  const ember_view *a, const ember_view *b);
/* reduce.c */
int ec_reduce(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
              int32_t nreduce);
/* scan.c */
int ec_scan(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
            const ember_view *a);
/* blas.c */
int ec_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a, const ember_view *b);
/* random.c */
int ec_random(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed, uint64_t offset,
              double p0, double p1);
/* index.c */
int ec_index(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
             const ember_view *index, int32_t dim);
int ec_search(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
              const ember_view *values);
/* rows.c: the optional fused row kernels */
int ec_softmax(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
               const ember_view *b);
int ec_norm(ember_ctx *ctx, int32_t op, const ember_view *const *v, double eps);
int ec_nll(ember_ctx *ctx, int32_t op, const ember_view *const *v, int64_t ignore_index);
/* conv.c, pool.c: the optional fused convolution and pooling */
int ec_conv(ember_ctx *ctx, int32_t op, const ember_conv_params *p, const ember_view *out,
            const ember_view *a, const ember_view *b, const ember_view *c);
int ec_pool(ember_ctx *ctx, int32_t op, const ember_pool_params *p, const ember_view *out,
            const ember_view *indices, const ember_view *a);
/* optim.c: the optional fused optimizer step */
int ec_adam(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v, int64_t n);

#endif
