// The index family's gather/scatter along one dim (csrc/index.c picks the kernel; abi.h
// has the contract).  A position p of `index` reads or writes the walked operand w at p
// and the target t at q (p with q[dim] = index[p]).  The host hands the kernels a Layout
// over index's shape whose operands are (w, t with stride 0 along dim, index[, the
// coordinate along dim]); the target's offset is then off[1] + j * st.
//
// Kernels:
//   index_elems    one thread per position: gather, a duplicate-free (or winner-filtered)
//                  scatter, and the reducing scatters through atomics
//   index_rowsN    gather of whole contiguous rows (index constant along them), N-byte units
//   index_walk     one thread per line outside dim, walking dim in order: the fixed-order
//                  scatters (duplicates combine in row-major order of p)
//   index_claim    plain scatter with an index constant outside dim: the last position of
//                  each target index wins (atomicMax), so index_elems can then write only
//                  the winners in parallel
#define OP_GATHER 0
#define OP_SCATTER 1
#define OP_ADD 2
#define OP_MUL 3
#define OP_AMAX 4
#define OP_AMIN 5

#define ERR_INDEX 1               // the error slot's code for an index out of range

// An index read as `raw`: its place in [0, limit), or -1 (reported through `err`: the
// first failing thread writes the slot, as ec_sync_errors reads it).
__device__ __forceinline__ i64 checked(i64 raw, i64 limit, int wrap, int dim, i64 *err) {
    i64 j = (raw < 0 && wrap) ? raw + limit : raw;
    if (j >= 0 && j < limit) return j;
    if (atomicCAS((u64 *)err, 0ull, (u64)ERR_INDEX) == 0ull) {
        err[1] = raw;
        err[2] = limit;
        err[3] = dim;
    }
    return -1;
}

// -- combining ------------------------------------------------------------------------------
// the reductions in the compute type, as the CPU plugin's _scalar.pxd: integers wrap, a
// NaN wins max/min; bool adds as "or" and multiplies as "and" through its store
__device__ __forceinline__ acc_t combine(int op, acc_t x, acc_t y) {
    if constexpr (EC_FLOATING) {
        switch (op) {
        case OP_ADD: return x + y;
        case OP_MUL: return x * y;
        case OP_AMAX: return ((x > y) | (x != x)) ? x : y;
        default: return ((x < y) | (x != x)) ? x : y;
        }
    } else {
        switch (op) {
        case OP_ADD: return (i64)((u64)x + (u64)y);
        case OP_MUL: return (i64)((u64)x * (u64)y);
        case OP_AMAX: return x > y ? x : y;
        default: return x < y ? x : y;
        }
    }
}

__device__ __forceinline__ scalar_t combined(int op, scalar_t cur, acc_t v) {
    return Store<EC_DTYPE>::from(combine(op, to_acc(cur), v));
}

// *p = combine(*p, v) as one atomic step: a compare-and-swap loop on the aligned word that
// holds *p (32 bits for the 1- and 2-byte dtypes, whose neighbours in that word are left
// as they are)
template <typename W>
__device__ __forceinline__ void cas_loop(W *a, int shift, W mask, int op, acc_t v) {
    W old = *a, seen;
    do {
        seen = old;
        W part = (seen >> shift) & mask, bits = 0;
        scalar_t cur, next;
        memcpy(&cur, &part, sizeof(scalar_t));
        next = combined(op, cur, v);
        memcpy(&bits, &next, sizeof(scalar_t));
        old = atomicCAS(a, seen, (seen & ~(mask << shift)) | (bits << shift));
    } while (old != seen);
}

__device__ __forceinline__ void cas_combine(scalar_t *p, int op, acc_t v) {
    if constexpr (sizeof(scalar_t) == 8) {
        cas_loop<unsigned long long>((unsigned long long *)p, 0, ~0ull, op, v);
    } else if constexpr (sizeof(scalar_t) == 4) {
        cas_loop<u32>((u32 *)p, 0, ~0u, op, v);
    } else {
        const u64 addr = (u64)p;
        cas_loop<u32>((u32 *)(addr & ~(u64)3), (int)(addr & 3) * 8,
                      sizeof(scalar_t) == 1 ? 0xffu : 0xffffu, op, v);
    }
}

// the hardware's own atomics where they exist for the dtype and op; else the CAS loop
__device__ __forceinline__ void atomic_combine(scalar_t *p, int op, acc_t v) {
#if EC_DTYPE == D_FLOAT32
    if (op == OP_ADD) { atomicAdd(p, v); return; }
#elif EC_DTYPE == D_FLOAT64 && __CUDA_ARCH__ >= 600
    if (op == OP_ADD) { atomicAdd(p, v); return; }
#elif EC_DTYPE == D_FLOAT16 && __CUDA_ARCH__ >= 700
    if (op == OP_ADD) { atomicAdd(p, __float2half_rn(v)); return; }      // v is a half: exact
#elif EC_DTYPE == D_BFLOAT16 && __CUDA_ARCH__ >= 800
    if (op == OP_ADD) { atomicAdd(p, __float2bfloat16_rn(v)); return; }
#elif EC_DTYPE == D_INT32
    if (op == OP_ADD) { atomicAdd((u32 *)p, (u32)v); return; }           // wraps
    if (op == OP_AMAX) { atomicMax(p, (int)v); return; }
    if (op == OP_AMIN) { atomicMin(p, (int)v); return; }
#elif EC_DTYPE == D_INT64
    if (op == OP_ADD) { atomicAdd((u64 *)p, (u64)v); return; }
    if (op == OP_AMAX) { atomicMax((long long *)p, (long long)v); return; }
    if (op == OP_AMIN) { atomicMin((long long *)p, (long long)v); return; }
#endif
    cas_combine(p, op, v);
}

// -- one thread per position -----------------------------------------------------------------
// GATHER: w[p] = t[q].  SCATTER: t[q] = w[p], only where no other position shares q, or
// where `winner` (per index value, from index_claim) names this position's coordinate
// along dim (operand 3).  The reductions: t[q] (op)= w[p] atomically.
template <typename I, int NOPS>
__device__ void elems(scalar_t *w, scalar_t *t, const i64 *ix, const i64 *winner, i64 n,
                      int op, i64 limit, i64 st, int wrap, int dim, i64 *err, const Layout &L) {
    i64 off[4] = {0, 0, 0, 0};
    for (i64 i = global_id(); i < n; i += global_threads()) {
        offsets<I>(L, (I)i, NOPS, off);
        i64 j = checked(ix[off[2]], limit, wrap, dim, err);
        if (j < 0) continue;
        scalar_t *pt = t + off[1] + j * st;
        if (op == OP_GATHER) {
            w[off[0]] = *pt;
        } else if (op == OP_SCATTER) {
            if (!winner || winner[j] == off[3]) *pt = w[off[0]];
        } else {
            atomic_combine(pt, op, to_acc(w[off[0]]));
        }
    }
}

extern "C" __global__ void index_elems(scalar_t *w, scalar_t *t, const i64 *ix,
                                       const i64 *winner, i64 n, int op, i64 limit, i64 st,
                                       int wrap, int dim, i64 *err, Layout L) {
    // the coordinate along dim (operand 4) is needed to compare with the winners only
    if (winner && L.index32)
        elems<int, 4>(w, t, ix, winner, n, op, limit, st, wrap, dim, err, L);
    else if (winner)
        elems<i64, 4>(w, t, ix, winner, n, op, limit, st, wrap, dim, err, L);
    else if (L.index32)
        elems<int, 3>(w, t, ix, winner, n, op, limit, st, wrap, dim, err, L);
    else
        elems<i64, 3>(w, t, ix, winner, n, op, limit, st, wrap, dim, err, L);
}

// -- gather of contiguous rows ------------------------------------------------------------------
// The layout's dims are the rows' positions (the row dim itself left out by the host);
// every row is `units` units of U, contiguous in w and in t, with one index per row.
// Consecutive threads copy consecutive units of a row: coalesced, 16 bytes per thread.
template <typename U, typename I>
__device__ void rows(char *w, const char *t, const i64 *ix, i64 nrows, i64 units, i64 limit,
                     i64 st, int wrap, int dim, i64 *err, const Layout &L) {
    const I per_row = (I)units, total = (I)(nrows * units);
    i64 off[3];
    for (I g = (I)global_id(); g < total; g += (I)global_threads()) {
        I r = g / per_row, c = g - r * per_row;
        offsets<I>(L, r, 3, off);
        i64 j = checked(ix[off[2]], limit, wrap, dim, err);
        if (j < 0) continue;
        const U *src = (const U *)(t + (off[1] + j * st) * (i64)sizeof(scalar_t));
        U *dst = (U *)(w + off[0] * (i64)sizeof(scalar_t));
        dst[c] = src[c];
    }
}

#define EC_ROWS_KERNEL(NAME, U)                                                             \
    extern "C" __global__ void NAME(char *w, const char *t, const i64 *ix, i64 nrows,        \
                                    i64 units, i64 limit, i64 st, int wrap, int dim,         \
                                    i64 *err, Layout L) {                                    \
        if (L.index32)                                                                       \
            rows<U, int>(w, t, ix, nrows, units, limit, st, wrap, dim, err, L);              \
        else                                                                                 \
            rows<U, i64>(w, t, ix, nrows, units, limit, st, wrap, dim, err, L);              \
    }
EC_ROWS_KERNEL(index_rows4, u32)
EC_ROWS_KERNEL(index_rows8, uint2)
EC_ROWS_KERNEL(index_rows16, uint4)

// -- fixed order: one thread per line -------------------------------------------------------
// The layout's dims are index's dims but `dim` (operands w, t, index); each thread walks
// its line along dim in order, so duplicates combine as the CPU plugin combines them.
template <typename I>
__device__ void walk(scalar_t *w, scalar_t *t, const i64 *ix, i64 lines, i64 length, int op,
                     i64 limit, i64 sw, i64 st, i64 si, int wrap, int dim, i64 *err,
                     const Layout &L) {
    i64 off[3];
    for (i64 line = global_id(); line < lines; line += global_threads()) {
        offsets<I>(L, (I)line, 3, off);
        for (i64 k = 0; k < length; k++) {
            i64 j = checked(ix[off[2] + k * si], limit, wrap, dim, err);
            if (j < 0) break;
            scalar_t *pt = t + off[1] + j * st;
            scalar_t v = w[off[0] + k * sw];
            *pt = op == OP_SCATTER ? v : combined(op, *pt, to_acc(v));
        }
    }
}

extern "C" __global__ void index_walk(scalar_t *w, scalar_t *t, const i64 *ix, i64 lines,
                                      i64 length, int op, i64 limit, i64 sw, i64 st, i64 si,
                                      int wrap, int dim, i64 *err, Layout L) {
    if (L.index32)
        walk<int>(w, t, ix, lines, length, op, limit, sw, st, si, wrap, dim, err, L);
    else
        walk<i64>(w, t, ix, lines, length, op, limit, sw, st, si, wrap, dim, err, L);
}

// -- plain scatter, index constant outside dim ------------------------------------------------
// winner[j] (preset to -1) becomes the last coordinate k along dim whose index is j: the
// position whose value SCATTER keeps
extern "C" __global__ void index_claim(const i64 *ix, i64 length, i64 si, i64 limit, int wrap,
                                       int dim, i64 *err, i64 *winner) {
    for (i64 k = global_id(); k < length; k += global_threads()) {
        i64 j = checked(ix[k * si], limit, wrap, dim, err);
        if (j >= 0) atomicMax((long long *)&winner[j], (long long)k);
    }
}
