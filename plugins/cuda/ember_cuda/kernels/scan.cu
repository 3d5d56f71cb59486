// Scans along the last dim (the `scan` entry, csrc/scan.c): cumsum, cumprod, cummax,
// cummin.  Values are computed as the CPU plugin computes them: integers and bool in int64
// (wrapping), float16/bfloat16 in float32, float32 in double for cumsum/cumprod (as
// PyTorch's CPU scans), float64 in double.
//
// A row is scanned by one thread, in order (short rows: csrc/scan.c's SHORT_ROW), one warp
// (rows of up to a few thousand elements, or many rows) or one block, in rounds of
// E * 32 elements per warp: element p = base + 32 j + lane, so
// loads and stores coalesce; each of the E steps is a warp-wide inclusive scan (shuffles,
// a fixed tree) combined with the warp's running total.  In a block, the warps' totals of
// a round are scanned in shared memory and prefixed to each warp's results.  The carry
// from the previous rounds comes first.  The order is fixed by the row length and the
// mode, so results are the same run to run.
//
// cummax/cummin follow PyTorch (and the CPU plugin): x replaces the running extreme when x
// is NaN, or when the extreme is not NaN and x >= (<=) it, so ties and later NaNs move the
// index forward.  As a combining rule on (value, index) summaries of consecutive ranges A
// then B: B's when B's value is NaN, or A's is not and B's >= (<=) A's, else A's; this is
// associative, which is what lets the warp trees regroup it.

#define S_CUMSUM 0
#define S_CUMPROD 1
#define S_CUMMAX 2
#define S_CUMMIN 3

#define E 8                         // steps per warp and round
#define MAX_THREADS 512             // block mode; the other modes run 256 threads per block
#define M_WARP 0                    // ScanPlan.mode: a warp per row,
#define M_BLOCK 1                   //   a block per row,
#define M_THREAD 2                  //   a thread per row

// what the host planned (csrc/scan.c's splan, the same layout)
struct ScanPlan {
    i64 rows, L;                    // rows, and their length
    i64 so, sa, si;                 // strides along the row: out, a, indices
    int mode;                       // M_*
    int pad;
};

#if EC_DTYPE == D_FLOAT32
typedef double sum_t;               // float32 sums and products accumulate in double
#else
typedef acc_t sum_t;
#endif

// the ops: T, a left identity, one element as T, combining (a's range before b's), store
template <bool PROD> struct Accumulate {
    typedef sum_t T;
    __device__ T ident() const { return PROD ? (T)1 : (T)0; }
    __device__ T make(scalar_t x, i64) const { return (T)to_acc(x); }
    __device__ T comb(T a, T b) const { return PROD ? wmul(a, b) : wadd(a, b); }
    __device__ void store(scalar_t *o, i64 *, T v) const { *o = Store<EC_DTYPE>::from(v); }
};

template <bool MAX> struct Extreme {
    typedef Pair<acc_t> T;
    __device__ T ident() const { return T{MAX ? Lim<acc_t>::lowest() : Lim<acc_t>::highest(), 0}; }
    __device__ T make(scalar_t x, i64 p) const { return T{to_acc(x), p}; }
    __device__ T comb(T a, T b) const {
        bool take = is_nan(b.v) || (!is_nan(a.v) && (MAX ? b.v >= a.v : b.v <= a.v));
        return take ? b : a;
    }
    __device__ void store(scalar_t *o, i64 *ind, T v) const {
        *o = Store<EC_DTYPE>::from(v.v);
        *ind = v.i;
    }
};

template <class Op>
__device__ __forceinline__ typename Op::T warp_scan(const Op &op, typename Op::T v, int lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        typename Op::T y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v = op.comb(y, v);
    }
    return v;
}

// one row: warp w of nw (nw > 1: the whole block, `sh` its shared totals, two rounds'
// worth so that one round's writes never meet the previous round's reads)
template <class Op>
__device__ void scan_row(const Op &op, scalar_t *out, i64 *ind, const scalar_t *a,
                         const ScanPlan &P, int w, int nw, typename Op::T (*sh)[32]) {
    typedef typename Op::T T;
    int lane = threadIdx.x & 31;
    T carry = op.ident();
    int round = 0;
    for (i64 c0 = 0; c0 < P.L; c0 += (i64)nw * 32 * E, round ^= 1) {
        i64 base = c0 + (i64)w * 32 * E + lane;
        T x[E], r[E];
#pragma unroll
        for (int j = 0; j < E; j++) {          // all loads first
            i64 p = base + 32 * j;
            x[j] = p < P.L ? op.make(a[p * P.sa], p) : op.ident();
        }
        T run = op.ident();                    // this warp's total so far in the round
#pragma unroll
        for (int j = 0; j < E; j++) {
            T incl = warp_scan(op, x[j], lane);
            r[j] = op.comb(run, incl);
            run = op.comb(run, __shfl_sync(0xffffffffu, incl, 31));
        }
        T pre;                                 // everything before this warp's elements
        if (nw > 1) {
            if (lane == 0) sh[round][w] = run;
            __syncthreads();
            if (w == 0) {
                T t = lane < nw ? sh[round][lane] : op.ident();
                t = warp_scan(op, t, lane);
                if (lane < nw) sh[round][lane] = t;
            }
            __syncthreads();
            pre = w == 0 ? carry : op.comb(carry, sh[round][w - 1]);
            carry = op.comb(carry, sh[round][nw - 1]);
        } else {
            pre = carry;
            carry = op.comb(carry, run);
        }
#pragma unroll
        for (int j = 0; j < E; j++) {
            i64 p = base + 32 * j;
            if (p < P.L) op.store(out + p * P.so, ind + p * P.si, op.comb(pre, r[j]));
        }
    }
}

// one short row, left to right
template <class Op>
__device__ void scan_serial(const Op &op, scalar_t *out, i64 *ind, const scalar_t *a,
                            const ScanPlan &P) {
    typename Op::T carry = op.ident();
    for (i64 p = 0; p < P.L; p++) {
        carry = op.comb(carry, op.make(a[p * P.sa], p));
        op.store(out + p * P.so, ind + p * P.si, carry);
    }
}

template <class Op>
__device__ void scan_body(const Op &op, scalar_t *out, i64 *ind, const scalar_t *a,
                          const Layout &Lrow, const ScanPlan &P) {
    __shared__ typename Op::T sh[2][32];
    bool block = P.mode == M_BLOCK;
    int per = P.mode == M_THREAD ? 1 : block ? (int)blockDim.x : 32;   // threads per row
    int nw = block ? blockDim.x / 32 : 1;
    int w = block ? threadIdx.x / 32 : 0;
    i64 first = block ? (i64)blockIdx.x : global_id() / per;
    i64 step = block ? (i64)gridDim.x : global_threads() / per;
    for (i64 row = first; row < P.rows; row += step) {   // uniform over the warp (block)
        i64 off[3];
        if (Lrow.index32)
            offsets<u32>(Lrow, (u32)row, 3, off);
        else
            offsets<i64>(Lrow, row, 3, off);
        if (P.mode == M_THREAD) {
            scan_serial(op, out + off[0], ind + off[2], a + off[1], P);
            continue;
        }
        scan_row(op, out + off[0], ind + off[2], a + off[1], P, w, nw, sh);
        if (block) __syncthreads();            // the next row's first round reuses sh[0]
    }
}

// -- entry points: scan_<op>; `ind` is only written by cummax/cummin ----------------------
#define EC_SCAN_KERNEL(NAME, OP)                                                         \
    extern "C" __global__ void __launch_bounds__(MAX_THREADS, 1) scan_##NAME(             \
        scalar_t *out, i64 *ind, const scalar_t *a, Layout Lrow, ScanPlan P) {           \
        scan_body(OP, out, ind, a, Lrow, P);                                             \
    }

EC_SCAN_KERNEL(cumsum, Accumulate<false>{})
EC_SCAN_KERNEL(cumprod, Accumulate<true>{})
EC_SCAN_KERNEL(cummax, Extreme<true>{})
EC_SCAN_KERNEL(cummin, Extreme<false>{})
