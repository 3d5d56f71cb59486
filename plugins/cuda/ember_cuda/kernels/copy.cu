// Copies with casts, from this module's dtype (EC_DTYPE) to each of the ten: out = a,
// strided on both sides.  A value passes through the source's compute type; float64 goes
// straight to float16/bfloat16 (one rounding), the integers wrap, bool is "nonzero".

template <int OUT, typename I>
__device__ __forceinline__ void cast_loop(typename DT<OUT>::T *out, const scalar_t *a, i64 n,
                                          int flat, const Layout &L) {
    i64 off[2];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        if (flat) {
            off[0] = off[1] = i;
        } else {
            offsets<I>(L, (I)i, 2, off);
        }
        out[off[0]] = Store<OUT>::from(to_acc(a[off[1]]));
    }
}

#define EC_CAST_KERNEL(NAME, OUT)                                                        \
    extern "C" __global__ void NAME(DT<OUT>::T *out, const scalar_t *a, i64 n, int flat, \
                                    Layout L) {                                          \
        if (flat || L.index32)                                                           \
            cast_loop<OUT, u32>(out, a, n, flat, L);                                     \
        else                                                                             \
            cast_loop<OUT, i64>(out, a, n, flat, L);                                     \
    }

EC_CAST_KERNEL(copy_to_0, D_UINT8)
EC_CAST_KERNEL(copy_to_1, D_INT8)
EC_CAST_KERNEL(copy_to_2, D_INT16)
EC_CAST_KERNEL(copy_to_3, D_INT32)
EC_CAST_KERNEL(copy_to_4, D_INT64)
EC_CAST_KERNEL(copy_to_5, D_FLOAT16)
EC_CAST_KERNEL(copy_to_6, D_FLOAT32)
EC_CAST_KERNEL(copy_to_7, D_FLOAT64)
EC_CAST_KERNEL(copy_to_11, D_BOOL)
EC_CAST_KERNEL(copy_to_15, D_BFLOAT16)
