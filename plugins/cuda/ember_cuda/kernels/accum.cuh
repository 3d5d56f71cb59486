// Accumulation helpers of the reduce and scan families (rendered after common.cuh): the
// compute types' arithmetic (integers wrap through uint64, as the CPU plugin's), NaN
// tests, their extremes, and a (value, position) pair that goes through the warp shuffles
// and cache-global loads like a scalar, so common.cuh's warp_reduce/block_reduce take it.

__device__ __forceinline__ float wadd(float x, float y) { return x + y; }
__device__ __forceinline__ double wadd(double x, double y) { return x + y; }
__device__ __forceinline__ i64 wadd(i64 x, i64 y) { return (i64)((u64)x + (u64)y); }
__device__ __forceinline__ float wmul(float x, float y) { return x * y; }
__device__ __forceinline__ double wmul(double x, double y) { return x * y; }
__device__ __forceinline__ i64 wmul(i64 x, i64 y) { return (i64)((u64)x * (u64)y); }

template <typename T> __device__ __forceinline__ bool is_nan(T x) { return x != x; }

template <typename T> struct Lim;
template <> struct Lim<float> {
    __device__ static float lowest() { return -CUDART_INF_F; }
    __device__ static float highest() { return CUDART_INF_F; }
};
template <> struct Lim<double> {
    __device__ static double lowest() { return -CUDART_INF; }
    __device__ static double highest() { return CUDART_INF; }
};
template <> struct Lim<i64> {
    __device__ static i64 lowest() { return (i64)(1ULL << 63); }
    __device__ static i64 highest() { return (i64)((1ULL << 63) - 1); }
};

// a value and its position along the reduced or scanned elements
template <typename T> struct Pair {
    T v;
    i64 i;
};

template <typename T>
__device__ __forceinline__ Pair<T> __shfl_down_sync(unsigned mask, Pair<T> p, int o) {
    return Pair<T>{__shfl_down_sync(mask, p.v, o), __shfl_down_sync(mask, p.i, o)};
}
template <typename T>
__device__ __forceinline__ Pair<T> __shfl_up_sync(unsigned mask, Pair<T> p, int o) {
    return Pair<T>{__shfl_up_sync(mask, p.v, o), __shfl_up_sync(mask, p.i, o)};
}
template <typename T>
__device__ __forceinline__ Pair<T> __shfl_sync(unsigned mask, Pair<T> p, int lane) {
    return Pair<T>{__shfl_sync(mask, p.v, lane), __shfl_sync(mask, p.i, lane)};
}

// loads past L1: partials other blocks wrote during this kernel
template <typename T> __device__ __forceinline__ T load_cg(const T *p) { return __ldcg(p); }
template <typename T> __device__ __forceinline__ Pair<T> load_cg(const Pair<T> *p) {
    return Pair<T>{__ldcg(&p->v), __ldcg(&p->i)};
}
