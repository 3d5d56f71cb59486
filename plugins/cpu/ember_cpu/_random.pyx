# Random fills from the counter-based Philox4x32-10 generator (Salmon et al., SC'11).
#
# Element i of out (row-major) draws from counter (offset + i) under key `seed`, so the
# numbers depend on (seed, offset, index) only: never on the thread count or on how the
# iteration is split.  Each element uses its own 4x32-bit output: uniform float32 takes
# 24 bits, float64 53 bits; normal is Box-Muller on two uniforms from the same output.
from libc.math cimport nextafter, nextafterf, INFINITY
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from ember_cpu._abi cimport (
    EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_RUNTIME, EMBER_RANDOM_UNIFORM,
    EMBER_RANDOM_NORMAL, EMBER_RANDOM_COUNT,
)
from ember_cpu._strided cimport (
    CT_F32, BUF_LEN, StageBuf, StridedIter, compute_type, is_floating, is_native, iter_init,
    iter_run, store_ct, set_error, error_dtype,
)


DEF RANDOM_COST = 16       # an element's work in adds (measured 20-27x, float32)

cdef inline void philox4x32_10(uint32_t *c, uint32_t k0, uint32_t k1) noexcept nogil:
    cdef uint64_t p0, p1
    cdef int r
    for r in range(10):
        if r > 0:
            k0 += 0x9E3779B9u
            k1 += 0xBB67AE85u
        p0 = <uint64_t>0xD2511F53u * c[0]
        p1 = <uint64_t>0xCD9E8D57u * c[2]
        c[0], c[1], c[2], c[3] = (
            <uint32_t>(p1 >> 32) ^ c[1] ^ k0, <uint32_t>p1,
            <uint32_t>(p0 >> 32) ^ c[3] ^ k1, <uint32_t>p0,
        )


ctypedef struct RandomCall:
    int op
    int dtype
    int ct
    bint native
    int64_t itemsize
    uint32_t k0, k1
    uint64_t offset
    double p0, p1


cdef extern from "_philox.h":
    void ember_philox_block(uint32_t *w0, uint32_t *w1, uint32_t *w2, uint32_t *w3,
                            uint64_t first, int64_t n, uint32_t k0, uint32_t k1) noexcept nogil

cdef extern from "_random_rows.h":
    void ember_uniform_f32(float *o, const uint32_t *w0, int64_t n, float lo, float hi,
                           float below) noexcept nogil
    void ember_uniform_f64(double *o, const uint32_t *w0, const uint32_t *w1, int64_t n,
                           double lo, double hi, double below) noexcept nogil
    void ember_normal_f32(float *o, const uint32_t *w0, const uint32_t *w1, int64_t n,
                          float mean, float std) noexcept nogil
    void ember_normal_f64(double *o, const uint32_t *w0, const uint32_t *w1,
                          const uint32_t *w2, const uint32_t *w3, int64_t n, double mean,
                          double std) noexcept nogil

DEF WORDS_BLOCK = 256         # counters per vectorised Philox block


ctypedef struct Words:        # the 4 words of WORDS_BLOCK consecutive counters, lane by lane
    uint32_t w[4][WORDS_BLOCK]


cdef void generate_f32(const RandomCall *r, float *dst, int64_t n,
                       uint64_t first) noexcept nogil:
    cdef Words c
    cdef int64_t j, m
    cdef float p0 = <float>r.p0, p1 = <float>r.p1
    cdef float below = nextafterf(p1, -INFINITY)
    for j in range(0, n, WORDS_BLOCK):
        m = min(<int64_t>WORDS_BLOCK, n - j)
        ember_philox_block(c.w[0], c.w[1], c.w[2], c.w[3], first + <uint64_t>j, m, r.k0, r.k1)
        if r.op == EMBER_RANDOM_UNIFORM:
            ember_uniform_f32(dst + j, c.w[0], m, p0, p1, below)
        else:                             # mean p0, std p1
            ember_normal_f32(dst + j, c.w[0], c.w[1], m, p0, p1)


cdef void generate_f64(const RandomCall *r, double *dst, int64_t n,
                       uint64_t first) noexcept nogil:
    cdef Words c
    cdef int64_t j, m
    cdef double below = nextafter(r.p1, -INFINITY)
    for j in range(0, n, WORDS_BLOCK):
        m = min(<int64_t>WORDS_BLOCK, n - j)
        ember_philox_block(c.w[0], c.w[1], c.w[2], c.w[3], first + <uint64_t>j, m, r.k0, r.k1)
        if r.op == EMBER_RANDOM_UNIFORM:
            ember_uniform_f64(dst + j, c.w[0], c.w[1], m, r.p0, r.p1, below)
        else:
            ember_normal_f64(dst + j, c.w[0], c.w[1], c.w[2], c.w[3], m, r.p0, r.p1)


cdef int random_row(void *arg, char **ptrs, const int64_t *strides, int64_t n,
                    int64_t index) noexcept nogil:
    cdef const RandomCall *r = <const RandomCall *>arg
    cdef StageBuf buf
    cdef bint direct = r.native and strides[0] == 1
    cdef void *dst
    cdef int64_t i = 0, m
    while i < n:
        m = n - i if direct else min(<int64_t>BUF_LEN, n - i)
        dst = ptrs[0] + i * r.itemsize if direct else <void *>&buf
        if r.ct == CT_F32:
            generate_f32(r, <float *>dst, m, r.offset + <uint64_t>(index + i))
        else:
            generate_f64(r, <double *>dst, m, r.offset + <uint64_t>(index + i))
        if not direct:
            store_ct(r.ct, ptrs[0] + i * strides[0] * r.itemsize, r.dtype, &buf, m, strides[0])
        i += m
    return EMBER_OK


cdef int random_kernel(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                       uint64_t offset, double p0, double p1) noexcept nogil:
    cdef StridedIter it
    cdef const ember_view *views[1]
    cdef RandomCall r
    cdef const char *name
    cdef int status
    if op < 0 or op >= EMBER_RANDOM_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "random", "unknown op code")
    name = "uniform_" if op == EMBER_RANDOM_UNIFORM else "normal_"
    if not is_floating(out.dtype):
        return error_dtype(ctx, name, out.dtype)
    if op == EMBER_RANDOM_UNIFORM and not p0 <= p1:
        return set_error(ctx, EMBER_ERR_RUNTIME, name, "expects from <= to")
    if op == EMBER_RANDOM_NORMAL and not p1 >= 0:
        return set_error(ctx, EMBER_ERR_RUNTIME, name, "expects std >= 0.0")
    views[0] = out
    # no reordering: element i must be out's i-th element in row-major order
    status = iter_init(&it, ctx, name, 1, views, False)
    if status != EMBER_OK:
        return status
    r.op = op
    r.dtype = out.dtype
    r.ct = compute_type(out.dtype)
    r.native = is_native(out.dtype)
    r.itemsize = it.itemsize[0]
    r.k0 = <uint32_t>seed
    r.k1 = <uint32_t>(seed >> 32)
    r.offset = offset
    r.p0 = p0
    r.p1 = p1
    # a Philox draw costs ~20 adds: the parallel cutoff counts adds
    return iter_run(&it, random_row, &r, it.numel * RANDOM_COST)


def _philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1):
    """Philox4x32-10 of one counter (for known-answer tests)."""
    cdef uint32_t c[4]
    c[0], c[1], c[2], c[3] = c0, c1, c2, c3
    philox4x32_10(c, k0, k1)
    return c[0], c[1], c[2], c[3]
