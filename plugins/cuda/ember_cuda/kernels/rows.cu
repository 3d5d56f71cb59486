// The fused normalisation and loss kernels (abi.h: the `norm` and `nll` entries) on
// C-contiguous float32/float64 views; scalar_t == acc_t here.  csrc/rows.c sequences them.
//
// Layer norm and cross-entropy run rows with rowtile.cuh's Row (a warp, or a block, per
// row; registers or streamed).  Column sums (the layer-norm weight/bias gradients, every
// batch-norm statistic) never use atomics: col_partials sums fixed chunks of rows per
// column into a workspace, col_finish adds a group's partials in a fixed tree.  The chunk
// sizes depend on the shapes only, so the bits are the same on every run and device.

// -- layer norm ------------------------------------------------------------------------------
// y = (x - mean) * rstd * w + b over one row of N; mean and rstd written by the row's lane 0
template <int W, int P, int V>
__device__ __forceinline__ void ln_fwd_row(acc_t *y, const acc_t *x, const acc_t *w,
                                           const acc_t *b, acc_t *mean, acc_t *rstd,
                                           i64 n, i64 N, double eps, bool live) {
    typedef acc_t X[1][V];
    Row<W, P, V, 1> row;
    row.p[0] = x;
    row.st[0] = 1;
    row.n = n;
    row.load();
    acc_t m = row.sum([](X &x, int j, i64) { return x[0][j]; }) / (acc_t)N;
    acc_t q = row.sum([&](X &x, int j, i64) { return (x[0][j] - m) * (x[0][j] - m); });
    acc_t rs = (acc_t)1 / (acc_t)sqrt((double)(q / (acc_t)N) + eps);
    if (live && Group<W>::rank() == 0) {
        *mean = m;
        *rstd = rs;
    }
    row.write(y, 1, [&](X &x, int j, i64 col) {
        acc_t v = (x[0][j] - m) * rs;
        if (w) v = v * w[col];
        if (b) v = v + b[col];
        return v;
    });
}

// gx = rstd * (h - mean(h) - xhat * mean(h * xhat)), h = g * w, xhat = (x - m) * rstd,
// as a * h + c1 + c2 * (x - m) (the CPU plugin's arithmetic)
template <int W, int P, int V>
__device__ __forceinline__ void ln_bwd_row(acc_t *gx, const acc_t *g, const acc_t *x,
                                           const acc_t *w, acc_t m, acc_t rs, i64 n, i64 N) {
    typedef acc_t X[2][V];
    Row<W, P, V, 2> row;
    row.p[0] = g;
    row.p[1] = x;
    row.st[0] = row.st[1] = 1;
    row.n = n;
    row.load();
    Two<acc_t> s = row.reduce(Two<acc_t>{0, 0}, [&](Two<acc_t> s, X &x, int j, i64 col) {
        acc_t h = w ? x[0][j] * w[col] : x[0][j];
        s.a += h;
        s.b += h * (x[1][j] - m);
        return s;
    }, AddTwoOp());
    acc_t c1 = -rs * s.a / (acc_t)N, c2 = -rs * rs * rs * s.b / (acc_t)N;
    row.write(gx, 1, [&](X &x, int j, i64 col) {
        acc_t h = w ? rs * x[0][j] * w[col] : rs * x[0][j];
        return h + c1 + c2 * (x[1][j] - m);
    });
}

// forward: out = y, mean/rstd written; backward: out = gx, mean/rstd read, g the gradient
template <bool BWD, int W, int P, bool VEC>
__device__ __forceinline__ void ln_rows(acc_t *out, acc_t *mean, acc_t *rstd, const acc_t *x,
                                        const acc_t *g, const acc_t *w, const acc_t *b, i64 M,
                                        i64 N, double eps) {
    constexpr int V = ROW_V(P, VEC);
    for_rows<W>(M, [&](i64 r, bool live) {
        i64 n = live ? N : 0;
        if constexpr (BWD)
            ln_bwd_row<W, P, V>(out + r * N, g + r * N, x + r * N, w, mean[r], rstd[r], n, N);
        else
            ln_fwd_row<W, P, V>(out + r * N, x + r * N, w, b, mean + r, rstd + r, n, N, eps,
                                live);
    });
}

// -- cross-entropy ---------------------------------------------------------------------------
// forward: out0 = loss, out1 = wt; backward: out0 = gx = scale * wt * (softmax - onehot).
// A row's target decides for the whole group (a warp or the block), so the group's
// reductions stay in step.
template <bool BWD, int W, int P, bool VEC>
__device__ __forceinline__ void ce_rows(acc_t *out0, acc_t *out1, const acc_t *scale,
                                        const acc_t *a, const i64 *t, const acc_t *w, i64 R,
                                        i64 C, i64 ignore) {
    constexpr int V = ROW_V(P, VEC);
    typedef acc_t X[1][V];
    for_rows<W>(R, [&](i64 r, bool live) {
        if (!live) return;
        i64 tr = t[r];
        if (tr == ignore || tr < 0 || tr >= C) {     // a bad target: nll_check reports it
            if constexpr (BWD) {
                for (i64 i = Group<W>::rank(); i < C; i += Group<W>::size()) out0[r * C + i] = 0;
            } else if (Group<W>::rank() == 0) {
                out0[r] = 0;
                out1[r] = 0;
            }
            return;
        }
        acc_t wt = w ? w[tr] : (acc_t)1;
        Row<W, P, V, 1> row;
        row.p[0] = a + r * C;
        row.st[0] = 1;
        row.n = C;
        row.load();
        acc_t lse = row_lse(row);
        if constexpr (BWD) {
            acc_t f = scale[r] * wt;
            row.write(out0 + r * C, 1, [&](X &x, int j, i64 col) {
                acc_t v = f * exp_acc(x[0][j] - lse);
                return col == tr ? v - f : v;
            });
        } else if (Group<W>::rank() == 0) {
            out0[r] = -wt * (a[r * C + tr] - lse);
            out1[r] = wt;
        }
    });
}

// ln_{fwd,bwd}_<W>_<P>_<VEC>, ce_{fwd,bwd}_<W>_<P>_<VEC>: W lanes per row (0: the block),
// P elements per lane in registers (0: streamed), VEC: 16-byte vectors
#define LN_DIR(DIR, BWD, W, P, VEC)                                                         \
    extern "C" __global__ void __launch_bounds__((W) ? 128 : 512)                          \
    ln_##DIR##_##W##_##P##_##VEC(acc_t *out, acc_t *mean, acc_t *rstd, const acc_t *x,     \
                                 const acc_t *g, const acc_t *w, const acc_t *b, i64 M,    \
                                 i64 N, double eps) {                                      \
        ln_rows<BWD, W, P, (VEC) != 0>(out, mean, rstd, x, g, w, b, M, N, eps);            \
    }
#define CE_DIR(DIR, BWD, W, P, VEC)                                                         \
    extern "C" __global__ void __launch_bounds__((W) ? 128 : 512)                          \
    ce_##DIR##_##W##_##P##_##VEC(acc_t *out0, acc_t *out1, const acc_t *scale,             \
                                 const acc_t *a, const i64 *t, const acc_t *w, i64 R,      \
                                 i64 C, i64 ignore) {                                      \
        ce_rows<BWD, W, P, (VEC) != 0>(out0, out1, scale, a, t, w, R, C, ignore);          \
    }
#define ROW_KERNELS(W, P, VEC)                                                              \
    LN_DIR(fwd, false, W, P, VEC) LN_DIR(bwd, true, W, P, VEC)                             \
    CE_DIR(fwd, false, W, P, VEC) CE_DIR(bwd, true, W, P, VEC)

ROW_KERNELS(32, 4, 0)
ROW_KERNELS(32, 4, 1)
ROW_KERNELS(32, 8, 0)
ROW_KERNELS(32, 8, 1)
ROW_KERNELS(32, 16, 0)
ROW_KERNELS(32, 16, 1)
ROW_KERNELS(32, 32, 0)
ROW_KERNELS(32, 32, 1)
ROW_KERNELS(0, 8, 0)
ROW_KERNELS(0, 8, 1)
ROW_KERNELS(0, 16, 0)
ROW_KERNELS(0, 16, 1)
ROW_KERNELS(0, 0, 0)
ROW_KERNELS(0, 0, 1)

// -- nll over log-probabilities, and the target check ---------------------------------------
extern "C" __global__ void nll_forward(acc_t *loss, acc_t *wt, const acc_t *a, const i64 *t,
                                       const acc_t *w, i64 R, i64 C, i64 ignore) {
    for (i64 r = global_id(); r < R; r += global_threads()) {
        i64 tr = t[r];
        bool skip = tr == ignore || tr < 0 || tr >= C;     // a bad target: see nll_check
        acc_t wv = skip ? (acc_t)0 : (w ? w[tr] : (acc_t)1);
        loss[r] = skip ? (acc_t)0 : -wv * a[r * C + tr];
        wt[r] = wv;
    }
}

// gx = -scale * w[t] at the target's column, 0 elsewhere: a warp per row
extern "C" __global__ void __launch_bounds__(256) nll_backward(acc_t *gx, const acc_t *scale,
                                                               const i64 *t, const acc_t *w,
                                                               i64 R, i64 C, i64 ignore) {
    for_rows<32>(R, [&](i64 r, bool live) {
        if (!live) return;
        i64 tr = t[r];
        bool skip = tr == ignore || tr < 0 || tr >= C;
        acc_t v = skip ? (acc_t)0 : -scale[r] * (w ? w[tr] : (acc_t)1);
        for (i64 i = Group<32>::rank(); i < C; i += 32) gx[r * C + i] = i == tr ? v : (acc_t)0;
    });
}

// One block: the first row whose target is neither ignore nor in [0, C) goes to the error
// slot (code 4, the target), as the CPU plugin reports it; the loss kernels skip such rows,
// so nothing reads outside a row while the error waits to be reported.
extern "C" __global__ void __launch_bounds__(1024) nll_check(const i64 *t, i64 R, i64 C,
                                                             i64 ignore, i64 *slot) {
    i64 first = R;
    for (i64 r = threadIdx.x; r < R; r += blockDim.x) {
        i64 v = t[r];
        if (v != ignore && (v < 0 || v >= C)) {
            first = r;
            break;
        }
    }
    first = group_allreduce<0>(first, MinOp());
    if (threadIdx.x == 0 && first < R &&
        atomicCAS((unsigned long long *)slot, 0ull, 4ull) == 0ull) {
        slot[1] = t[first];
        slot[2] = C;
    }
}

// -- column sums ------------------------------------------------------------------------------
// x (and g) as [rows, K]; column j belongs to channel j / L (batch norm: K = C * L).
#define PART_SUM 0       // s0 = sum x
#define PART_SQDEV 1     // s0 = sum (x - mean[channel])^2
#define PART_GRAD 2      // s0 = sum g, s1 = sum g * (x - mean[channel])
#define PART_LN 3        // s0 = sum g * (x - mean[row]) * rstd[row], s1 = sum g

template <int MODE>
__device__ __forceinline__ void col_chunk(acc_t *part, const acc_t *x, const acc_t *g,
                                          const acc_t *mean, const acc_t *rstd, i64 r0,
                                          i64 r1, i64 K, i64 L, i64 j, i64 plane) {
    acc_t mc = (MODE == PART_SQDEV || MODE == PART_GRAD) ? mean[j / L] : (acc_t)0;
    acc_t s0 = 0, s1 = 0;
    for (i64 r = r0; r < r1; r++) {
        acc_t xv = x[r * K + j];
        if (MODE == PART_SUM) {
            s0 += xv;
        } else if (MODE == PART_SQDEV) {
            s0 += (xv - mc) * (xv - mc);
        } else if (MODE == PART_GRAD) {
            acc_t gv = g[r * K + j];
            s0 += gv;
            s1 += gv * (xv - mc);
        } else {
            acc_t gv = g[r * K + j];
            s0 += gv * (xv - mean[r]) * rstd[r];
            s1 += gv;
        }
    }
    part[j] = s0;
    part[plane + j] = s1;
}

// part = [2][nchunks][K]: chunk k sums rows [k * rpc, (k + 1) * rpc); a thread per column
extern "C" __global__ void col_partials(acc_t *part, const acc_t *x, const acc_t *g,
                                        const acc_t *mean, const acc_t *rstd, i64 rows, i64 K,
                                        i64 L, i64 rpc, i64 nchunks, int mode) {
    i64 tiles = (K + blockDim.x - 1) / blockDim.x;
    for (i64 bid = blockIdx.x; bid < tiles * nchunks; bid += gridDim.x) {
        i64 k = bid / tiles, j = (bid - k * tiles) * blockDim.x + threadIdx.x;
        if (j >= K) continue;
        i64 r0 = k * rpc, r1 = r0 + rpc < rows ? r0 + rpc : rows;
        acc_t *pk = part + k * K;
        i64 plane = nchunks * K;
        switch (mode) {
        case PART_SUM: col_chunk<PART_SUM>(pk, x, g, mean, rstd, r0, r1, K, L, j, plane); break;
        case PART_SQDEV: col_chunk<PART_SQDEV>(pk, x, g, mean, rstd, r0, r1, K, L, j, plane); break;
        case PART_GRAD: col_chunk<PART_GRAD>(pk, x, g, mean, rstd, r0, r1, K, L, j, plane); break;
        default: col_chunk<PART_LN>(pk, x, g, mean, rstd, r0, r1, K, L, j, plane);
        }
    }
}

#define FIN_MEAN 0       // o0 = s0 / count
#define FIN_RSTD 1       // o0 = 1 / sqrt(s0 / count + eps)
#define FIN_SUMS 2       // o0 = s0, o1 = s1 (either may be NULL)

// A block per group c (a channel, or a layer-norm column): its nchunks * L partials
// (columns c * L .. c * L + L - 1 of every chunk), summed in a fixed tree.
extern "C" __global__ void __launch_bounds__(1024) col_finish(
        const acc_t *part, i64 nchunks, i64 K, i64 L, i64 groups, int mode, double count,
        double eps, acc_t *o0, acc_t *o1) {
    i64 per = nchunks * L, plane = nchunks * K;
    for (i64 c = blockIdx.x; c < groups; c += gridDim.x) {
        Two<acc_t> s = {0, 0};
        for (i64 e = threadIdx.x; e < per; e += blockDim.x) {
            i64 k = e / L, idx = k * K + c * L + (e - k * L);
            s.a += part[idx];
            s.b += part[plane + idx];
        }
        s = group_allreduce<0>(s, AddTwoOp());
        if (threadIdx.x != 0) continue;
        if (mode == FIN_MEAN) {
            o0[c] = (acc_t)((double)s.a / count);
        } else if (mode == FIN_RSTD) {
            o0[c] = (acc_t)(1.0 / sqrt((double)s.a / count + eps));
        } else {
            if (o0) o0[c] = s.a;
            if (o1) o1[c] = s.b;
        }
    }
}

// -- batch norm, elementwise over [B, C, L] -----------------------------------------------------
template <typename I, typename F>
__device__ __forceinline__ void per_element(i64 n, i64 C, i64 L, F f) {
    for (i64 i = global_id(); i < n; i += global_threads()) f(i, (i64)(((I)i / (I)L) % (I)C));
}

// y = x * a + shift, a = rstd * w, shift = b - mean * a
extern "C" __global__ void bn_apply(acc_t *y, const acc_t *x, const acc_t *mean,
                                    const acc_t *rstd, const acc_t *w, const acc_t *b, i64 n,
                                    i64 C, i64 L) {
    auto f = [&](i64 i, i64 c) {
        acc_t a = rstd[c];
        if (w) a = a * w[c];
        acc_t shift = -mean[c] * a;
        if (b) shift = shift + b[c];
        y[i] = x[i] * a + shift;
    };
    if (n <= 0xffffffffll) per_element<u32>(n, C, L, f);
    else per_element<u64>(n, C, L, f);
}

// gx = w * rstd * g + c1 + c2 * (x - mean) over the n elements (train: c1, c2 from the
// channel sums sums[c] = sum g, sums[C + c] = sum g * (x - mean); eval: 0); and per channel
// gw = sums[C + c] * rstd, gb = sums[c] where wanted
extern "C" __global__ void bn_grad(acc_t *gx, const acc_t *g, const acc_t *x, const acc_t *mean,
                                   const acc_t *rstd, const acc_t *w, const acc_t *sums,
                                   acc_t *gw, acc_t *gb, i64 n, i64 C, i64 L, double count,
                                   int train) {
    for (i64 c = global_id(); c < C && sums; c += global_threads()) {
        if (gw) gw[c] = sums[C + c] * rstd[c];
        if (gb) gb[c] = sums[c];
    }
    auto f = [&](i64 i, i64 c) {
        acc_t r = rstd[c], wc = w ? w[c] : (acc_t)1, c1 = 0, c2 = 0;
        if (train) {
            c1 = -wc * r * sums[c] / (acc_t)count;
            c2 = -wc * r * r * r * sums[C + c] / (acc_t)count;
        }
        gx[i] = wc * r * g[i] + c1 + c2 * (x[i] - mean[c]);
    };
    if (n <= 0xffffffffll) per_element<u32>(n, C, L, f);
    else per_element<u64>(n, C, L, f);
}
