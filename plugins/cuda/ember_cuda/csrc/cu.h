/* The slice of the CUDA driver API (and of cuBLAS) that ember-cuda calls, declared here and
 * resolved with dlopen at first use: the plugin builds with a C compiler alone (no CUDA
 * toolkit), and imports on machines without a driver, where it reports itself unavailable.
 * Types and constants follow cuda.h / cublas_api.h / library_types.h of CUDA 12 and 13. */
#ifndef EMBER_CUDA_CU_H
#define EMBER_CUDA_CU_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_READY 600

#define CU_EVENT_DEFAULT 0
#define CU_EVENT_DISABLE_TIMING 2
#define CU_STREAM_DEFAULT 0
#define CU_MEMHOSTALLOC_PORTABLE 1
#define CU_MEMHOSTALLOC_DEVICEMAP 2

/* cuDeviceGetAttribute */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK 8
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
/* cuFuncSetAttribute */
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

typedef struct {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t nbytes);                  /* _v2 */
    CUresult (*MemFree)(CUdeviceptr ptr);                                   /* _v2 */
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);        /* _v2 */
    CUresult (*MemHostAlloc)(void **ptr, size_t nbytes, unsigned int flags);
    CUresult (*MemFreeHost)(void *ptr);
    CUresult (*MemHostGetDevicePointer)(CUdeviceptr *dptr, void *p, unsigned int flags);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t n, CUstream s);
    CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t n, CUstream s);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
    CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
    CUresult (*StreamCreateWithPriority)(CUstream *s, unsigned int flags, int priority);
    CUresult (*StreamDestroy)(CUstream s);                                  /* _v2 */
    CUresult (*StreamSynchronize)(CUstream s);
    CUresult (*StreamQuery)(CUstream s);
    CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned int flags);
    CUresult (*EventCreate)(CUevent *e, unsigned int flags);
    CUresult (*EventDestroy)(CUevent e);                                    /* _v2 */
    CUresult (*EventRecord)(CUevent e, CUstream s);
    CUresult (*EventSynchronize)(CUevent e);
    CUresult (*EventQuery)(CUevent e);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*ModuleLoadData)(CUmodule *m, const void *image);
    CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
    CUresult (*FuncSetAttribute)(CUfunction f, int attrib, int value);
    CUresult (*LaunchKernel)(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int smem, CUstream s, void **params, void **extra);
    CUresult (*GetErrorName)(CUresult r, const char **name);
    CUresult (*GetErrorString)(CUresult r, const char **text);
} cu_api;

/* cuBLAS */
typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;
#define CUBLAS_STATUS_SUCCESS 0
#define CUBLAS_OP_N 0
#define CUBLAS_OP_T 1
#define CUBLAS_DEFAULT_MATH 0
#define CUBLAS_PEDANTIC_MATH 2
#define CUBLAS_TF32_TENSOR_OP_MATH 3
#define CUBLAS_GEMM_DEFAULT (-1)
#define CUDA_R_32F 0
#define CUDA_R_64F 1
#define CUDA_R_16F 2
#define CUDA_R_16BF 14
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_COMPUTE_32F_PEDANTIC 69
#define CUBLAS_COMPUTE_64F 70
#define CUBLAS_COMPUTE_32F_FAST_TF32 77

typedef struct {
    cublasStatus_t (*Create)(cublasHandle_t *h);                           /* _v2 */
    cublasStatus_t (*SetStream)(cublasHandle_t h, CUstream s);              /* _v2 */
    cublasStatus_t (*SetMathMode)(cublasHandle_t h, int mode);
    cublasStatus_t (*SetWorkspace)(cublasHandle_t h, void *ws, size_t nbytes);   /* _v2 */
    cublasStatus_t (*GemmStridedBatchedEx)(
        cublasHandle_t h, int transa, int transb, int m, int n, int k, const void *alpha,
        const void *A, int Atype, int lda, long long strideA,
        const void *B, int Btype, int ldb, long long strideB, const void *beta,
        void *C, int Ctype, int ldc, long long strideC, int batch, int compute,
        int algo);
    const char *(*GetStatusString)(cublasStatus_t s);
} cublas_api;

#endif
