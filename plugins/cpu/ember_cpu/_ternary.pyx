# lerp, addcmul and addcdiv (abi.h's optional `ternary` entry, ABI 6.5): out = f(a, b, w)
# in one pass (_ternary_rows.h), w = c or the number p.  Operands share out's floating
# dtype and are broadcast to its shape; runs of float32/float64 with unit strides go to the
# row functions directly, anything else (float16/bfloat16, strided or broadcast operands)
# through staging buffers of the compute type.  Elements are independent: the same bits
# at any thread count.
from libc.stdint cimport int32_t, int64_t

from ember_cpu._abi cimport (
    EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_VALUE, EMBER_OK, EMBER_TERNARY_ADDCDIV,
    EMBER_TERNARY_ADDCMUL, EMBER_TERNARY_COUNT, EMBER_TERNARY_LERP, ember_ctx, ember_view,
)
from ember_cpu._strided cimport (
    BUF_LEN, CT_F32, StageBuf, StridedIter, compute_type, is_floating, is_native, iter_init,
    iter_run, load_ct, set_error, store_ct,
)

cdef extern from "_ternary_rows.h":
    void ember_lerp_f32(float *o, const float *a, const float *b, const float *w, float p,
                        int64_t n) noexcept nogil
    void ember_lerp_f64(double *o, const double *a, const double *b, const double *w,
                        double p, int64_t n) noexcept nogil
    void ember_addcmul_f32(float *o, const float *a, const float *b, const float *c, float p,
                           int64_t n) noexcept nogil
    void ember_addcmul_f64(double *o, const double *a, const double *b, const double *c,
                           double p, int64_t n) noexcept nogil
    void ember_addcdiv_f32(float *o, const float *a, const float *b, const float *c, float p,
                           int64_t n) noexcept nogil
    void ember_addcdiv_f64(double *o, const double *a, const double *b, const double *c,
                           double p, int64_t n) noexcept nogil

# the parallel cutoff counts elements of an add: these read three operands (four with c)
DEF TERNARY_COST = 2


ctypedef struct TernaryCall:
    int32_t op
    int ct                  # CT_F32 or CT_F64
    int dtype
    bint native             # float32/float64: runs of unit stride need no staging
    bint has_c
    double p


cdef void rows(const TernaryCall *t, void *o, const void *a, const void *b, const void *c,
               int64_t n) noexcept nogil:
    """The op over n elements of unit stride in the compute type."""
    if t.ct == CT_F32:
        if t.op == EMBER_TERNARY_LERP:
            ember_lerp_f32(<float *>o, <const float *>a, <const float *>b, <const float *>c,
                           <float>t.p, n)
        elif t.op == EMBER_TERNARY_ADDCMUL:
            ember_addcmul_f32(<float *>o, <const float *>a, <const float *>b,
                              <const float *>c, <float>t.p, n)
        else:
            ember_addcdiv_f32(<float *>o, <const float *>a, <const float *>b,
                              <const float *>c, <float>t.p, n)
    else:
        if t.op == EMBER_TERNARY_LERP:
            ember_lerp_f64(<double *>o, <const double *>a, <const double *>b,
                           <const double *>c, t.p, n)
        elif t.op == EMBER_TERNARY_ADDCMUL:
            ember_addcmul_f64(<double *>o, <const double *>a, <const double *>b,
                              <const double *>c, t.p, n)
        else:
            ember_addcdiv_f64(<double *>o, <const double *>a, <const double *>b,
                              <const double *>c, t.p, n)


cdef int ternary_row(void *arg, char **ptrs, const int64_t *strides, int64_t n,
                     int64_t index) noexcept nogil:
    cdef const TernaryCall *t = <const TernaryCall *>arg
    cdef int nin = 3 if t.has_c else 2, k
    cdef bint direct = t.native and strides[0] == 1
    for k in range(1, nin + 1):
        direct = direct and strides[k] == 1
    if direct:
        rows(t, ptrs[0], ptrs[1], ptrs[2], ptrs[3] if t.has_c else NULL, n)
        return EMBER_OK
    cdef StageBuf bo, ba, bb, bc
    cdef void *ins[3]
    cdef int64_t i = 0, m, size = 4 if t.ct == CT_F32 else 8
    cdef int64_t item = size if t.native else 2       # float16/bfloat16: 2 bytes
    ins[0], ins[1], ins[2] = &ba, &bb, &bc
    while i < n:
        m = min(<int64_t>BUF_LEN, n - i)
        for k in range(nin):
            load_ct(t.ct, ins[k], ptrs[k + 1] + i * strides[k + 1] * item, t.dtype, m,
                    strides[k + 1])
        rows(t, &bo, &ba, &bb, &bc if t.has_c else NULL, m)
        store_ct(t.ct, ptrs[0] + i * strides[0] * item, t.dtype, &bo, m, strides[0])
        i += m
    return EMBER_OK


cdef int ternary_kernel(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                        const ember_view *b, const ember_view *c, double p) noexcept nogil:
    if op < 0 or op >= EMBER_TERNARY_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "ternary", "unknown op code")
    if c == NULL and op != EMBER_TERNARY_LERP:
        return set_error(ctx, EMBER_ERR_VALUE, "ternary", "addcmul and addcdiv need c")
    if a.dtype != out.dtype or b.dtype != out.dtype or (c != NULL and c.dtype != out.dtype):
        return set_error(ctx, EMBER_ERR_VALUE, "ternary", "operands must have out's dtype")
    if not is_floating(out.dtype):
        return EMBER_ERR_NOT_IMPLEMENTED
    cdef const ember_view *views[4]
    cdef StridedIter it
    cdef TernaryCall t
    views[0], views[1], views[2], views[3] = out, a, b, c
    cdef int status = iter_init(&it, ctx, "ternary", 4 if c != NULL else 3, views, True)
    if status != EMBER_OK:
        return status
    t.op, t.dtype, t.ct, t.native = op, out.dtype, compute_type(out.dtype), is_native(out.dtype)
    t.has_c, t.p = c != NULL, p
    return iter_run(&it, ternary_row, &t, it.numel * TERNARY_COST)
