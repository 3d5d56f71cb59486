/* ember-reference: what the kernel files share.
 *
 * The "reference" device is a pretend accelerator written to teach ember's kernel ABI
 * (ember/abi.h).  Its memory is a separate host arena that nobody but these kernels can
 * reach: `alloc` hands out *device addresses* inside a reserved, inaccessible address range
 * (arena.c), and every kernel translates the device addresses of its views into the arena
 * before it touches a byte (ref_map_view).  Any code outside the plugin that dereferences a
 * device pointer faults at once, so the core cannot get away with reading device memory
 * directly; `to_host`, `from_host` and `copy` are the only ways bytes cross.
 *
 * The kernels themselves are plain serial C, written for clarity, not speed: one N-d
 * iterator (ref_iter) walks any strided view, and every element is loaded as double
 * (floating dtypes) or int64 (integers, bool) and stored back with a cast, so one loop
 * serves every dtype.  float16/bfloat16 therefore compute in double and round once on
 * store.  Kernels report failures through ctx->error and a return code; they never abort.
 *
 * Files, in the order a vendor might read them:
 *   arena.c        the device address space, the allocation table, translation, counters
 *   memory.c       alloc, free, to_host, from_host, copy (with casts), fill
 *   strided.c      dtypes (load/store), errors, views (mapping into the arena), the iterator
 *   elementwise.c  unary, binary, where
 *   reduce.c       reduce, scan
 *   matmul.c       batched matmul
 *   random.c       counter-based uniform/normal fills
 *   index.c        gather/scatter (index), binary search and multinomial (search)
 *   rows.c         the fused row kernels: softmax, norm, nll
 *   convpool.c     the fused conv and pool kernels
 *   optim.c        the fused optimizer steps: Adam/AdamW, SGD
 *   ternary.c      lerp, addcmul, addcdiv in one pass
 *   module.c       the kernel table and the Python module that hands it over
 */
#ifndef EMBER_REFERENCE_H
#define EMBER_REFERENCE_H

#include <stdint.h>

#include "ember/abi.h"
#include "ember/half.h"

/* ---- errors (strided.c) ---------------------------------------------------------------- */

/* writes "reference: <message>" into ctx->error and returns `code` */
int ref_fail(ember_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* the same without the prefix: the errors found in the data whose wording the ABI gives
 * (PyTorch's: "index 5 is out of bounds for dimension 0 with size 3") */
int ref_data_error(ember_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* the data error deferred to this synchronising call (EMBER_REFERENCE_DEFER_ERRORS=1), its
 * message in ctx->error, or EMBER_OK */
int ref_take_deferred_error(ember_ctx *ctx);
#define REF_TRY(expr)                                                                     \
    do {                                                                                  \
        int ref_rc_ = (expr);                                                             \
        if (ref_rc_ != EMBER_OK) return ref_rc_;                                          \
    } while (0)

/* ---- the arena (arena.c) ----------------------------------------------------------------- */

void *ref_arena_alloc(ember_ctx *ctx, int64_t nbytes);
void ref_arena_free(void *device_ptr);
/* the arena address of the device bytes [dev + lo, dev + hi), which must lie inside one
 * live allocation; EMBER_ERR_RUNTIME (with a message naming `what`) otherwise */
int ref_arena_translate(ember_ctx *ctx, const void *dev, int64_t lo, int64_t hi, char **host,
                        const char *what);
typedef struct {
    int64_t allocated_bytes, peak_bytes, live_allocations, total_allocations, bad_frees;
    uintptr_t space_begin, space_end;      /* the reserved device address range */
} ref_arena_stats;
void ref_arena_get_stats(ref_arena_stats *out);
void ref_arena_reset_peak(void);

/* ---- dtypes (strided.c) ------------------------------------------------------------------ */

int64_t ref_itemsize(int32_t dt);          /* 0 for an unknown dtype code */
int ref_is_float(int32_t dt);
const char *ref_dtype_name(int32_t dt);
double ref_load_d(const char *p, int32_t dt);
int64_t ref_load_i(const char *p, int32_t dt);
void ref_store_d(char *p, int32_t dt, double v);
void ref_store_i(char *p, int32_t dt, int64_t v);

/* ---- views (strided.c) ------------------------------------------------------------------- */

int64_t ref_numel(int ndim, const int64_t *sizes);
/* `host` = `dev` with `data` translated into the arena (checked against the allocation);
 * a host-scalar view (EMBER_VIEW_HOST_SCALAR) keeps its host pointer.  Every kernel maps
 * each of its views through this before reading or writing anything. */
int ref_map_view(ember_ctx *ctx, ember_view *host, const ember_view *dev, const char *what);
/* the same for an optional view: a NULL `dev` gives a NULL `*host` */
int ref_map_optional(ember_ctx *ctx, ember_view *storage, const ember_view **host,
                     const ember_view *dev, const char *what);
int ref_is_contiguous(const ember_view *v);
int ref_check_same_dtype(ember_ctx *ctx, const char *op, const ember_view *a,
                         const ember_view *b);

/* ---- the N-d iterator (strided.c) -------------------------------------------------------- */

/* Walks the index space sizes[0..ndim) in row-major order, keeping one byte pointer per
 * operand; each operand brings its own element strides (0 = broadcast). */
#define REF_MAX_OPERANDS 4                 /* where: out, cond, a, b */
typedef struct {
    int ndim, nops;
    int64_t sizes[EMBER_MAX_DIM], idx[EMBER_MAX_DIM];
    int64_t bstrides[REF_MAX_OPERANDS][EMBER_MAX_DIM];    /* byte strides */
    char *ptr[REF_MAX_OPERANDS];
} ref_iter;

void ref_iter_init(ref_iter *it, int ndim, const int64_t *sizes);
/* add an operand: its first element, its element strides over the iterator's dims, dtype */
void ref_iter_add(ref_iter *it, char *data, const int64_t *strides, int32_t dt);
void ref_iter_next(ref_iter *it);

/* ---- shared scalar math (elementwise.c) -------------------------------------------------- */

double ref_maximum(double x, double y);    /* NaN propagates */
double ref_minimum(double x, double y);

/* ---- the kernel entries (one file each family, see above) -------------------------------- */

void *ref_alloc(ember_ctx *ctx, int64_t nbytes);
void ref_free(int32_t device, void *ptr);
int ref_copy(ember_ctx *ctx, const ember_view *out, const ember_view *a);
int ref_fill(ember_ctx *ctx, const ember_view *out, const void *value);
int ref_to_host(ember_ctx *ctx, void *host_dst, const void *device_src, int64_t nbytes);
int ref_from_host(ember_ctx *ctx, void *device_dst, const void *host_src, int64_t nbytes);
int ref_unary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a);
int ref_binary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
               const ember_view *b);
int ref_where(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
              const ember_view *a, const ember_view *b);
int ref_reduce(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
               int32_t nreduce);
int ref_scan(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
             const ember_view *a);
int ref_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a, const ember_view *b);
int ref_random(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
               uint64_t offset, double p0, double p1);
int ref_index(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
              const ember_view *index, int32_t dim);
int ref_search(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
               const ember_view *values);
int ref_softmax(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                const ember_view *b);
int ref_norm(ember_ctx *ctx, int32_t op, const ember_view *const *v, double eps);
int ref_nll(ember_ctx *ctx, int32_t op, const ember_view *const *v, int64_t ignore_index);
int ref_conv(ember_ctx *ctx, int32_t op, const ember_conv_params *p, const ember_view *out,
             const ember_view *a, const ember_view *b, const ember_view *c);
int ref_pool(ember_ctx *ctx, int32_t op, const ember_pool_params *p, const ember_view *out,
             const ember_view *indices, const ember_view *a);
int ref_adam(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v, int64_t n);
int ref_sort(ember_ctx *ctx, const ember_view *values, const ember_view *indices,
             const ember_view *a, int32_t descending);                        /* ABI 6.1 */
int ref_rnn(ember_ctx *ctx, int32_t op, const ember_view *const *v, int32_t reverse); /* 6.2 */
int ref_sgd(ember_ctx *ctx, const ember_sgd_params *p, const ember_view *const *v,
            int64_t n);                                                                 /* 6.3 */
int ref_activation(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                   const ember_view *a, const ember_view *b);                          /* 6.4 */
int ref_ternary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                const ember_view *b, const ember_view *c, double p);                  /* 6.5 */

#endif
