# Reductions over the trailing dims: sum, mean, prod, max, min, argmax, argmin (scans live
# in _scan.pyx).
#
# Every output's reduction runs in one fixed order, whatever the thread count (threads
# only decide who computes which part), so results are bitwise reproducible:
#
# * "inner" layout (the reduced elements are the fast-moving ones): the reduced elements,
#   in row-major order, are cut into blocks of BLOCK; a block is cut into leaves of LEAF
#   summed with 8 interleaved accumulators (vectorizes without -ffast-math); leaves and
#   then blocks are combined pairwise by a binary-counter cascade.  A float sum's block is
#   one leaf of 32-byte vector accumulators built per instruction set (_sum_block.h); two
#   whole contiguous blocks run in one pass of two load streams (each with its own bits).
#   Few outputs over many elements: threads share the block pairs of one output; many
#   outputs: threads share outputs.
# * "outer" layout (the kept dim is the contiguous one, e.g. sum(dim=0) of a row-major
#   matrix): rows are accumulated into a tile of kept elements, vectorized over the
#   tile, ROW_BLOCK rows in sequence, and those partial rows are cascaded pairwise.
#   Threads share the kept elements.
#
# Integers and bool accumulate in int64 (wrapping: truncation to the narrow dtype on store
# gives the same bits), float16/bfloat16/float32 in float32, float64 in double.
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free

from ember_cpu._abi cimport (
    EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_TYPE, EMBER_ERR_RUNTIME, EMBER_ERR_MEMORY,
    EMBER_MAX_DIM, EMBER_REDUCE_SUM, EMBER_REDUCE_MEAN, EMBER_REDUCE_PROD,
    EMBER_REDUCE_MAX, EMBER_REDUCE_MIN, EMBER_REDUCE_ARGMAX, EMBER_REDUCE_ARGMIN,
    EMBER_REDUCE_COUNT, EMBER_INT64, EMBER_BOOL,
)
from ember_cpu._scalar cimport _add, _mul, _max, _min
from ember_cpu._strided cimport (
    ct_t, CT_I64, CT_F32, CT_F64, BUF_LEN, StridedIter, compute_type, is_native, is_floating,
    parallel_cutoff, dtype_itemsize, iter_coalesce, iter_run, run_range, load, load_ct, store,
    num_threads, set_error, error_dtype,
)

cdef extern from *:
    """
    static const char *const ember_reduce_names[] = {"sum", "mean", "prod", "max", "min",
                                                    "argmax", "argmin"};
    """
    const char *ember_reduce_names[]

cdef extern from "_sum_block.h":
    float ember_sum_block_f32(const float *x, int64_t n) noexcept nogil
    double ember_sum_block_f64(const double *x, int64_t n) noexcept nogil
    void ember_sum_block2_f32(const float *x, int64_t n, float *out) noexcept nogil
    void ember_sum_block2_f64(const double *x, int64_t n, double *out) noexcept nogil
    float ember_max_block_f32(const float *x, int64_t n) noexcept nogil
    float ember_min_block_f32(const float *x, int64_t n) noexcept nogil
    double ember_max_block_f64(const double *x, int64_t n) noexcept nogil
    double ember_min_block_f64(const double *x, int64_t n) noexcept nogil
    void ember_col_reduce_f32(int kind, float *acc, const float *x, int64_t rstride,
                              int64_t rows, int64_t w, int first) noexcept nogil
    void ember_col_reduce_f64(int kind, double *acc, const double *x, int64_t rstride,
                              int64_t rows, int64_t w, int first) noexcept nogil

cdef enum:
    LEAF = 128          # elements per leaf (8 accumulators x 16)
    BLOCK = 2048        # elements per block (16 leaves): the unit threads share
    ROW_BLOCK = 64      # outer layout: rows accumulated in sequence before cascading
    TILE = 2048         # outer layout: kept elements per tile (whole rows stream through)
    LEVELS = 64         # cascade depth bound (an entry at level d stands for 2^d parts)
    FEW_OUTPUTS = 4     # fewer than FEW_OUTPUTS * threads outputs: threads share blocks


ctypedef struct ReducePlan:
    int op
    int dtype
    int ct
    int64_t itemsize
    bint direct         # the reduced elements are one stride-1 run of a native dtype
    int64_t nred
    StridedIter kept    # operands (out, a) over the kept dims
    StridedIter red     # operand (a) over the reduced dims


# -- combining ------------------------------------------------------------------------------

cdef inline ct_t comb(int op, ct_t x, ct_t y) noexcept nogil:
    if op == EMBER_REDUCE_PROD:
        return _mul(x, y)
    if op == EMBER_REDUCE_MAX:
        return _max(x, y)
    if op == EMBER_REDUCE_MIN:
        return _min(x, y)
    return _add(x, y)


# binary-counter cascade: equal-sized partials merge as soon as both exist, giving the
# pairwise tree over the parts pushed, in push order
cdef inline void push(int op, ct_t *vals, int64_t *counts, int *depth, ct_t v) noexcept nogil:
    cdef int d = depth[0]
    cdef int64_t c = 1
    while d > 0 and counts[d - 1] == c:
        d -= 1
        v = comb(op, vals[d], v)
        c *= 2
    vals[d] = v
    counts[d] = c
    depth[0] = d + 1


cdef inline ct_t finish(int op, const ct_t *vals, int depth) noexcept nogil:
    cdef ct_t r = vals[depth - 1]
    cdef int d
    for d in range(depth - 2, -1, -1):
        r = comb(op, vals[d], r)
    return r


# a leaf with 8 interleaved accumulators (a float sum and a floating max/min run whole
# blocks in _sum_block.h instead)
cdef inline ct_t leaf(int op, const ct_t *x, int64_t n) noexcept nogil:
    cdef ct_t acc[8]
    cdef ct_t r
    cdef int64_t i, j
    if n < 8:
        r = x[0]
        for i in range(1, n):
            r = comb(op, r, x[i])
        return r
    for j in range(8):
        acc[j] = x[j]
    i = 8
    while i + 8 <= n:
        for j in range(8):
            acc[j] = comb(op, acc[j], x[i + j])
        i += 8
    r = comb(op, comb(op, comb(op, acc[0], acc[1]), comb(op, acc[2], acc[3])),
             comb(op, comb(op, acc[4], acc[5]), comb(op, acc[6], acc[7])))
    while i < n:
        r = comb(op, r, x[i])
        i += 1
    return r


cdef inline ct_t _block(int op, const ct_t *x, int64_t n) noexcept nogil:
    cdef ct_t vals[8]
    cdef int64_t counts[8]
    cdef int depth = 0
    cdef int64_t i = 0
    while i < n:
        push(op, vals, counts, &depth, leaf(op, x + i, min(<int64_t>LEAF, n - i)))
        i += LEAF
    return finish(op, vals, depth)


# 1 <= n <= BLOCK contiguous elements; each branch inlines _block with a constant op, so
# every op gets its own vectorized leaf loop; a float sum and a floating max/min run a block
# function built per instruction set
cdef ct_t block_reduce(int op, const ct_t *x, int64_t n) noexcept nogil:
    if op == EMBER_REDUCE_SUM or op == EMBER_REDUCE_MEAN:
        if ct_t is float:
            return ember_sum_block_f32(x, n)
        elif ct_t is double:
            return ember_sum_block_f64(x, n)
    if op == EMBER_REDUCE_PROD:
        return _block(EMBER_REDUCE_PROD, x, n)
    if ct_t is float:
        if op == EMBER_REDUCE_MAX:
            return ember_max_block_f32(x, n)
        if op == EMBER_REDUCE_MIN:
            return ember_min_block_f32(x, n)
    elif ct_t is double:
        if op == EMBER_REDUCE_MAX:
            return ember_max_block_f64(x, n)
        if op == EMBER_REDUCE_MIN:
            return ember_min_block_f64(x, n)
    if op == EMBER_REDUCE_MAX:
        return _block(EMBER_REDUCE_MAX, x, n)
    if op == EMBER_REDUCE_MIN:
        return _block(EMBER_REDUCE_MIN, x, n)
    return _block(EMBER_REDUCE_SUM, x, n)


cdef inline ct_t identity(int op, ct_t *tag) noexcept nogil:
    return 1 if op == EMBER_REDUCE_PROD else 0


# mean divides the sum by the count (0 / 0 = NaN for an empty one)
cdef inline void finalize(const ReducePlan *p, ct_t *r, int64_t n) noexcept nogil:
    cdef int64_t i
    if ct_t is not int64_t:
        if p.op == EMBER_REDUCE_MEAN:
            for i in range(n):
                r[i] = r[i] / <ct_t>p.nred


# -- inner layout ---------------------------------------------------------------------------

ctypedef struct Gather:
    char *dst
    int ct
    int dtype
    int64_t start
    int64_t ctsize


cdef int gather_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                    int64_t index) noexcept nogil:
    cdef const Gather *g = <const Gather *>arg
    load_ct(g.ct, g.dst + (index - g.start) * g.ctsize, ptrs[0], g.dtype, n, st[0])
    return EMBER_OK


# partial of block `blk` of the reduction based at `base`
cdef void block_partial(const ReducePlan *p, char *base, int64_t blk,
                        ct_t *result) noexcept nogil:
    cdef ct_t buf[BLOCK]
    cdef Gather g
    cdef int64_t start = blk * BLOCK, m = min(<int64_t>BLOCK, p.nred - blk * BLOCK)
    if p.direct:
        result[0] = block_reduce(p.op, <const ct_t *>base + start, m)
        return
    if p.red.ndim == 1:
        load(buf, base + start * p.red.strides[0][0] * p.itemsize, p.dtype, m,
             p.red.strides[0][0])
    else:
        g.dst = <char *>buf
        g.ct = p.ct
        g.dtype = p.dtype
        g.start = start
        g.ctsize = sizeof(ct_t)
        run_range(&p.red, &base, gather_row, &g, start, start + m)
    result[0] = block_reduce(p.op, buf, m)


# partials of blocks 2 * pair and (if there is one) 2 * pair + 1: a float sum of two whole
# contiguous blocks in one pass of two load streams (_sum_block.h; the same bits)
cdef void pair_partials(const ReducePlan *p, char *base, int64_t pair,
                        ct_t *result) noexcept nogil:
    cdef int64_t blk = 2 * pair
    if p.direct and (p.op == EMBER_REDUCE_SUM or p.op == EMBER_REDUCE_MEAN) and \
            (blk + 2) * BLOCK <= p.nred:
        if ct_t is float:
            ember_sum_block2_f32(<const float *>base + blk * BLOCK, BLOCK, result)
            return
        elif ct_t is double:
            ember_sum_block2_f64(<const double *>base + blk * BLOCK, BLOCK, result)
            return
    block_partial(p, base, blk, result)
    if (blk + 1) * BLOCK < p.nred:
        block_partial(p, base, blk + 1, result + 1)


cdef void reduce_one(const ReducePlan *p, char *base, ct_t *result) noexcept nogil:
    cdef ct_t vals[LEVELS]
    cdef int64_t counts[LEVELS]
    cdef int depth = 0
    cdef int64_t pair, nblocks = (p.nred + BLOCK - 1) // BLOCK
    cdef ct_t parts[2]
    if p.nred == 0:
        result[0] = identity(p.op, result)
        return
    for pair in range((nblocks + 1) // 2):
        pair_partials(p, base, pair, parts)
        push(p.op, vals, counts, &depth, parts[0])
        if 2 * pair + 1 < nblocks:
            push(p.op, vals, counts, &depth, parts[1])
    result[0] = finish(p.op, vals, depth)


cdef void inner_outputs(const ReducePlan *p, char **ptrs, const int64_t *st, int64_t n,
                        ct_t *tag) noexcept nogil:
    cdef int64_t e
    cdef ct_t r
    for e in range(n):
        reduce_one(p, ptrs[1] + e * st[1] * p.itemsize, &r)
        finalize(p, &r, 1)
        store(ptrs[0] + e * st[0] * p.itemsize, p.dtype, &r, 1, 1)


cdef int inner_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                   int64_t index) noexcept nogil:
    cdef const ReducePlan *p = <const ReducePlan *>arg
    if p.ct == CT_F32:
        inner_outputs(p, ptrs, st, n, <float *>NULL)
    elif p.ct == CT_F64:
        inner_outputs(p, ptrs, st, n, <double *>NULL)
    else:
        inner_outputs(p, ptrs, st, n, <int64_t *>NULL)
    return EMBER_OK


# few outputs over many elements: for each output, threads compute the block partials (two
# blocks at a time), which are then cascaded in block order exactly as reduce_one does
cdef int reduce_few(const ReducePlan *p, ct_t *tag) noexcept nogil:
    cdef int64_t nblocks = (p.nred + BLOCK - 1) // BLOCK, blk, o, i, rem
    cdef ct_t *partials = <ct_t *>malloc(nblocks * sizeof(ct_t))
    cdef ct_t vals[LEVELS]
    cdef int64_t counts[LEVELS]
    cdef char *bases[2]
    cdef int depth, d, k, nt = num_threads()
    cdef ct_t r
    if partials == NULL:
        return EMBER_ERR_MEMORY
    for o in range(p.kept.numel):
        rem = o
        for k in range(2):
            bases[k] = p.kept.data[k]
        for d in range(p.kept.ndim - 1, -1, -1):
            i = rem % p.kept.sizes[d]
            rem = rem // p.kept.sizes[d]
            for k in range(2):
                bases[k] += i * p.kept.strides[k][d] * p.itemsize
        for blk in prange((nblocks + 1) // 2, nogil=True, schedule='static',
                          num_threads=nt):
            pair_partials(p, bases[1], blk, &partials[2 * blk])
        depth = 0
        for blk in range(nblocks):
            push(p.op, vals, counts, &depth, partials[blk])
        r = finish(p.op, vals, depth)
        finalize(p, &r, 1)
        store(bases[0], p.dtype, &r, 1, 1)
    free(partials)
    return EMBER_OK


# -- outer layout ---------------------------------------------------------------------------

ctypedef struct OuterState:
    const ReducePlan *p
    int64_t w           # kept elements in this tile
    int64_t kstride     # a's stride along the tile
    void *acc           # [TILE] rows accumulated since the block started
    void *row           # [TILE] a row converted to the compute type
    void *levels        # [depth bound][TILE] cascade
    int64_t counts[LEVELS]
    int depth


cdef inline void _row_comb(int op, ct_t *dst, const ct_t *x, const ct_t *y,
                           int64_t w) noexcept nogil:
    cdef int64_t t
    for t in range(w):
        dst[t] = comb(op, x[t], y[t])


# dst = x (op) y elementwise over a tile, one vectorized loop per op
cdef void row_comb(int op, ct_t *dst, const ct_t *x, const ct_t *y, int64_t w) noexcept nogil:
    if op == EMBER_REDUCE_PROD:
        _row_comb(EMBER_REDUCE_PROD, dst, x, y, w)
    elif op == EMBER_REDUCE_MAX:
        _row_comb(EMBER_REDUCE_MAX, dst, x, y, w)
    elif op == EMBER_REDUCE_MIN:
        _row_comb(EMBER_REDUCE_MIN, dst, x, y, w)
    elif ct_t is int64_t or dst != y:
        _row_comb(EMBER_REDUCE_SUM, dst, x, y, w)
    else:       # the cascade's acc = level + acc, as acc += level (the same bits)
        col_reduce(EMBER_REDUCE_SUM, dst, x, 0, 1, w, False)


# rows of a float sum/mean/max/min folded into acc in order (_sum_block.h)
cdef inline void col_reduce(int op, ct_t *acc, const ct_t *x, int64_t rstride, int64_t rows,
                            int64_t w, bint first) noexcept nogil:
    cdef int kind = 1 if op == EMBER_REDUCE_MAX else (-1 if op == EMBER_REDUCE_MIN else 0)
    if ct_t is float:
        ember_col_reduce_f32(kind, acc, x, rstride, rows, w, first)
    elif ct_t is double:
        ember_col_reduce_f64(kind, acc, x, rstride, rows, w, first)


cdef inline void _copy_row(ct_t *dst, const ct_t *src, int64_t w) noexcept nogil:
    cdef int64_t t
    for t in range(w):
        dst[t] = src[t]


# rows index .. index+n-1 of the reduced range, the first at `ptr`, `rstride` apart
cdef void outer_rows(OuterState *s, const char *ptr, int64_t rstride, int64_t n,
                     int64_t index, ct_t *acc) noexcept nogil:
    cdef const ReducePlan *p = s.p
    cdef ct_t *levels = <ct_t *>s.levels
    cdef const ct_t *x
    cdef int64_t e = 0, j, c, k
    cdef int d
    cdef bint direct = is_native(p.dtype) and s.kstride == 1
    cdef bint whole_rows = direct and ct_t is not int64_t and p.op != EMBER_REDUCE_PROD
    while e < n:
        j = index + e
        if whole_rows:      # the block's rows in one call
            k = min(n - e, ROW_BLOCK - j % ROW_BLOCK)
            col_reduce(p.op, acc, <const ct_t *>(ptr + e * rstride * p.itemsize), rstride, k, s.w,
                    j % ROW_BLOCK == 0)
            j += k - 1
            e += k
        else:
            if direct:
                x = <const ct_t *>(ptr + e * rstride * p.itemsize)
            else:
                load(<ct_t *>s.row, ptr + e * rstride * p.itemsize, p.dtype, s.w, s.kstride)
                x = <const ct_t *>s.row
            if j % ROW_BLOCK == 0:
                _copy_row(acc, x, s.w)
            else:
                row_comb(p.op, acc, acc, x, s.w)
            e += 1
        if (j + 1) % ROW_BLOCK == 0 or j + 1 == p.nred:
            d = s.depth
            c = 1
            while d > 0 and s.counts[d - 1] == c:
                d -= 1
                row_comb(p.op, acc, levels + d * TILE, acc, s.w)
                c *= 2
            _copy_row(levels + d * TILE, acc, s.w)
            s.counts[d] = c
            s.depth = d + 1


cdef int outer_red_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                       int64_t index) noexcept nogil:
    cdef OuterState *s = <OuterState *>arg
    if s.p.ct == CT_F32:
        outer_rows(s, ptrs[0], st[0], n, index, <float *>s.acc)
    elif s.p.ct == CT_F64:
        outer_rows(s, ptrs[0], st[0], n, index, <double *>s.acc)
    else:
        outer_rows(s, ptrs[0], st[0], n, index, <int64_t *>s.acc)
    return EMBER_OK


cdef int outer_outputs(const ReducePlan *p, char **ptrs, const int64_t *st, int64_t n,
                       ct_t *tag) noexcept nogil:
    cdef OuterState s
    cdef int64_t t0 = 0, nblocks = (p.nred + ROW_BLOCK - 1) // ROW_BLOCK
    cdef int d, depth_bound = 1
    cdef char *base
    cdef ct_t *acc
    while (<int64_t>1 << depth_bound) <= nblocks:
        depth_bound += 1            # the cascade never holds more than bit_length(nblocks)
    acc = <ct_t *>malloc((depth_bound + 2) * TILE * sizeof(ct_t))
    if acc == NULL:
        return EMBER_ERR_MEMORY
    s.p = p
    s.kstride = st[1]
    s.acc = acc
    s.row = acc + TILE
    s.levels = acc + 2 * TILE
    while t0 < n:
        s.w = min(<int64_t>TILE, n - t0)
        s.depth = 0
        base = ptrs[1] + t0 * st[1] * p.itemsize
        run_range(&p.red, &base, outer_red_row, &s, 0, p.nred)
        _copy_row(acc, <ct_t *>s.levels + (s.depth - 1) * TILE, s.w)
        for d in range(s.depth - 2, -1, -1):
            row_comb(p.op, acc, <ct_t *>s.levels + d * TILE, acc, s.w)
        finalize(p, acc, s.w)
        store(ptrs[0] + t0 * st[0] * p.itemsize, p.dtype, acc, s.w, st[0])
        t0 += s.w
    free(acc)
    return EMBER_OK


cdef int outer_row(void *arg, char **ptrs, const int64_t *st, int64_t n,
                   int64_t index) noexcept nogil:
    cdef const ReducePlan *p = <const ReducePlan *>arg
    if p.ct == CT_F32:
        return outer_outputs(p, ptrs, st, n, <float *>NULL)
    if p.ct == CT_F64:
        return outer_outputs(p, ptrs, st, n, <double *>NULL)
    return outer_outputs(p, ptrs, st, n, <int64_t *>NULL)


# -- entry point ----------------------------------------------------------------------------

cdef inline int64_t _abs64(int64_t x) noexcept nogil:
    return -x if x < 0 else x


cdef int split_dims(ember_ctx *ctx, const char *name, StridedIter *kept, StridedIter *red,
                    const ember_view *out, const ember_view *a, int32_t nreduce,
                    int out_itemsize, int a_itemsize) noexcept nogil:
    """Check out against a's leading dims and set up the two iterations every reduction
    runs: over the kept dims (out, a) and over the trailing reduced dims (a)."""
    cdef int d, nkeep = a.ndim - nreduce
    if a.ndim > EMBER_MAX_DIM or nreduce < 0 or nkeep < 0 or out.ndim != nkeep:
        return set_error(ctx, EMBER_ERR_VALUE, name, "bad number of dimensions")
    for d in range(a.ndim):
        if a.sizes[d] < 0 or (d < nkeep and out.sizes[d] != a.sizes[d]):
            return set_error(ctx, EMBER_ERR_VALUE, name, "out's shape does not match")
    kept.nargs = 2
    kept.ndim = nkeep
    kept.data[0] = out.data
    kept.data[1] = a.data
    kept.itemsize[0] = out_itemsize
    kept.itemsize[1] = a_itemsize
    for d in range(nkeep):
        kept.sizes[d] = a.sizes[d]
        kept.strides[0][d] = out.strides[d]
        kept.strides[1][d] = a.strides[d]
    iter_coalesce(kept)
    red.nargs = 1
    red.ndim = nreduce
    red.data[0] = a.data
    red.itemsize[0] = a_itemsize
    for d in range(nreduce):
        red.sizes[d] = a.sizes[nkeep + d]
        red.strides[0][d] = a.strides[nkeep + d]
    iter_coalesce(red)
    return EMBER_OK


cdef int reduce_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                       const ember_view *a, int32_t nreduce) noexcept nogil:
    cdef ReducePlan p
    cdef const char *name
    cdef int nt, status
    cdef int64_t work, ksize, kstride, rstride
    if op < 0 or op >= EMBER_REDUCE_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "reduce", "unknown op code")
    name = ember_reduce_names[op]
    if op == EMBER_REDUCE_ARGMAX or op == EMBER_REDUCE_ARGMIN:
        return arg_reduce_kernel(ctx, op, name, out, a, nreduce)
    if a.dtype != out.dtype:
        return set_error(ctx, EMBER_ERR_TYPE, name, "out must have the input's dtype")
    p.itemsize = dtype_itemsize(a.dtype)
    if p.itemsize == 0:
        return set_error(ctx, EMBER_ERR_TYPE, name, "unknown dtype code")
    if op == EMBER_REDUCE_MEAN and not is_floating(a.dtype):
        return error_dtype(ctx, name, a.dtype)
    p.op = op
    p.dtype = a.dtype
    p.ct = compute_type(a.dtype)
    status = split_dims(ctx, name, &p.kept, &p.red, out, a, nreduce, <int>p.itemsize,
                        <int>p.itemsize)
    if status != EMBER_OK:
        return status
    p.nred = p.red.numel

    if p.kept.numel == 0:
        return EMBER_OK
    if p.nred == 0 and (op == EMBER_REDUCE_MAX or op == EMBER_REDUCE_MIN):
        return set_error(ctx, EMBER_ERR_RUNTIME, name,
                         "cannot reduce over an empty dimension (it has no identity)")
    p.direct = is_native(a.dtype) and p.red.ndim == 1 and p.red.strides[0][0] == 1
    work = p.kept.numel * p.nred

    ksize = p.kept.sizes[p.kept.ndim - 1]
    kstride = _abs64(p.kept.strides[1][p.kept.ndim - 1])
    rstride = _abs64(p.red.strides[0][p.red.ndim - 1])
    nt = num_threads()
    if p.kept.numel > 1 and ksize >= 8 and p.nred > 0 and (kstride < rstride or p.nred <= 16):
        status = iter_run(&p.kept, outer_row, &p, work)
    elif nt > 1 and work >= parallel_cutoff() and p.kept.numel < FEW_OUTPUTS * nt \
            and p.nred >= 2 * BLOCK:
        if p.ct == CT_F32:
            status = reduce_few(&p, <float *>NULL)
        elif p.ct == CT_F64:
            status = reduce_few(&p, <double *>NULL)
        else:
            status = reduce_few(&p, <int64_t *>NULL)
    else:
        status = iter_run(&p.kept, inner_row, &p, work)
    if status == EMBER_ERR_MEMORY:
        return set_error(ctx, status, name, "out of memory")
    return status


# -- argmax / argmin --------------------------------------------------------------------------
# One output at a time, its reduced elements visited in row-major order (a strict
# comparison keeps the first extreme; the first NaN is final), threads sharing outputs
# only: the result does not depend on the thread count.  Floating inputs compare in double
# (every dtype converts to it exactly), integers and bool in int64.

cdef enum:
    ARG_STOP = -1       # run_range status: a NaN was found, nothing can beat it


ctypedef struct ArgPlan:
    int op
    int dtype
    int ct
    int64_t itemsize    # a's
    StridedIter kept    # operands (out: int64, a) over the kept dims
    StridedIter red     # operand (a) over the reduced dims


ctypedef struct ArgState:
    const ArgPlan *p
    bint started
    double bestf
    int64_t besti
    int64_t pos


cdef inline void arg_scan(ArgState *s, const ct_t *x, int64_t n, int64_t index,
                          ct_t best) noexcept nogil:
    cdef int64_t i = 0, pos = s.pos
    cdef bint is_max = s.p.op == EMBER_REDUCE_ARGMAX
    if not s.started:
        best = x[0]
        pos = index
        s.started = True
        i = 1
    if ct_t is double:
        if best != best:
            i = n
        elif is_max:
            while i < n:
                if x[i] > best or x[i] != x[i]:
                    best = x[i]
                    pos = index + i
                    if best != best:
                        break
                i += 1
        else:
            while i < n:
                if x[i] < best or x[i] != x[i]:
                    best = x[i]
                    pos = index + i
                    if best != best:
                        break
                i += 1
        s.bestf = best
    else:
        if is_max:
            while i < n:
                if x[i] > best:
                    best = x[i]
                    pos = index + i
                i += 1
        else:
            while i < n:
                if x[i] < best:
                    best = x[i]
                    pos = index + i
                i += 1
        s.besti = <int64_t>best
    s.pos = pos


cdef int arg_chunk(void *arg, char **ptrs, const int64_t *st, int64_t n,
                   int64_t index) noexcept nogil:
    cdef ArgState *s = <ArgState *>arg
    cdef const ArgPlan *p = s.p
    cdef double fbuf[BUF_LEN]
    cdef int64_t ibuf[BUF_LEN]
    cdef int64_t j = 0, w
    while j < n:
        w = min(<int64_t>BUF_LEN, n - j)
        if p.ct == CT_F64:
            load(fbuf, ptrs[0] + j * st[0] * p.itemsize, p.dtype, w, st[0])
            arg_scan(s, fbuf, w, index + j, s.bestf)
            if s.bestf != s.bestf:
                return ARG_STOP
        else:
            load(ibuf, ptrs[0] + j * st[0] * p.itemsize, p.dtype, w, st[0])
            arg_scan(s, ibuf, w, index + j, s.besti)
        j += w
    return EMBER_OK


cdef int arg_outputs(void *arg, char **ptrs, const int64_t *st, int64_t n,
                     int64_t index) noexcept nogil:
    cdef const ArgPlan *p = <const ArgPlan *>arg
    cdef ArgState s
    cdef int64_t e
    cdef char *base
    cdef int status
    for e in range(n):
        s.p = p
        s.started = False
        s.bestf = 0
        s.besti = 0
        s.pos = 0
        base = ptrs[1] + e * st[1] * p.itemsize
        status = run_range(&p.red, &base, arg_chunk, &s, 0, p.red.numel)
        if status != EMBER_OK and status != ARG_STOP:
            return status
        (<int64_t *>ptrs[0])[e * st[0]] = s.pos
    return EMBER_OK


cdef int arg_reduce_kernel(ember_ctx *ctx, int32_t op, const char *name,
                           const ember_view *out, const ember_view *a,
                           int32_t nreduce) noexcept nogil:
    cdef ArgPlan p
    if out.dtype != EMBER_INT64:
        return set_error(ctx, EMBER_ERR_TYPE, name, "out must be int64")
    p.itemsize = dtype_itemsize(a.dtype)
    if p.itemsize == 0:
        return set_error(ctx, EMBER_ERR_TYPE, name, "unknown dtype code")
    p.op = op
    p.dtype = a.dtype
    p.ct = CT_F64 if is_floating(a.dtype) else CT_I64
    cdef int status = split_dims(ctx, name, &p.kept, &p.red, out, a, nreduce, 8,
                                 <int>p.itemsize)
    if status != EMBER_OK:
        return status
    if p.kept.numel == 0:
        return EMBER_OK
    if p.red.numel == 0:
        return set_error(ctx, EMBER_ERR_RUNTIME, name,
                         "cannot reduce over an empty dimension (it has no identity)")
    return iter_run(&p.kept, arg_outputs, &p, p.kept.numel * p.red.numel)
