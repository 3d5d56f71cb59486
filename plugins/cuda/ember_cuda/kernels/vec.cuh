// Vector loads and stores of the flat elementwise loops (ew, ternary, activation): VEC
// elements of the module's dtype per step, one 16-byte access when the address allows
// (`aligned`, which the host checks: csrc/elementwise.c's vec_of), else VEC scalar ones.
#define VEC (16 / sizeof(scalar_t) > 8 ? 8 : 16 / sizeof(scalar_t))

template <typename T, int N> struct __align__(sizeof(T) * N) Pack { T v[N]; };

template <typename T, int N>
__device__ __forceinline__ void load_pack(const T *p, i64 i, bool aligned, acc_t *out) {
    if (aligned) {
        Pack<T, N> k = *reinterpret_cast<const Pack<T, N> *>(p + i);
#pragma unroll
        for (int j = 0; j < N; j++) out[j] = to_acc(k.v[j]);
    } else {
#pragma unroll
        for (int j = 0; j < N; j++) out[j] = to_acc(p[i + j]);
    }
}

template <int CODE, typename T, int N, typename C>
__device__ __forceinline__ void store_pack(T *p, i64 i, bool aligned, const C *in) {
    if (aligned) {
        Pack<T, N> k;
#pragma unroll
        for (int j = 0; j < N; j++) k.v[j] = Store<CODE>::from(in[j]);
        *reinterpret_cast<Pack<T, N> *>(p + i) = k;
    } else {
#pragma unroll
        for (int j = 0; j < N; j++) p[i + j] = Store<CODE>::from(in[j]);
    }
}
