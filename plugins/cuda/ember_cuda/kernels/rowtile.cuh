// Row kernels (softmax.cu, rows.cu): a group of threads works on one row at a time.
//
// W, the lanes per row: 1..32 (a power of two: 32 / W rows per warp, reduced with xor
// shuffles) or 0 (the whole block, blockDim.x a multiple of 32).  A row of NI operands of
// n elements is either held in registers, P elements per lane, read once (P > 0), or
// streamed from memory on every pass (P == 0).  Lane `rank` owns the chunks of V elements
// that start at (c * group size + rank) * V: the group's accesses are coalesced, and a chunk
// is one 16-byte load when V > 1 (the host asks for V > 1 only for unit strides, n % V == 0
// and 16-byte aligned rows).  Every reduction runs in a fixed order (a lane's chunks in
// order, then a fixed butterfly, then the warps in order), so results never depend on
// scheduling, and every lane of the group gets the same bits.

#define VECW (16 / (int)sizeof(scalar_t))      // elements of one 16-byte vector
#define ACC_INF ((acc_t)CUDART_INF)
#define ACC_NAN ((acc_t)CUDART_NAN)

__device__ __forceinline__ float exp_acc(float x) { return expf(x); }
__device__ __forceinline__ double exp_acc(double x) { return exp(x); }
__device__ __forceinline__ float log_acc(float x) { return logf(x); }
__device__ __forceinline__ double log_acc(double x) { return log(x); }

template <typename T, int N> struct __align__(sizeof(T) * N) Vec { T v[N]; };

// V elements at column i (V > 1: contiguous, aligned; V == 1: element stride st)
template <int V>
__device__ __forceinline__ void load_v(const scalar_t *p, i64 i, i64 st, acc_t *x) {
    if constexpr (V > 1) {
        Vec<scalar_t, V> k = *reinterpret_cast<const Vec<scalar_t, V> *>(p + i);
#pragma unroll
        for (int j = 0; j < V; j++) x[j] = to_acc(k.v[j]);
    } else {
        x[0] = to_acc(p[i * st]);
    }
}

template <int V>
__device__ __forceinline__ void store_v(scalar_t *p, i64 i, i64 st, const acc_t *x) {
    if constexpr (V > 1) {
        Vec<scalar_t, V> k;
#pragma unroll
        for (int j = 0; j < V; j++) k.v[j] = Store<EC_DTYPE>::from(x[j]);
        *reinterpret_cast<Vec<scalar_t, V> *>(p + i) = k;
    } else {
        p[i * st] = Store<EC_DTYPE>::from(x[0]);
    }
}

// -- reductions over a group ------------------------------------------------------------------
template <typename T> struct Two { T a, b; };

__device__ __forceinline__ float shfl_x(float v, int o, int w) {
    return __shfl_xor_sync(0xffffffffu, v, o, w);
}
__device__ __forceinline__ double shfl_x(double v, int o, int w) {
    return __shfl_xor_sync(0xffffffffu, v, o, w);
}
__device__ __forceinline__ i64 shfl_x(i64 v, int o, int w) {
    return __shfl_xor_sync(0xffffffffu, v, o, w);
}
template <typename T>
__device__ __forceinline__ Two<T> shfl_x(Two<T> v, int o, int w) {
    return {shfl_x(v.a, o, w), shfl_x(v.b, o, w)};
}

struct AddOp {
    template <typename T> __device__ T operator()(T x, T y) const { return x + y; }
};
struct AddTwoOp {
    template <typename T> __device__ Two<T> operator()(Two<T> x, Two<T> y) const {
        return {x.a + y.a, x.b + y.b};
    }
};
// a NaN never wins (a softmax's shift; the NaN reaches the row through its sum)
struct MaxOp {
    template <typename T> __device__ T operator()(T x, T y) const { return y > x ? y : x; }
};
struct MinOp {
    template <typename T> __device__ T operator()(T x, T y) const { return y < x ? y : x; }
};

// Online softmax statistics (a = running max m, b = sum of exp(x - m)).  -inf elements add
// nothing; a NaN makes the sum NaN; a state with b == 0 holds no finite element.
__device__ __forceinline__ Two<acc_t> online_push(Two<acc_t> s, acc_t x) {
    if (x > s.a) {
        s.b = s.b * exp_acc(s.a - x) + (acc_t)1;
        s.a = x;
    } else if (s.a != -ACC_INF || x != x) {
        s.b += exp_acc(x - s.a);
    }
    return s;
}
struct OnlineMerge {
    __device__ Two<acc_t> operator()(Two<acc_t> x, Two<acc_t> y) const {
        if (x.b == 0) return y;
        if (y.b == 0) return x;
        acc_t m = y.a > x.a ? y.a : x.a;
        return {m, x.b * exp_acc(x.a - m) + y.b * exp_acc(y.a - m)};
    }
};

// a row's threads: W lanes of a warp, or (W == 0) the whole block
template <int W> struct Group {
    static_assert(W == 0 || (W <= 32 && (W & (W - 1)) == 0), "lanes per row");
    static constexpr int M = W ? W : 1;           // no division by 0 in the W == 0 branches
    static __device__ __forceinline__ int size() { return W ? W : (int)blockDim.x; }
    static __device__ __forceinline__ int rank() {
        return W ? (int)(threadIdx.x & (M - 1)) : (int)threadIdx.x;
    }
    static __device__ __forceinline__ int slot() { return W ? (int)(threadIdx.x / M) : 0; }
    static __device__ __forceinline__ int per_block() { return W ? (int)(blockDim.x / M) : 1; }
};

// f over the group, every lane gets the result: a butterfly within the warp (or the W
// lanes), then (W == 0) each warp's value through shared memory, combined in warp order
template <int W, typename T, typename F>
__device__ __forceinline__ T group_allreduce(T v, F f) {
    constexpr int LANES = W ? W : 32;
#pragma unroll
    for (int o = LANES / 2; o > 0; o >>= 1) v = f(v, shfl_x(v, o, LANES));
    if constexpr (W == 0) {
        __shared__ T part[32];
        int nw = blockDim.x >> 5;
        __syncthreads();                  // `part` may still be read by a previous call
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
        __syncthreads();
        v = part[0];
        for (int i = 1; i < nw; i++) v = f(v, part[i]);
    }
    return v;
}

// f(row, live) for this group's rows.  All the groups of a warp (of the block, W == 0) take
// the same number of turns so that their shuffles and barriers line up: a group past the
// last row gets live == false (and the last row's index) and must only join reductions.
template <int W, typename F>
__device__ __forceinline__ void for_rows(i64 rows, F f) {
    const i64 per = Group<W>::per_block();
    for (i64 base = (i64)blockIdx.x * per; base < rows; base += (i64)gridDim.x * per) {
        i64 r = base + Group<W>::slot();
        f(r < rows ? r : rows - 1, r < rows);
    }
}

// -- a row of NI operands ------------------------------------------------------------------------
template <int W, int P, int V, int NI>
struct Row {
    static_assert(P == 0 || P % V == 0, "whole vectors per lane");
    const scalar_t *p[NI];
    i64 st[NI];                          // element strides (1 when V > 1)
    i64 n;                               // 0: a dead row (nothing read or written)
    acc_t v[NI][P > 0 ? P : 1];

    __device__ __forceinline__ i64 start(int c) const {
        return ((i64)c * Group<W>::size() + Group<W>::rank()) * V;
    }

    __device__ __forceinline__ void load() {
        if constexpr (P > 0) {
#pragma unroll
            for (int c = 0; c < P / V; c++) {
                i64 i = start(c);
                if (i < n) {
#pragma unroll
                    for (int k = 0; k < NI; k++) load_v<V>(p[k], i, st[k], &v[k][c * V]);
                }
            }
        }
    }

    // f(x, i) for each of this lane's chunks in order; x[k][j] is operand k at column i + j
    template <typename F> __device__ __forceinline__ void each(F f) {
        acc_t x[NI][V];
        if constexpr (P > 0) {
#pragma unroll
            for (int c = 0; c < P / V; c++) {
                i64 i = start(c);
                if (i < n) {
#pragma unroll
                    for (int k = 0; k < NI; k++)
#pragma unroll
                        for (int j = 0; j < V; j++) x[k][j] = v[k][c * V + j];
                    f(x, i);
                }
            }
        } else {
            const i64 step = (i64)Group<W>::size() * V;
            for (i64 i = (i64)Group<W>::rank() * V; i < n; i += step) {
#pragma unroll
                for (int k = 0; k < NI; k++) load_v<V>(p[k], i, st[k], x[k]);
                f(x, i);
            }
        }
    }

    // operand 0 in registers, x = f(x) (P > 0 only)
    template <typename F> __device__ __forceinline__ void map(F f) {
        static_assert(P > 0, "map needs the row in registers");
#pragma unroll
        for (int c = 0; c < P / V; c++) {
            if (start(c) < n) {
#pragma unroll
                for (int j = 0; j < V; j++) v[0][c * V + j] = f(v[0][c * V + j]);
            }
        }
    }

    // acc = f(acc, x, j, column) over the lane's elements, then merged over the group
    template <typename T, typename F, typename M>
    __device__ __forceinline__ T reduce(T acc, F f, M merge) {
        each([&](acc_t (&x)[NI][V], i64 i) {
#pragma unroll
            for (int j = 0; j < V; j++) acc = f(acc, x, j, i + j);
        });
        return group_allreduce<W>(acc, merge);
    }

    // the group's sum of g(x, j, column)
    template <typename G> __device__ __forceinline__ acc_t sum(G g) {
        return reduce((acc_t)0, [&](acc_t s, acc_t (&x)[NI][V], int j, i64 col) {
            return s + g(x, j, col);
        }, AddOp());
    }

    __device__ __forceinline__ acc_t max0() {
        return reduce(-ACC_INF, [](acc_t m, acc_t (&x)[NI][V], int j, i64) {
            return x[0][j] > m ? x[0][j] : m;
        }, MaxOp());
    }

    // (max, sum of exp(x - max)) of operand 0 in one pass
    __device__ __forceinline__ Two<acc_t> online0() {
        return reduce(Two<acc_t>{-ACC_INF, (acc_t)0},
                      [](Two<acc_t> s, acc_t (&x)[NI][V], int j, i64) {
                          return online_push(s, x[0][j]);
                      }, OnlineMerge());
    }

    // out[column] = f(x, j, column) (out's element stride ost; 1 when V > 1)
    template <typename F> __device__ __forceinline__ void write(scalar_t *out, i64 ost, F f) {
        each([&](acc_t (&x)[NI][V], i64 i) {
            acc_t r[V];
#pragma unroll
            for (int j = 0; j < V; j++) r[j] = f(x, j, i + j);
            store_v<V>(out, i, ost, r);
        });
    }
};

// log(sum(exp(x))) of operand 0: the max first when the row is in registers, else online.
// A NaN, a +inf, or a row of only -inf gives NaN (as max-shifted arithmetic does).
template <int W, int P, int V, int NI>
__device__ __forceinline__ acc_t row_lse(Row<W, P, V, NI> &row) {
    if constexpr (P > 0) {
        acc_t m = row.max0();
        acc_t s = row.sum([&](acc_t (&x)[NI][V], int j, i64) { return exp_acc(x[0][j] - m); });
        return m + log_acc(s);
    } else {
        Two<acc_t> s = row.online0();
        return (s.b > 0 && s.a != ACC_INF) ? s.a + log_acc(s.b) : ACC_NAN;
    }
}

// the vector width a kernel built for (P, VEC) uses; the host mirrors it
#define ROW_V(P, VEC) (((VEC) && ((P) == 0 || (P) >= VECW)) ? VECW : 1)
