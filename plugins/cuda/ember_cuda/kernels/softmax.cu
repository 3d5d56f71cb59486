// The softmax family along the last dim (abi.h EMBER_SOFTMAX...): softmax, log_softmax and
// their backward ops, over rows of any strides (rowtile.cuh holds the row machinery).
// Rows up to 1024 elements run a warp (or 1..16 lanes) per row with the row in registers;
// up to 8192 a block per row, still in registers; longer rows stream from memory (the
// forward ops then get max and sum in one online pass).  float16/bfloat16 compute in
// float32; softmax scales by 1 / sum, as the CPU plugin does.  out may alias a: every
// element is read before it is written, by its own lane.

#define OP_SOFTMAX 0
#define OP_LOG_SOFTMAX 1
#define OP_SOFTMAX_BACKWARD 2
#define OP_LOG_SOFTMAX_BACKWARD 3

// element offsets of row r in out, a and b (the leading dims' Layout, coalesced)
__device__ __forceinline__ void row_offsets(const Layout &L, i64 r, i64 *off) {
    if (L.ndim <= 1) {
        for (int k = 0; k < 3; k++) off[k] = L.ndim ? r * L.strides[k][0] : 0;
    } else {
        offsets<i64>(L, r, 3, off);
    }
}

// out = softmax(a) or log_softmax(a): m = max(a), s = sum(exp(a - m))
template <int W, int P, int V>
__device__ __forceinline__ void softmax_fwd(scalar_t *out, i64 so, const scalar_t *a, i64 sa,
                                            i64 n, bool log) {
    typedef acc_t X[1][V];
    Row<W, P, V, 1> row;
    row.p[0] = a;
    row.st[0] = sa;
    row.n = n;
    row.load();
    acc_t m, s;
    if constexpr (P > 0) {
        m = row.max0();
        if (!log) {                       // exp once, in registers
            row.map([&](acc_t x) { return exp_acc(x - m); });
            acc_t rs = (acc_t)1 / row.sum([](X &x, int j, i64) { return x[0][j]; });
            row.write(out, so, [&](X &x, int j, i64) { return x[0][j] * rs; });
            return;
        }
        s = row.sum([&](X &x, int j, i64) { return exp_acc(x[0][j] - m); });
    } else {
        Two<acc_t> ms = row.online0();
        m = ms.a;
        s = m == ACC_INF ? ACC_NAN : ms.b;          // an +inf makes the row NaN
    }
    if (log) {
        acc_t ls = log_acc(s);
        row.write(out, so, [&](X &x, int j, i64) { return (x[0][j] - m) - ls; });
    } else {
        acc_t rs = (acc_t)1 / s;
        row.write(out, so, [&](X &x, int j, i64) { return exp_acc(x[0][j] - m) * rs; });
    }
}

// g = grad_output, y = output: softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) sum(g)
template <int W, int P, int V>
__device__ __forceinline__ void softmax_bwd(scalar_t *out, i64 so, const scalar_t *g, i64 sg,
                                            const scalar_t *y, i64 sy, i64 n, bool log) {
    typedef acc_t X[2][V];
    Row<W, P, V, 2> row;
    row.p[0] = g;
    row.p[1] = y;
    row.st[0] = sg;
    row.st[1] = sy;
    row.n = n;
    row.load();
    if (!log) {
        acc_t s = row.sum([](X &x, int j, i64) { return x[0][j] * x[1][j]; });
        row.write(out, so, [&](X &x, int j, i64) { return x[1][j] * (x[0][j] - s); });
    } else {
        acc_t s = row.sum([](X &x, int j, i64) { return x[0][j]; });
        row.write(out, so, [&](X &x, int j, i64) { return x[0][j] - exp_acc(x[1][j]) * s; });
    }
}

// BWD: the backward ops (a = grad_output, b = output); each direction is a kernel of its
// own, so that the forward one holds one operand's registers, not two
template <bool BWD, int W, int P, bool VEC>
__device__ __forceinline__ void softmax_rows(scalar_t *out, const scalar_t *a,
                                             const scalar_t *b, i64 rows, i64 n, i64 so,
                                             i64 sa, i64 sb, int op, const Layout &L) {
    constexpr int V = ROW_V(P, VEC);
    for_rows<W>(rows, [&](i64 r, bool live) {
        i64 off[3];
        row_offsets(L, r, off);
        i64 len = live ? n : 0;
        if constexpr (BWD)
            softmax_bwd<W, P, V>(out + off[0], so, a + off[1], sa, b + off[2], sb, len,
                                 op == OP_LOG_SOFTMAX_BACKWARD);
        else
            softmax_fwd<W, P, V>(out + off[0], so, a + off[1], sa, len, op == OP_LOG_SOFTMAX);
    });
}

// softmax_{fwd,bwd}_<W>_<P>_<VEC>: W lanes per row (0: the block), P elements per lane in
// registers (0: streamed), VEC: 16-byte vectors (csrc/rows.c picks one)
#define SOFTMAX_DIR(DIR, BWD, W, P, VEC)                                                    \
    extern "C" __global__ void __launch_bounds__((W) ? 128 : 512)                          \
    softmax_##DIR##_##W##_##P##_##VEC(scalar_t *out, const scalar_t *a, const scalar_t *b, \
                                      i64 rows, i64 n, i64 so, i64 sa, i64 sb, int op,     \
                                      Layout L) {                                          \
        softmax_rows<BWD, W, P, (VEC) != 0>(out, a, b, rows, n, so, sa, sb, op, L);        \
    }
#define SOFTMAX_KERNEL(W, P, VEC)                                                           \
    SOFTMAX_DIR(fwd, false, W, P, VEC) SOFTMAX_DIR(bwd, true, W, P, VEC)

SOFTMAX_KERNEL(1, 1, 0)
SOFTMAX_KERNEL(2, 1, 0)
SOFTMAX_KERNEL(4, 1, 0)
SOFTMAX_KERNEL(8, 1, 0)
SOFTMAX_KERNEL(16, 1, 0)
SOFTMAX_KERNEL(32, 1, 0)
SOFTMAX_KERNEL(32, 2, 0)
SOFTMAX_KERNEL(32, 2, 1)
SOFTMAX_KERNEL(32, 4, 0)
SOFTMAX_KERNEL(32, 4, 1)
SOFTMAX_KERNEL(32, 8, 0)
SOFTMAX_KERNEL(32, 8, 1)
SOFTMAX_KERNEL(32, 16, 0)
SOFTMAX_KERNEL(32, 16, 1)
SOFTMAX_KERNEL(32, 32, 0)
SOFTMAX_KERNEL(32, 32, 1)
SOFTMAX_KERNEL(0, 8, 0)
SOFTMAX_KERNEL(0, 8, 1)
SOFTMAX_KERNEL(0, 16, 0)
SOFTMAX_KERNEL(0, 16, 1)
SOFTMAX_KERNEL(0, 0, 0)
SOFTMAX_KERNEL(0, 0, 1)
