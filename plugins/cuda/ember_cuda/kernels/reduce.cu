// Reductions over the trailing dims of `a` (the `reduce` entry, csrc/reduce.c): sum, mean,
// prod, max, min, argmax, argmin, computed in acc_t as the CPU plugin computes.
//
// Which element meets which accumulator, and the trees that combine them, depend only on
// the shapes, the strides and the launch configuration (itself a function of the shapes
// and the device), never on timing or on the data's alignment: results are bitwise
// reproducible.  Two layouts (the host picks one; its comments say how):
// * inner (the reduced elements of an output are the fast-moving ones): a warp (short
//   reductions) or a block reduces one output.  The reduced range is cut into vectors of
//   VEC elements; thread t of G owns vectors t, t + G, ..., element j of a vector feeding
//   the thread's accumulator j % N (N = VEC; 4 at most on strided views; 1 for arg ops);
//   the N accumulators, then the threads, combine through fixed trees.  A vector is one
//   16-byte load where the memory allows, else VEC scalar loads of the same elements
//   (unit-stride reductions run a kernel of their own, `inner`; any other reduced view
//   runs `strided`, which walks runs of the innermost dim).  Few long reductions are
//   split across S blocks (blockIdx.y) over contiguous ranges of vectors; each writes a
//   partial and the block that finishes last (a ticket counter) combines the S partials
//   in a fixed order.
// * outer (the kept dims are the fast-moving ones, e.g. a column sum): thread (tx, ty) of
//   a block reduces output tx over the reduced elements ty, ty + BY, ... (reads coalesce
//   across tx), then the BY partials of a column combine in a fixed tree; long
//   reductions split across blockIdx.y the same way.
// Tickets are zero before a kernel starts and the finishing block puts them back to zero.

#define R_SUM 0
#define R_MEAN 1
#define R_PROD 2
#define R_MAX 3
#define R_MIN 4

#define THREADS 256             // per block, every reduce kernel; 4 blocks fit an SM (the
#define MIN_BLOCKS 4            //   host sizes one-wave grids by it): at most 64 registers
#define UNROLL 4                // vectors in flight per thread (inner, contiguous)
#define OUTER_UNROLL 8          // elements in flight per thread (outer)
#define VEC (16 / sizeof(scalar_t) > 8 ? 8 : (int)(16 / sizeof(scalar_t)))

// what the host planned (csrc/reduce.c's rplan, the same layout)
struct Plan {
    i64 K;                      // outputs
    i64 R;                      // reduced elements per output
    i64 chunk;                  // per split: vectors (inner) or elements (outer)
    void *ws;                   // the partials of split reductions
    unsigned *ticket;           // split reductions: per output (inner) or per blockIdx.x (outer)
    int S;                      // splits per reduction (gridDim.y)
    int warp;                   // inner: one warp per output, else one block
    int op;
    int bx;                     // outer: outputs per block (BX)
};

// -- the ops: accumulator type T, identity, combining (a's elements come before b's), and
//    the final store (mean divides there: an empty mean is 0 / 0) --------------------------
template <int OP> struct ValueOp {
    typedef acc_t T;
    static const int NACC = VEC;             // accumulators per thread: independent chains
    bool mean;
    __device__ T ident() const {
        if (OP == R_PROD) return (T)1;
        if (OP == R_MAX) return Lim<T>::lowest();
        if (OP == R_MIN) return Lim<T>::highest();
        return (T)0;
    }
    // max/min keep the first NaN: a when it is NaN or beyond b, else b (NaN when b is)
    __device__ T comb(T a, T b) const {
        if (OP == R_PROD) return wmul(a, b);
        if (OP == R_MAX) return (a > b || is_nan(a)) ? a : b;
        if (OP == R_MIN) return (a < b || is_nan(a)) ? a : b;
        return wadd(a, b);
    }
    __device__ T fold(T acc, acc_t x, i64) const { return comb(acc, x); }
    __device__ void store(void *out, i64 off, T v, i64 R) const {
        if constexpr (EC_FLOATING) {
            if (mean) v = v / (T)R;
        }
        ((scalar_t *)out)[off] = Store<EC_DTYPE>::from(v);
    }
};

// argmax/argmin: the extreme with the smallest position; a NaN beats every number.  The
// order of combining does not matter (positions break ties), so any tree gives the same.
template <bool MAX> struct ArgOp {
    typedef Pair<acc_t> T;
    static const int NACC = 1;
    __device__ T ident() const {
        return T{MAX ? Lim<acc_t>::lowest() : Lim<acc_t>::highest(), Lim<i64>::highest()};
    }
    __device__ T comb(T a, T b) const {
        bool an = is_nan(a.v), bn = is_nan(b.v), take;
        if (an || bn)
            take = bn && (!an || b.i < a.i);
        else
            take = (MAX ? b.v > a.v : b.v < a.v) || (b.v == a.v && b.i < a.i);
        return take ? b : a;
    }
    __device__ T fold(T acc, acc_t x, i64 e) const { return comb(acc, T{x, e}); }
    __device__ void store(void *out, i64 off, T v, i64) const { ((i64 *)out)[off] = v.i; }
};

// -- element addressing ----------------------------------------------------------------------
template <typename T, int N> struct __align__(sizeof(T) * N) Vec { T v[N]; };

typedef Vec<scalar_t, VEC> vec_t;

// VEC elements from p, as stored: one load when `aligned`, else one each (the same values)
__device__ __forceinline__ vec_t load_vec(const scalar_t *p, bool aligned) {
    if (aligned) return *reinterpret_cast<const vec_t *>(p);
    vec_t x;
#pragma unroll
    for (int j = 0; j < VEC; j++) x.v[j] = p[j];
    return x;
}

__device__ __forceinline__ bool vec_aligned(const scalar_t *p) {
    return ((u64)p % (VEC * sizeof(scalar_t))) == 0;
}

// offset of reduced element e (row-major over L, operand 0) and its index along L's
// innermost dim
template <typename I>
__device__ __forceinline__ i64 red_offset_t(const Layout &L, I e, i64 *inner) {
    i64 off = 0;
    *inner = 0;
    for (int d = L.ndim - 1; d >= 0; d--) {
        I size = (I)L.sizes[d];
        I q = e / size;
        I r = e - q * size;
        e = q;
        if (d == L.ndim - 1) *inner = (i64)r;
        off += (i64)r * L.strides[0][d];
    }
    return off;
}

__device__ __forceinline__ i64 red_offset(const Layout &L, i64 e, i64 *inner) {
    return L.index32 ? red_offset_t<u32>(L, (u32)e, inner) : red_offset_t<i64>(L, e, inner);
}

// offsets of output k in out (off[0]) and a (off[1])
__device__ __forceinline__ void kept_offsets(const Layout &K, i64 k, i64 *off) {
    if (K.index32)
        offsets<u32>(K, (u32)k, 2, off);
    else
        offsets<i64>(K, k, 2, off);
}

// -- inner layout ---------------------------------------------------------------------------
// element j of a vector feeds accumulator j % N
template <int N, class Op>
__device__ __forceinline__ void fold_vec(const Op &op, typename Op::T *acc, const vec_t &x,
                                         i64 e0) {
#pragma unroll
    for (int j = 0; j < VEC; j++) acc[j % N] = op.fold(acc[j % N], to_acc(x.v[j]), e0 + j);
}

// vectors v0 + t, v0 + t + G, ... < v1 of one output whose R reduced elements are
// contiguous from `row`; UNROLL vectors are loaded before any is folded
template <int N, class Op>
__device__ void inner_contig(const Op &op, typename Op::T *acc, const scalar_t *row, i64 R,
                             i64 v0, i64 v1, int t, int G) {
    bool aligned = vec_aligned(row);
    i64 nfull = R / VEC, vend = v1 < nfull ? v1 : nfull;
    i64 v = v0 + t;
    for (; v + (i64)(UNROLL - 1) * G < vend; v += (i64)UNROLL * G) {
        vec_t x[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) x[u] = load_vec(row + (v + (i64)u * G) * VEC, aligned);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) fold_vec<N>(op, acc, x[u], (v + (i64)u * G) * VEC);
    }
    for (; v < v1; v += G) {
        if (v < nfull) {
            fold_vec<N>(op, acc, load_vec(row + v * VEC, aligned), v * VEC);
        } else {                                   // the last, partial vector
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                i64 e = v * VEC + j;
                if (e < R) acc[j % N] = op.fold(acc[j % N], to_acc(row[e]), e);
            }
        }
    }
}

// the same vectors over a strided reduced layout: runs along the innermost dim are walked
// by its stride, an index decomposed again where a run ends; a vector inside one aligned
// unit-stride run is one load
template <int N, class Op>
__device__ void inner_strided(const Op &op, typename Op::T *acc, const scalar_t *row,
                              const Layout &Lr, i64 R, i64 v0, i64 v1, int t, int G) {
    int last = Lr.ndim - 1;
    i64 n_in = Lr.sizes[last], s_in = Lr.strides[0][last];
    for (i64 v = v0 + t; v < v1; v += G) {
        i64 e0 = v * VEC, in;
        i64 off = red_offset(Lr, e0, &in);
        if (s_in == 1 && in + VEC <= n_in && vec_aligned(row + off)) {
            fold_vec<N>(op, acc, load_vec(row + off, true), e0);
            continue;
        }
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            i64 e = e0 + j;
            if (e < R) {
                acc[j % N] = op.fold(acc[j % N], to_acc(row[off]), e);
                if (++in == n_in) {
                    if (e + 1 < R) off = red_offset(Lr, e + 1, &in);
                } else {
                    off += s_in;
                }
            }
        }
    }
}

// the N accumulators of a thread, pairwise
template <int N, class Op>
__device__ __forceinline__ typename Op::T fold_tree(const Op &op, typename Op::T *acc) {
#pragma unroll
    for (int h = N / 2; h > 0; h >>= 1) {
#pragma unroll
        for (int j = 0; j < h; j++) acc[j] = op.comb(acc[j], acc[j + h]);
    }
    return acc[0];
}

// CONTIG: the reduced elements of each output are one unit-stride run (the host checks);
// the strided walk keeps at most 4 accumulators (registers for its index arithmetic)
template <bool CONTIG, class Op>
__device__ void inner_body(const Op &op, void *out, const scalar_t *a, const Layout &K,
                           const Layout &Lr, const Plan &P) {
    typedef typename Op::T T;
    constexpr int N = CONTIG || Op::NACC < 4 ? Op::NACC : 4;
    __shared__ T sh[32];
    __shared__ int last;
    auto comb = [&](T x, T y) { return op.comb(x, y); };
    i64 nv = (P.R + VEC - 1) / VEC;
    int G = P.warp ? 32 : (int)blockDim.x;
    int t = P.warp ? (int)(threadIdx.x & 31) : (int)threadIdx.x;
    i64 first = P.warp ? global_id() / 32 : (i64)blockIdx.x;
    i64 step = P.warp ? global_threads() / 32 : (i64)gridDim.x;
    int s = blockIdx.y;
    i64 v0 = s * P.chunk, v1 = v0 + P.chunk < nv ? v0 + P.chunk : nv;
    for (i64 k = first; k < P.K; k += step) {      // uniform over the warp (block)
        i64 off[2];
        kept_offsets(K, k, off);
        T acc[N];
#pragma unroll
        for (int j = 0; j < N; j++) acc[j] = op.ident();
        if (CONTIG)
            inner_contig<N>(op, acc, a + off[1], P.R, v0, v1, t, G);
        else
            inner_strided<N>(op, acc, a + off[1], Lr, P.R, v0, v1, t, G);
        T v = fold_tree<N>(op, acc);
        if (P.warp) {
            v = warp_reduce(v, comb);
            if (t == 0) op.store(out, off[0], v, P.R);
            continue;
        }
        v = block_reduce(v, comb, op.ident(), sh);
        if (P.S == 1) {
            if (t == 0) op.store(out, off[0], v, P.R);
            continue;
        }
        // split s of output k (the host launched exactly K blocks along x)
        T *ws = (T *)P.ws + k * P.S;
        if (t == 0) {
            ws[s] = v;
            __threadfence();
            last = atomicAdd(&P.ticket[k], 1u) == (unsigned)P.S - 1;
        }
        __syncthreads();
        if (last) {
            __threadfence();
            T r = op.ident();
            for (int i = t; i < P.S; i += G) r = op.comb(r, load_cg(ws + i));
            r = block_reduce(r, comb, op.ident(), sh);
            if (t == 0) {
                op.store(out, off[0], r, P.R);
                P.ticket[k] = 0;
            }
        }
    }
}

// -- outer layout ---------------------------------------------------------------------------
// elements e, e + step, ... < r1 of one output, in order; OUTER_UNROLL loads in flight
template <class Op>
__device__ typename Op::T outer_fold(const Op &op, const scalar_t *p, const Layout &Lr, i64 e,
                                     i64 r1, int step) {
    typename Op::T acc = op.ident();
    if (Lr.ndim <= 1) {
        i64 st = Lr.ndim ? Lr.strides[0][0] : 0;
        for (; e + (OUTER_UNROLL - 1) * (i64)step < r1; e += OUTER_UNROLL * (i64)step) {
            scalar_t x[OUTER_UNROLL];
#pragma unroll
            for (int u = 0; u < OUTER_UNROLL; u++) x[u] = p[(e + (i64)u * step) * st];
#pragma unroll
            for (int u = 0; u < OUTER_UNROLL; u++)
                acc = op.fold(acc, to_acc(x[u]), e + (i64)u * step);
        }
        for (; e < r1; e += step) acc = op.fold(acc, to_acc(p[e * st]), e);
    } else {
        for (; e < r1; e += step) {
            i64 in;
            acc = op.fold(acc, to_acc(p[red_offset(Lr, e, &in)]), e);
        }
    }
    return acc;
}

// the BY values of each column tx, pairwise over ty; every thread gets its column's
template <class Op>
__device__ typename Op::T column_tree(const Op &op, typename Op::T v, typename Op::T *sh,
                                      int tx, int ty, int BX, int BY) {
    __syncthreads();                       // `sh` may still be read by a previous call
    sh[ty * BX + tx] = v;
    __syncthreads();
    for (int h = BY / 2; h > 0; h >>= 1) {
        if (ty < h) sh[ty * BX + tx] = op.comb(sh[ty * BX + tx], sh[(ty + h) * BX + tx]);
        __syncthreads();
    }
    return sh[tx];
}

template <class Op>
__device__ void outer_body(const Op &op, void *out, const scalar_t *a, const Layout &K,
                           const Layout &Lr, const Plan &P) {
    typedef typename Op::T T;
    __shared__ T sh[THREADS];
    __shared__ int last;
    int BX = P.bx, BY = blockDim.x / P.bx;
    int tx = threadIdx.x % BX, ty = threadIdx.x / BX;
    int s = blockIdx.y;
    i64 r0 = s * P.chunk, r1 = r0 + P.chunk < P.R ? r0 + P.chunk : P.R;
    for (i64 kb = (i64)blockIdx.x * BX; kb < P.K; kb += (i64)gridDim.x * BX) {
        i64 k = kb + tx, off[2] = {0, 0};
        bool valid = k < P.K;
        T acc = op.ident();
        if (valid) {
            kept_offsets(K, k, off);
            acc = outer_fold(op, a + off[1], Lr, r0 + ty, r1, BY);
        }
        acc = column_tree(op, acc, sh, tx, ty, BX, BY);
        if (P.S == 1) {
            if (ty == 0 && valid) op.store(out, off[0], acc, P.R);
            continue;
        }
        // split s of the columns of this block (the host launched no x-loop)
        T *ws = (T *)P.ws;
        if (ty == 0 && valid) ws[s * P.K + k] = acc;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) last = atomicAdd(&P.ticket[blockIdx.x], 1u) == (unsigned)P.S - 1;
        __syncthreads();
        if (last) {
            __threadfence();
            T r = op.ident();
            if (valid)
                for (int i = ty; i < P.S; i += BY) r = op.comb(r, load_cg(ws + i * P.K + k));
            r = column_tree(op, r, sh, tx, ty, BX, BY);
            if (ty == 0 && valid) op.store(out, off[0], r, P.R);
            if (threadIdx.x == 0) P.ticket[blockIdx.x] = 0;
        }
    }
}

// -- entry points: reduce_{inner,strided,outer}_<op> (mean runs sum's); inner is the
//    contiguous case of strided, a kernel of its own so that it keeps its registers -----
#define EC_REDUCE_KERNEL(LAYOUT, NAME, BODY)                                                  \
    extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) reduce_##LAYOUT##_##NAME( \
        void *out, const scalar_t *a, Layout K, Layout Lr, Plan P) {                          \
        BODY;                                                                                 \
    }
#define EC_REDUCE_KERNELS(NAME, OP)                                             \
    EC_REDUCE_KERNEL(inner, NAME, inner_body<true>(OP, out, a, K, Lr, P))       \
    EC_REDUCE_KERNEL(strided, NAME, inner_body<false>(OP, out, a, K, Lr, P))    \
    EC_REDUCE_KERNEL(outer, NAME, outer_body(OP, out, a, K, Lr, P))

EC_REDUCE_KERNELS(sum, ValueOp<R_SUM>{P.op == R_MEAN})
EC_REDUCE_KERNELS(prod, ValueOp<R_PROD>{false})
EC_REDUCE_KERNELS(max, ValueOp<R_MAX>{false})
EC_REDUCE_KERNELS(min, ValueOp<R_MIN>{false})
EC_REDUCE_KERNELS(argmax, ArgOp<true>{})
EC_REDUCE_KERNELS(argmin, ArgOp<false>{})
