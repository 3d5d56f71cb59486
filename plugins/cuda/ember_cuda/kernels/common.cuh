// Shared by every module: dtypes as storage and compute types, loads and stores, the
// strided layout, and the index arithmetic of the elementwise and strided kernels.
//
// A module is rendered for one dtype (EC_DTYPE, an abi.h code) by ember_cuda/_modules.py:
// the family's kernels are written once against scalar_t (the storage type) and acc_t (the
// type values are computed in: float for float16/bfloat16/float32, double, int64 for the
// integers and bool), as the CPU plugin computes.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math_constants.h>

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;

#define EC_MAX_DIM 16
#define EC_MAX_OPERANDS 4

// the dtype codes of abi.h
#define D_UINT8 0
#define D_INT8 1
#define D_INT16 2
#define D_INT32 3
#define D_INT64 4
#define D_FLOAT16 5
#define D_FLOAT32 6
#define D_FLOAT64 7
#define D_BOOL 11
#define D_BFLOAT16 15

// the operand layout of a strided kernel (ec_layout in csrc/ec.h), by value
struct Layout {
    int ndim;
    int index32;
    i64 sizes[EC_MAX_DIM];
    i64 strides[EC_MAX_OPERANDS][EC_MAX_DIM];
};

// a Python number next to a tensor, in the compute type (ec_scalar)
union Scalar {
    double f;
    i64 i;
};

template <int CODE> struct DT;
template <> struct DT<D_UINT8> { typedef unsigned char T; typedef i64 C; };
template <> struct DT<D_INT8> { typedef signed char T; typedef i64 C; };
template <> struct DT<D_INT16> { typedef short T; typedef i64 C; };
template <> struct DT<D_INT32> { typedef int T; typedef i64 C; };
template <> struct DT<D_INT64> { typedef i64 T; typedef i64 C; };
template <> struct DT<D_FLOAT16> { typedef __half T; typedef float C; };
template <> struct DT<D_FLOAT32> { typedef float T; typedef float C; };
template <> struct DT<D_FLOAT64> { typedef double T; typedef double C; };
template <> struct DT<D_BOOL> { typedef unsigned char T; typedef i64 C; };
template <> struct DT<D_BFLOAT16> { typedef __nv_bfloat16 T; typedef float C; };

template <int CODE> struct is_float_code { enum { value = 0 }; };
template <> struct is_float_code<D_FLOAT16> { enum { value = 1 }; };
template <> struct is_float_code<D_FLOAT32> { enum { value = 1 }; };
template <> struct is_float_code<D_FLOAT64> { enum { value = 1 }; };
template <> struct is_float_code<D_BFLOAT16> { enum { value = 1 }; };

// -- values to and from the compute type ---------------------------------------------------
__device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }
__device__ __forceinline__ i64 to_acc(unsigned char v) { return v; }
__device__ __forceinline__ i64 to_acc(signed char v) { return v; }
__device__ __forceinline__ i64 to_acc(short v) { return v; }
__device__ __forceinline__ i64 to_acc(int v) { return v; }
__device__ __forceinline__ i64 to_acc(i64 v) { return v; }

// a compute value stored as dtype CODE: round to nearest even for the narrow floats; the
// integers wrap; bool is "nonzero"
template <int CODE> struct Store;
template <> struct Store<D_FLOAT16> {
    __device__ static __half from(float v) { return __float2half_rn(v); }
    __device__ static __half from(double v) { return __double2half(v); }
    __device__ static __half from(i64 v) { return __float2half_rn((float)v); }
};
template <> struct Store<D_BFLOAT16> {
    __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
    __device__ static __nv_bfloat16 from(double v) { return __double2bfloat16(v); }
    __device__ static __nv_bfloat16 from(i64 v) { return __float2bfloat16_rn((float)v); }
};
template <> struct Store<D_FLOAT32> {
    __device__ static float from(float v) { return v; }
    __device__ static float from(double v) { return (float)v; }
    __device__ static float from(i64 v) { return (float)v; }
};
template <> struct Store<D_FLOAT64> {
    __device__ static double from(float v) { return v; }
    __device__ static double from(double v) { return v; }
    __device__ static double from(i64 v) { return (double)v; }
};
template <> struct Store<D_BOOL> {
    __device__ static unsigned char from(float v) { return v != 0; }
    __device__ static unsigned char from(double v) { return v != 0; }
    __device__ static unsigned char from(i64 v) { return v != 0; }
};
#define EC_INT_STORE(CODE, TYPE)                                                         \
    template <> struct Store<CODE> {                                                     \
        __device__ static TYPE from(float v) { return (TYPE)(i64)v; }                    \
        __device__ static TYPE from(double v) { return (TYPE)(i64)v; }                   \
        __device__ static TYPE from(i64 v) { return (TYPE)(u64)v; }                      \
    };
EC_INT_STORE(D_UINT8, unsigned char)
EC_INT_STORE(D_INT8, signed char)
EC_INT_STORE(D_INT16, short)
EC_INT_STORE(D_INT32, int)
EC_INT_STORE(D_INT64, i64)

// a host scalar in the compute type
__device__ __forceinline__ void scalar_as(Scalar s, float *v) { *v = (float)s.f; }
__device__ __forceinline__ void scalar_as(Scalar s, double *v) { *v = s.f; }
__device__ __forceinline__ void scalar_as(Scalar s, i64 *v) { *v = s.i; }

// -- the module's dtype ------------------------------------------------------------------------
#ifdef EC_DTYPE
typedef DT<EC_DTYPE>::T scalar_t;
typedef DT<EC_DTYPE>::C acc_t;
#define EC_FLOATING (is_float_code<EC_DTYPE>::value)
#endif

// -- index arithmetic --------------------------------------------------------------------------
// element offsets of operand k at flat position i of a layout (row-major over L.sizes)
template <typename I>
__device__ __forceinline__ void offsets(const Layout &L, I i, int nops, i64 *off) {
    for (int k = 0; k < nops; k++) off[k] = 0;
    for (int d = L.ndim - 1; d >= 0; d--) {
        I size = (I)L.sizes[d];
        I q = i / size;
        I r = i - q * size;
        i = q;
        for (int k = 0; k < nops; k++) off[k] += (i64)r * L.strides[k][d];
    }
}

__device__ __forceinline__ i64 global_id() {
    return (i64)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ i64 global_threads() {
    return (i64)gridDim.x * blockDim.x;
}

// -- reductions within a block -------------------------------------------------------------
// a fixed tree (shuffles, then one warp over the warps' results): the same bits every run
template <typename T, typename F>
__device__ __forceinline__ T warp_reduce(T v, F f) {
    for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

// every thread of the block gets the result; `shared` holds 32 values of T
template <typename T, typename F>
__device__ T block_reduce(T v, F f, T identity, T *shared) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    v = warp_reduce(v, f);
    __syncthreads();                       // `shared` may still be read by a previous call
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = threadIdx.x < nwarps ? shared[threadIdx.x] : identity;
    if (warp == 0) v = warp_reduce(v, f);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    return shared[0];
}
