# The index family: gather/scatter along one dim (the `index` table entry) and binary
# search / multinomial sampling along the last dim (`search`).  See abi.h for the contract.
#
# gather/scatter: the positions of `index` are split into "lines" along `dim`; the other
# dims form a strided iteration (out, a, index) that threads share.  Two positions that
# differ outside `dim` never touch the same out element, so threads never race, and each
# line is walked in order, so duplicate indices combine in row-major order whatever the
# thread count (scatter_add gives the same bits at 1 or 16 threads).  Inside a run of
# positions the loop nest puts `dim` innermost when it is the index's fastest dim, else
# outermost (index_add along dim 0 of a row-major matrix then walks rows).
#
# GATHER/SCATTER move bytes (any dtype, by itemsize); the reductions compute in place for
# int64/float32/float64 and through the compute type (load/store of one element) for the
# narrow dtypes, float16 and bfloat16 (rounded to nearest even on store).
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.stdio cimport snprintf
from libc.string cimport memcpy

from ember_cpu._abi cimport (
    ember_ctx, ember_view, EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_TYPE, EMBER_ERR_INDEX,
    EMBER_ERR_RUNTIME, EMBER_ERR_MEMORY, EMBER_ERROR_LEN, EMBER_MAX_DIM, EMBER_INT64,
    EMBER_INT32, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_INDEX_GATHER, EMBER_INDEX_SCATTER,
    EMBER_INDEX_SCATTER_ADD, EMBER_INDEX_SCATTER_MUL, EMBER_INDEX_SCATTER_AMAX,
    EMBER_INDEX_SCATTER_AMIN, EMBER_INDEX_COUNT, EMBER_INDEX_WRAP, EMBER_SEARCH_LEFT,
    EMBER_SEARCH_RIGHT, EMBER_SEARCH_MULTINOMIAL, EMBER_SEARCH_COUNT,
)
from ember_cpu._scalar cimport _add, _mul, _max, _min
from ember_cpu._strided cimport (
    ct_t, CT_F32, CT_F64, StridedIter, compute_type, dtype_itemsize, is_floating,
    iter_coalesce, iter_run, load, store, set_error,
)

cdef extern from *:
    """
    static const char *const ember_index_names[] = {"gather", "scatter", "scatter_add",
        "scatter_mul", "scatter_amax", "scatter_amin"};
    static const char *const ember_search_names[] = {"searchsorted", "searchsorted",
        "multinomial"};
    /* the first failing thread writes the message; the others only return the code */
    static int ember_claim(int *flag) { return __sync_bool_compare_and_swap(flag, 0, 1); }
    """
    const char *ember_index_names[]
    const char *ember_search_names[]
    bint ember_claim(int *flag) noexcept nogil

ctypedef fused word_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t


ctypedef struct IndexPlan:
    int op
    int dtype
    int itemsize
    bint wrap
    bint gather
    bint dim_inner      # loop nest: dim innermost (else outermost)
    int64_t length      # index's size along dim
    int64_t limit       # valid indices: [0, limit)
    int64_t sw, st, si  # strides along dim: walked operand, target operand, index
    int dim
    int failed          # set once by the first failing thread
    ember_ctx *ctx
    StridedIter pos     # operands (walked, target, index) over the other dims


cdef int bad_index(IndexPlan *p, int64_t value) noexcept nogil:
    if ember_claim(&p.failed):
        snprintf(p.ctx.error, EMBER_ERROR_LEN,
                 "index %lld is out of bounds for dimension %d with size %lld",
                 <long long>value, p.dim, <long long>p.limit)
    return EMBER_ERR_INDEX


# the checked (and maybe wrapped) index, or -1
cdef inline int64_t checked(const IndexPlan *p, int64_t i) noexcept nogil:
    if i < 0 and p.wrap:
        i += p.limit
    return i if 0 <= i < p.limit else -1


cdef inline void run_shape(const IndexPlan *p, int64_t n, const int64_t *step,
                           int64_t *g) noexcept nogil:
    """The two loops of a run, outer then inner (`dim` inner or outer): their lengths and
    the walked operand's, target's and index's strides in each (g[0..7])."""
    if p.dim_inner:
        g[0], g[1] = n, p.length
        g[2], g[3], g[4], g[5], g[6], g[7] = step[0], p.sw, step[1], 0, step[2], p.si
    else:
        g[0], g[1] = p.length, n
        g[2], g[3], g[4], g[5], g[6], g[7] = p.sw, step[0], 0, step[1], p.si, step[2]


# one run of n positions: w/t/ix point at the walked operand, the target and the index at
# the run's first position; sw/st/si are their strides from one position to the next
cdef int walk(IndexPlan *p, char *w, char *t, const char *ix, int64_t n,
              const int64_t *step, word_t *tag) noexcept nogil:
    cdef int64_t no, ni, wo, wi, to, ti, io, ii, o, i, j, raw
    cdef word_t *pw
    cdef word_t *pt
    cdef int64_t g[8]
    cdef int rev = -1           # whether shared indices reverse the dim (-1: not looked yet)
    run_shape(p, n, step, g)
    no, ni, wo, wi, to, ti, io, ii = g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]
    for o in range(no):
        if ii == 0:
            # one index for the whole inner loop (index_select, index_copy along dim 0:
            # rows): read and checked once, the row moved as a block
            raw = (<const int64_t *>ix)[o * io]
            j = checked(p, raw)
            if j < 0:
                return bad_index(p, raw)
            pw = <word_t *>w + o * wo
            pt = <word_t *>t + o * to + j * p.st
            if wi == 1 and ti == 1:
                if p.gather:
                    memcpy(pw, pt, ni * sizeof(word_t))
                else:
                    memcpy(pt, pw, ni * sizeof(word_t))
            elif p.gather:
                for i in range(ni):
                    pw[i * wi] = pt[i * ti]
            else:
                for i in range(ni):
                    pt[i * ti] = pw[i * wi]
            continue
        if io == 0 and o > 0 and p.gather:
            # the same indices for every position (index_select along the last dim, flip):
            # checked at this run's first position, so a plain gather from then on
            pw = <word_t *>w + o * wo
            pt = <word_t *>t + o * to
            if wi == 1 and ii == 1 and p.st == 1:
                if rev < 0:     # flip's indices, n-1 .. 0 (or -1 .. -n): a reversed copy
                    rev = ni == p.limit
                    for i in range(ni):
                        raw = (<const int64_t *>ix)[i]
                        rev = rev and (raw == ni - 1 - i or raw == -1 - i)
                if rev:
                    for i in range(ni):
                        pw[i] = pt[ni - 1 - i]
                    continue
            for i in range(ni):
                raw = (<const int64_t *>ix)[i * ii]
                pw[i * wi] = pt[(raw + p.limit if raw < 0 else raw) * p.st]
            continue
        if move_line(p, <word_t *>w + o * wo, <word_t *>t + o * to,
                     <const int64_t *>ix + o * io, ni, wi, ti, ii):
            return EMBER_ERR_INDEX
    return EMBER_OK


# one line of positions, element by element: the plan's fields read once into locals (a
# store through the operands' pointers may alias them for all the compiler knows), so
# the loop is a load, a compare and a move
cdef inline int move_line(IndexPlan *p, word_t *w, word_t *t, const int64_t *ix, int64_t n,
                          int64_t wi, int64_t ti, int64_t ii) noexcept nogil:
    cdef int64_t i, j, raw, lim = p.limit, st = p.st
    cdef bint wrap = p.wrap, gather = p.gather
    for i in range(n):
        raw = ix[i * ii]
        j = raw + lim if raw < 0 and wrap else raw
        if <uint64_t>j >= <uint64_t>lim:
            return bad_index(p, raw)
        if gather:
            w[i * wi] = t[i * ti + j * st]
        else:
            t[i * ti + j * st] = w[i * wi]
    return EMBER_OK


# a row of an index_add: t[i] += w[i] (the per-element loop's order and bits)
cdef void add_row(ct_t *t, const ct_t *w, int64_t n, int64_t ti, int64_t wi) noexcept nogil:
    cdef int64_t i
    if ti == 1 and wi == 1:
        for i in range(n):
            t[i] = _add(t[i], w[i])
    else:
        for i in range(n):
            t[i * ti] = _add(t[i * ti], w[i * wi])


cdef inline ct_t combine(int op, ct_t x, ct_t y) noexcept nogil:
    if op == EMBER_INDEX_SCATTER_ADD:
        return _add(x, y)
    if op == EMBER_INDEX_SCATTER_MUL:
        return _mul(x, y)
    if op == EMBER_INDEX_SCATTER_AMAX:
        return _max(x, y)
    return _min(x, y)


# the reducing scatters; `native`: the dtype is stored as ct_t (no conversion)
cdef int walk_reduce(IndexPlan *p, char *w, char *t, const char *ix, int64_t n,
                     const int64_t *step, bint native, ct_t *tag) noexcept nogil:
    cdef int64_t no, ni, wo, wi, to, ti, io, ii, o, i, j, raw, sz = p.itemsize
    cdef ct_t x, y
    cdef char *pw
    cdef char *pt
    cdef int op = p.op
    cdef int64_t g[8]
    run_shape(p, n, step, g)
    no, ni, wo, wi, to, ti, io, ii = g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]
    for o in range(no):
        if ii == 0 and native and op == EMBER_INDEX_SCATTER_ADD:
            # index_add along dim 0 (an embedding's gradient): one index per row, the row
            # added in one loop that vectorises
            raw = (<const int64_t *>ix)[o * io]
            j = checked(p, raw)
            if j < 0:
                return bad_index(p, raw)
            add_row(<ct_t *>(t + (o * to + j * p.st) * sz), <const ct_t *>(w + o * wo * sz),
                    ni, ti, wi)
            continue
        if native and op == EMBER_INDEX_SCATTER_ADD:
            # scatter_add along a row's dim (a histogram, a GNN's aggregation): its own
            # loop, as move_line's
            if add_line(p, <ct_t *>(t + o * to * sz), <const ct_t *>(w + o * wo * sz),
                        <const int64_t *>ix + o * io, ni, wi, ti, ii):
                return EMBER_ERR_INDEX
            continue
        for i in range(ni):
            raw = (<const int64_t *>ix)[o * io + i * ii]
            j = checked(p, raw)
            if j < 0:
                return bad_index(p, raw)
            pw = w + (o * wo + i * wi) * sz
            pt = t + (o * to + i * ti + j * p.st) * sz
            if native:
                (<ct_t *>pt)[0] = combine(op, (<ct_t *>pt)[0], (<ct_t *>pw)[0])
            else:
                load(&x, pt, p.dtype, 1, 1)
                load(&y, pw, p.dtype, 1, 1)
                x = combine(op, x, y)
                store(pt, p.dtype, &x, 1, 1)
    return EMBER_OK


cdef inline int add_line(IndexPlan *p, ct_t *t, const ct_t *w, const int64_t *ix, int64_t n,
                         int64_t wi, int64_t ti, int64_t ii) noexcept nogil:
    cdef int64_t i, j, raw, lim = p.limit, st = p.st
    cdef bint wrap = p.wrap
    for i in range(n):
        raw = ix[i * ii]
        j = raw + lim if raw < 0 and wrap else raw
        if <uint64_t>j >= <uint64_t>lim:
            return bad_index(p, raw)
        t[i * ti + j * st] = _add(t[i * ti + j * st], w[i * wi])
    return EMBER_OK


cdef int index_run(void *arg, char **ptrs, const int64_t *step, int64_t n,
                   int64_t pos) noexcept nogil:
    cdef IndexPlan *p = <IndexPlan *>arg
    cdef const char *ix = ptrs[2]
    if p.op == EMBER_INDEX_GATHER or p.op == EMBER_INDEX_SCATTER:
        if p.itemsize == 1:
            return walk(p, ptrs[0], ptrs[1], ix, n, step, <uint8_t *>NULL)
        if p.itemsize == 2:
            return walk(p, ptrs[0], ptrs[1], ix, n, step, <uint16_t *>NULL)
        if p.itemsize == 4:
            return walk(p, ptrs[0], ptrs[1], ix, n, step, <uint32_t *>NULL)
        return walk(p, ptrs[0], ptrs[1], ix, n, step, <uint64_t *>NULL)
    if p.dtype == EMBER_FLOAT32:
        return walk_reduce(p, ptrs[0], ptrs[1], ix, n, step, True, <float *>NULL)
    if p.dtype == EMBER_FLOAT64:
        return walk_reduce(p, ptrs[0], ptrs[1], ix, n, step, True, <double *>NULL)
    if p.dtype == EMBER_INT64:
        return walk_reduce(p, ptrs[0], ptrs[1], ix, n, step, True, <int64_t *>NULL)
    if compute_type(p.dtype) == CT_F32:
        return walk_reduce(p, ptrs[0], ptrs[1], ix, n, step, False, <float *>NULL)
    return walk_reduce(p, ptrs[0], ptrs[1], ix, n, step, False, <int64_t *>NULL)


cdef inline int64_t abs64(int64_t x) noexcept nogil:
    return -x if x < 0 else x


cdef int index_kernel(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                      const ember_view *index, int32_t dim) noexcept nogil:
    cdef IndexPlan p
    cdef const ember_view *w
    cdef const ember_view *t
    cdef const char *name
    cdef int d, k, nd = index.ndim
    p.wrap = (op & EMBER_INDEX_WRAP) != 0
    op &= ~EMBER_INDEX_WRAP
    if op < 0 or op >= EMBER_INDEX_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "index", "unknown op code")
    name = ember_index_names[op]
    if nd < 1 or nd > EMBER_MAX_DIM or out.ndim != nd or a.ndim != nd or dim < 0 \
            or dim >= nd:
        return set_error(ctx, EMBER_ERR_VALUE, name, "bad number of dimensions or dim")
    if index.dtype != EMBER_INT64:
        return set_error(ctx, EMBER_ERR_TYPE, name, "index must be int64")
    if a.dtype != out.dtype or dtype_itemsize(out.dtype) == 0:
        return set_error(ctx, EMBER_ERR_TYPE, name, "out and a need one known dtype")
    p.gather = op == EMBER_INDEX_GATHER
    w = out if p.gather else a          # walked at index's positions
    t = a if p.gather else out          # addressed through the index along dim
    for d in range(nd):
        if index.sizes[d] < 0 or w.sizes[d] < index.sizes[d] or \
                (d != dim and t.sizes[d] < index.sizes[d]) or (p.gather and
                                                               out.sizes[d] != index.sizes[d]):
            return set_error(ctx, EMBER_ERR_VALUE, name, "operand shapes do not match")
    p.op = op
    p.dtype = out.dtype
    p.itemsize = dtype_itemsize(out.dtype)
    p.dim = dim
    p.failed = 0
    p.ctx = ctx
    p.length = index.sizes[dim]
    p.limit = t.sizes[dim]
    p.sw = w.strides[dim]
    p.st = t.strides[dim]
    p.si = index.strides[dim]
    p.pos.nargs = 3
    p.pos.ndim = 0
    p.pos.data[0] = w.data
    p.pos.data[1] = t.data
    p.pos.data[2] = index.data
    p.pos.itemsize[0] = p.pos.itemsize[1] = p.itemsize
    p.pos.itemsize[2] = 8
    for d in range(nd):
        if d == dim:
            continue
        k = p.pos.ndim
        p.pos.sizes[k] = index.sizes[d]
        p.pos.strides[0][k] = w.strides[d]
        p.pos.strides[1][k] = t.strides[d]
        p.pos.strides[2][k] = index.strides[d]
        p.pos.ndim += 1
    iter_coalesce(&p.pos)
    if p.pos.numel == 0 or p.length == 0:
        return EMBER_OK
    # dim innermost when the walked operand steps along it at least as finely as across
    # positions (gather along a row's dim walks rows; index_select(0) walks columns)
    p.dim_inner = abs64(p.sw) <= abs64(p.pos.strides[0][p.pos.ndim - 1]) or p.pos.numel == 1
    return iter_run(&p.pos, index_run, &p, p.pos.numel * p.length)


# -- search ---------------------------------------------------------------------------------

ctypedef struct SearchPlan:
    int op
    int dtype
    int out_dtype
    int64_t m, n        # row length of sorted, of values
    int64_t ss, sv, so  # strides along the last dim: sorted, values, out
    int isz, osz
    int failed
    ember_ctx *ctx
    StridedIter rows    # (out, sorted, values) over the leading dims


# x < y with NaN the largest (a NaN is not less than anything; everything else is less
# than a NaN), as torch.sort orders them
cdef inline bint lt(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return x < y
    else:
        return x < y or (y != y and x == x)


cdef int64_t bisect(const char *row, int dtype, int64_t m, int64_t stride, ct_t v,
                    bint right) noexcept nogil:
    cdef int64_t lo = 0, hi = m, mid
    cdef ct_t x
    while lo < hi:
        mid = lo + (hi - lo) // 2
        load(&x, row + mid * stride, dtype, 1, 1)
        if (lt(v, x) if right else not lt(x, v)):
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef int search_row(SearchPlan *p, char *po, const char *ps, const char *pv,
                    ct_t *tag) noexcept nogil:
    cdef int64_t j, r
    cdef ct_t v
    for j in range(p.n):
        load(&v, pv + j * p.sv * p.isz, p.dtype, 1, 1)
        r = bisect(ps, p.dtype, p.m, p.ss * p.isz, v, p.op == EMBER_SEARCH_RIGHT)
        store(po + j * p.so * p.osz, p.out_dtype, &r, 1, 1)
    return EMBER_OK


cdef int search_fail(SearchPlan *p, const char *msg) noexcept nogil:
    if ember_claim(&p.failed):
        snprintf(p.ctx.error, EMBER_ERROR_LEN, "%s", msg)
    return EMBER_ERR_RUNTIME


# one row of multinomial draws: checks the weights, builds their running sum, bisects it
cdef int sample_row(SearchPlan *p, char *po, const char *ps, const char *pv) noexcept nogil:
    cdef double *cdf = <double *>malloc(max(p.m, 1) * sizeof(double))
    cdef double acc = 0, w, u
    cdef int64_t i, j, lo, hi, mid
    if cdf == NULL:
        return EMBER_ERR_MEMORY
    for i in range(p.m):
        load(&w, ps + i * p.ss * p.isz, p.dtype, 1, 1)
        if not (w >= 0) or w == INFINITY:
            free(cdf)
            return search_fail(p, "probability tensor contains either `inf`, `nan` or "
                                  "element < 0")
        acc += w
        cdf[i] = acc
    if not (acc > 0):
        free(cdf)
        return search_fail(p, "invalid multinomial distribution (sum of probabilities <= 0)")
    for j in range(p.n):
        load(&u, pv + j * p.sv * p.isz, p.dtype, 1, 1)
        u *= acc
        lo, hi = 0, p.m - 1            # the first i with cdf[i] > u (never a zero weight)
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if cdf[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        store(po + j * p.so * p.osz, p.out_dtype, &lo, 1, 1)
    free(cdf)
    return EMBER_OK


cdef int search_run(void *arg, char **ptrs, const int64_t *step, int64_t n,
                    int64_t pos) noexcept nogil:
    cdef SearchPlan *p = <SearchPlan *>arg
    cdef int64_t e
    cdef int status = EMBER_OK, ct = compute_type(p.dtype)
    cdef char *po
    cdef const char *ps
    cdef const char *pv
    for e in range(n):
        po = ptrs[0] + e * step[0] * p.osz
        ps = ptrs[1] + e * step[1] * p.isz
        pv = ptrs[2] + e * step[2] * p.isz
        if p.op == EMBER_SEARCH_MULTINOMIAL:
            status = sample_row(p, po, ps, pv)
        elif ct == CT_F32 or ct == CT_F64:
            status = search_row(p, po, ps, pv, <double *>NULL)
        else:
            status = search_row(p, po, ps, pv, <int64_t *>NULL)
        if status != EMBER_OK:
            return status
    return EMBER_OK


cdef int search_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                       const ember_view *sorted, const ember_view *values) noexcept nogil:
    cdef SearchPlan p
    cdef const char *name
    cdef int d, nd = values.ndim, last
    if op < 0 or op >= EMBER_SEARCH_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "search", "unknown op code")
    name = ember_search_names[op]
    if nd < 1 or nd > EMBER_MAX_DIM or sorted.ndim != nd or out.ndim != nd:
        return set_error(ctx, EMBER_ERR_VALUE, name, "bad number of dimensions")
    if sorted.dtype != values.dtype or dtype_itemsize(values.dtype) == 0:
        return set_error(ctx, EMBER_ERR_TYPE, name, "sorted and values need one known dtype")
    if out.dtype != EMBER_INT64 and out.dtype != EMBER_INT32:
        return set_error(ctx, EMBER_ERR_TYPE, name, "out must be int64 or int32")
    if op == EMBER_SEARCH_MULTINOMIAL and not is_floating(values.dtype):
        return set_error(ctx, EMBER_ERR_TYPE, name, "needs floating weights")
    last = nd - 1
    for d in range(nd):
        if values.sizes[d] < 0 or out.sizes[d] != values.sizes[d] or \
                (d < last and sorted.sizes[d] != values.sizes[d]):
            return set_error(ctx, EMBER_ERR_VALUE, name, "operand shapes do not match")
    p.op = op
    p.dtype = values.dtype
    p.out_dtype = out.dtype
    p.isz = dtype_itemsize(values.dtype)
    p.osz = dtype_itemsize(out.dtype)
    p.m = sorted.sizes[last]
    p.n = values.sizes[last]
    p.ss = sorted.strides[last]
    p.sv = values.strides[last]
    p.so = out.strides[last]
    p.failed = 0
    p.ctx = ctx
    p.rows.nargs = 3
    p.rows.ndim = last
    p.rows.data[0] = out.data
    p.rows.data[1] = sorted.data
    p.rows.data[2] = values.data
    p.rows.itemsize[0] = p.osz
    p.rows.itemsize[1] = p.rows.itemsize[2] = p.isz
    for d in range(last):
        p.rows.sizes[d] = values.sizes[d]
        p.rows.strides[0][d] = out.strides[d]
        p.rows.strides[1][d] = sorted.strides[d]
        p.rows.strides[2][d] = values.strides[d]
    iter_coalesce(&p.rows)
    if p.rows.numel == 0 or (p.n == 0 and op != EMBER_SEARCH_MULTINOMIAL):
        return EMBER_OK
    return iter_run(&p.rows, search_run, &p,
                    p.rows.numel * (p.n + (p.m if op == EMBER_SEARCH_MULTINOMIAL else 1)))
