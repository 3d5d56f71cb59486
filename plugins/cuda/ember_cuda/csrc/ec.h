/* ember-cuda's C layer: what every kernel-table entry shares.
 *
 * The table entries (copy.c, elementwise.c, ...) run without Python on the hot path: they
 * check their operands, coalesce dimensions, pick a kernel and launch it with
 * cuLaunchKernel on the calling thread's current stream.  A kernel's CUfunction is looked
 * up once per call site and device (ec_kernel); the first lookup asks Python, with the GIL,
 * to compile (or read from the disk cache) and load its module (ember_cuda/_modules.py).
 */
#ifndef EMBER_CUDA_EC_H
#define EMBER_CUDA_EC_H

#include <stdint.h>

#include "ember/abi.h"
#include "cu.h"

#define EC_MAX_DEVICES 16
#define EC_MAX_OPERANDS 4
#define EC_THREADS 256            /* threads per block of the elementwise kernels */

extern cu_api cu;                 /* the driver, once ec_driver_load() succeeded */

typedef struct {
    int ready;                    /* context retained, attributes read */
    CUcontext context;
    int sm_count;
    int cc_major, cc_minor;
    int max_smem_optin;           /* shared memory a block may opt in to, bytes */
} ec_device;

extern ec_device ec_devices[EC_MAX_DEVICES];

/* -- errors: write the message into ctx->error and return the code -------------------- */
int ec_fail(ember_ctx *ctx, int code, const char *fmt, ...);
/* a driver call failed: "CUDA error: <name>: <text> (<what>)"; out of memory -> MEMORY */
int ec_cu_fail(ember_ctx *ctx, CUresult r, const char *what);
/* the dtype of an operand is not one this op takes: NotImplementedError, as PyTorch says */
int ec_fail_dtype(ember_ctx *ctx, const char *op, int dtype);
const char *ec_dtype_name(int dtype);
int ec_itemsize(int dtype);       /* 0 for an unknown code */
int ec_is_floating(int dtype);

/* -- devices and streams ------------------------------------------------------------------ */
/* Load libcuda (once); 0 on success, else a message in `why`. */
int ec_driver_load(char *why, size_t n);
/* Make ctx->device's primary context current on this thread (retaining it on first use). */
int ec_enter(ember_ctx *ctx);
/* This thread's current stream on `device` (NULL: the legacy default stream). */
CUstream ec_stream(int device);
void ec_set_stream(int device, CUstream s);

/* -- kernels ------------------------------------------------------------------------------- */
typedef struct {
    CUfunction fn[EC_MAX_DEVICES];
} ec_kernel;

/* The function `name` of module `module` ("ew.float32", ...) on ctx->device, cached in *k. */
int ec_get(ember_ctx *ctx, ec_kernel *k, const char *module, const char *name, CUfunction *f);
/* The same for the module of `family` rendered for `dtype`, with one cache slot per dtype
 * code: `cache` is an array of 16 ec_kernel. */
int ec_fn(ember_ctx *ctx, ec_kernel *cache, const char *family, int dtype, const char *name,
          CUfunction *f);
const char *ec_dtype_key(int dtype);     /* "float32", ... */
/* Launch on the current stream; `smem` bytes of dynamic shared memory. */
int ec_launch(ember_ctx *ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
              unsigned block, unsigned smem, void **args);
/* The kernel profiler (ember_cuda.runtime.profile_kernels): while on, every launch is
 * bracketed by two events on its stream and remembered with its function, or with one of
 * the tags below for the work that is not a kernel of ember's. */
#define EC_PROF_GEMM ((CUfunction)1)
#define EC_PROF_MEMCPY ((CUfunction)2)
#define EC_PROF_MEMSET ((CUfunction)3)
extern int ec_profiling;
int ec_profile_begin(ember_ctx *ctx, CUfunction f);     /* a record's slot, or -1 */
void ec_profile_end(ember_ctx *ctx, int slot);
void ec_profile_start(void);
/* Stop; fills up to n (function, milliseconds) pairs and returns how many records there
 * were (the events are synchronised first). */
long ec_profile_stop(uintptr_t *fn, float *ms, long n);
/* Blocks of EC_THREADS threads for `work` items (at least 1, at most a few waves). */
unsigned ec_blocks(ember_ctx *ctx, int64_t work, int64_t per_thread);
/* After launching a kernel that may set the device error slot (index, search, nll checks,
 * integer division): by default the error is reported at the next synchronisation, as CUDA
 * reports device-side asserts; with EMBER_CUDA_SYNC_ERRORS=1 this waits and returns it. */
int ec_sync_errors(ember_ctx *ctx, const char *op);
/* Read (and clear) the error slot after a synchronisation: EMBER_OK or the error. */
int ec_take_error(ember_ctx *ctx, int deferred);
/* Device address of this device's error slot (int64[4]: code, value, bound, unused). */
CUdeviceptr ec_error_slot(ember_ctx *ctx);
/* Set by the Python side: (device, module, name) -> CUfunction as int. */
void ec_set_loader(void *callable);

/* -- memory (alloc.c) ---------------------------------------------------------------------- */
void *ec_alloc(ember_ctx *ctx, int64_t nbytes);
void ec_free(int32_t device, void *ptr);
typedef struct {
    int64_t allocated, allocated_peak, reserved, reserved_peak, requested;
    int64_t num_allocs, num_frees, num_device_allocs, num_device_frees;
    int64_t num_alloc_retries, num_ooms, active_blocks, cached_blocks;
} ec_memory_stats;
void ec_memory_stats_get(int device, ec_memory_stats *s);
void ec_memory_reset_peaks(int device);
/* Give cached (unused) blocks back to the driver; 0 or a CUresult. */
int ec_empty_cache(int device);

/* -- cuBLAS (blas.c) ----------------------------------------------------------------------
 * C = op(A) @ op(B) + beta * C, column-major as cuBLAS sees it, `batch` times with the
 * given element strides between batches (0: the same matrix); trans* nonzero transposes.
 * Floating dtypes; float32 follows ctx->matmul_precision. */
int ec_gemm(ember_ctx *ctx, int dtype, int transa, int transb, int64_t m, int64_t n, int64_t k,
            const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
            int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
            int64_t batch);

/* -- operands --------------------------------------------------------------------------- */
/* A Python number next to a tensor (EMBER_VIEW_HOST_SCALAR), read on the host into the
 * compute type kernels pass by value: floating dtypes as double, the rest as int64. */
typedef union {
    double f;
    long long i;
} ec_scalar;
ec_scalar ec_read_scalar(const ember_view *v);
static inline int ec_is_scalar(const ember_view *v) {
    return (v->flags & EMBER_VIEW_HOST_SCALAR) != 0;
}

/* Strided operands at one shape, dims coalesced (size-1 dims dropped, neighbours merged
 * where every operand allows): what the strided kernels take by value.  Strides in elements. */
typedef struct {
    int32_t ndim;
    int32_t index32;              /* every offset and the element count fit 32 bits */
    int64_t sizes[EMBER_MAX_DIM];
    int64_t strides[EC_MAX_OPERANDS][EMBER_MAX_DIM];
} ec_layout;

/* Build the layout of `n` operands over views[0]'s shape; a host scalar (or NULL) gets
 * stride 0.  Returns the element count. */
int64_t ec_layout_make(ec_layout *L, int n, const ember_view *const *views);
/* Whether every operand but the host scalars (bit k of `scalars`) is contiguous in one
 * flat order. */
int ec_layout_flat(const ec_layout *L, int n, unsigned scalars);
int64_t ec_numel(const ember_view *v);
int ec_contiguous(const ember_view *v);          /* C-contiguous (size-1 dims aside) */
int ec_check_view(ember_ctx *ctx, const char *op, const ember_view *v);

#endif
