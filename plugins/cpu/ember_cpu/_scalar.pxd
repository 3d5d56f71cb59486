# Scalar operations on the compute types, inlined into the elementwise and reduction
# loops.  Integer arithmetic goes through uint64 so that overflow wraps without undefined
# behaviour; maximum/minimum propagate NaN like PyTorch.
from libc.math cimport fabs, fabsf
from libc.stdint cimport int64_t, uint64_t
from ember_cpu._strided cimport ct_t


cdef inline ct_t _add(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return <int64_t>(<uint64_t>x + <uint64_t>y)
    else:
        return x + y

cdef inline ct_t _sub(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return <int64_t>(<uint64_t>x - <uint64_t>y)
    else:
        return x - y

cdef inline ct_t _mul(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return <int64_t>(<uint64_t>x * <uint64_t>y)
    else:
        return x * y

cdef inline ct_t _max(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return x if x > y else y
    else:
        # x when x > y or x is NaN; otherwise y (NaN when y is).  `|`, not `or`: no
        # branch, so the loops vectorize
        return x if ((x > y) | (x != x)) else y

cdef inline ct_t _min(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return x if x < y else y
    else:
        return x if ((x < y) | (x != x)) else y

cdef inline ct_t _neg(ct_t x) noexcept nogil:
    if ct_t is int64_t:
        return <int64_t>(0 - <uint64_t>x)
    else:
        return -x

cdef inline ct_t _abs(ct_t x) noexcept nogil:
    if ct_t is int64_t:
        return x if x >= 0 else <int64_t>(0 - <uint64_t>x)
    elif ct_t is float:
        return fabsf(x)
    else:
        return fabs(x)

cdef inline ct_t _relu(ct_t x) noexcept nogil:
    # keeps NaN (a comparison with NaN is false)
    return 0 if x < 0 else x

# x ** e for e >= 0, by squaring, wrapping
cdef inline int64_t _ipow(int64_t x, int64_t e) noexcept nogil:
    cdef uint64_t base = <uint64_t>x, r = 1
    while e > 0:
        if e & 1:
            r *= base
        base *= base
        e >>= 1
    return <int64_t>r
