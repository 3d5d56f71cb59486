// The index family's search entry (csrc/index.c; abi.h has the contract): binary search
// along the last dim of `sorted` (searchsorted) and multinomial draws from rows of weights.
// Out is int64, or int32 when `out32`.
#define ERR_WEIGHT 2              // the error slot's codes (ec_sync_errors)
#define ERR_SUM 3
#define MN_THREADS 256            // threads per block of multinomial_rows (the host's launch)

__device__ __forceinline__ void report(i64 *err, i64 code) {
    atomicCAS((u64 *)err, 0ull, (u64)code);
}

__device__ __forceinline__ void store_index(void *out, i64 off, int out32, i64 v) {
    if (out32)
        ((int *)out)[off] = (int)v;
    else
        ((i64 *)out)[off] = v;
}

// x < y with NaN the largest, as torch.sort orders (for integers: x < y)
__device__ __forceinline__ bool lt(acc_t x, acc_t y) {
    return x < y || (y != y && x == x);
}

// -- searchsorted: one thread per value ------------------------------------------------------
// The layout is over values' shape with operands (out, sorted with stride 0 along the last
// dim, values): off[1] is the start of the value's row of `sorted` (m elements, stride ss).
template <typename I>
__device__ void search(void *out, const scalar_t *sorted, const scalar_t *values, i64 n, i64 m,
                       i64 ss, int right, int out32, const Layout &L) {
    i64 off[3];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        offsets<I>(L, (I)i, 3, off);
        const scalar_t *row = sorted + off[1];
        acc_t v = to_acc(values[off[2]]);
        i64 lo = 0, hi = m;
        while (lo < hi) {             // the first i with row[i] > v (right) / >= v (left)
            i64 mid = lo + (hi - lo) / 2;
            acc_t x = to_acc(row[mid * ss]);
            if (right ? lt(v, x) : !lt(x, v))
                hi = mid;
            else
                lo = mid + 1;
        }
        store_index(out, off[0], out32, lo);
    }
}

extern "C" __global__ void search_sorted(void *out, const scalar_t *sorted,
                                         const scalar_t *values, i64 n, i64 m, i64 ss, int right,
                                         int out32, Layout L) {
    if (L.index32)
        search<int>(out, sorted, values, n, m, ss, right, out32, L);
    else
        search<i64>(out, sorted, values, n, m, ss, right, out32, L);
}

// -- multinomial: one block per row ---------------------------------------------------------
// The row's m weights are cut into MN_THREADS chunks of `cl` consecutive weights; thread k
// sums chunk k in order (S_k), checks its weights, and thread 0 chains the sums in order:
// P_0 = 0, P_{k+1} = P_k + S_k.  The running sum at weight i of chunk k is P_k + (the sum
// of the chunk's weights up to i, in order), so it ends at exactly P_{k+1}: a
// non-decreasing cdf whose total is P_C.  A draw u picks the first i with cdf_i > u * P_C:
// the chunk by bisection over P, then the weight by walking the chunk.  Zero weights are
// never picked (their cdf equals the one before); with m <= MN_THREADS each chunk is one
// weight and the cdf is the CPU plugin's running sum bit for bit.  Every row is checked,
// even when n is 0.  The layout is over the rows (operands out, weights, uniforms).
extern "C" __global__ void __launch_bounds__(MN_THREADS)
multinomial_rows(void *out, const scalar_t *w, const scalar_t *u, i64 rows, i64 m, i64 n,
                 i64 sw, i64 su, i64 so, int out32, i64 *err, Layout L) {
    __shared__ double prefix[MN_THREADS + 1];
    const int C = MN_THREADS, k = threadIdx.x;
    const i64 cl = (m + C - 1) / C;
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        i64 off[3];
        offsets<i64>(L, r, 3, off);
        const scalar_t *row = w + off[1];
        const i64 lo = k * cl, hi = lo + cl < m ? lo + cl : m;
        double s = 0;
        bool bad = false;
        for (i64 i = lo; i < hi; i++) {
            double x = (double)to_acc(row[i * sw]);
            bad |= !(x >= 0) || x == CUDART_INF;
            s += x;
        }
        __syncthreads();              // the previous row's draws are done with `prefix`
        prefix[k + 1] = s;
        bad = __syncthreads_or(bad);
        if (k == 0) {
            prefix[0] = 0;
            for (int c = 0; c < C; c++) prefix[c + 1] = prefix[c] + prefix[c + 1];
        }
        __syncthreads();
        const double total = prefix[C];
        if (bad || !(total > 0)) {
            if (k == 0) report(err, bad ? ERR_WEIGHT : ERR_SUM);
            continue;
        }
        for (i64 j = k; j < n; j += C) {
            const double target = (double)to_acc(u[off[2] + j * su]) * total;
            int a = 0, b = C;         // the first chunk c with P_{c+1} > target
            while (a < b) {
                int mid = (a + b) / 2;
                if (prefix[mid + 1] > target)
                    b = mid;
                else
                    a = mid + 1;
            }
            i64 pick = m - 1;         // no cdf above the target (rounding): the CPU's choice
            if (a < C) {
                const i64 start = a * cl, end = start + cl < m ? start + cl : m;
                double acc = 0;
                for (i64 i = start; i < end; i++) {
                    acc += (double)to_acc(row[i * sw]);
                    if (prefix[a] + acc > target) {
                        pick = i;
                        break;
                    }
                }
            }
            store_index(out, off[0] + j * so, out32, pick);
        }
    }
}
