# Scalar operations on the compute types, inlined into the elementwise and reduction
# loops.  Integer arithmetic goes through uint64 so that overflow wraps without undefined
# behaviour; maximum/minimum propagate NaN like PyTorch.
from libc.math cimport (
    fabs, fabsf, floor, floorf, ceil, ceilf, trunc, truncf, nearbyint, nearbyintf, exp2,
    exp2f, expm1, expm1f, log2, log2f, log10, log10f, log1p, log1pf, erf, erff, erfc, erfcf,
    asin, asinf, acos, acosf, atan, atanf, tan, tanf, sinh, sinhf, cosh, coshf, sqrt, sqrtf, atan2,
    atan2f, fmod, fmodf, fmax, fmaxf, fmin, fminf, copysign, copysignf,
)
from libc.stdint cimport int64_t, uint64_t
from ember_cpu._strided cimport ct_t

cdef extern from "_vecmath.h":
    float ember_remainder_f32(float b, float r) noexcept nogil
    double ember_remainder_f64(double b, double r) noexcept nogil
    float ember_floor_divide_f32(float a, float b, float r) noexcept nogil
    double ember_floor_divide_f64(double a, double b, double r) noexcept nogil


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
    # a negative exponent (a tensor's: a scalar one is refused up front) truncates 1 / x**-e
    # as PyTorch does: 1 and -1 keep a magnitude of 1, every other base gives 0
    if e < 0:
        return 1 if x == 1 else ((1 - 2 * ((-e) & 1)) if x == -1 else 0)
    cdef uint64_t base = <uint64_t>x, r = 1
    while e > 0:
        if e & 1:
            r *= base
        base *= base
        e >>= 1
    return <int64_t>r


# -- floating unary ops (float: the f-suffixed libm function; double: the plain one) -------

ctypedef fused fl_t:
    float
    double

cdef inline fl_t _floor(fl_t x) noexcept nogil:
    return floorf(x) if fl_t is float else floor(x)

cdef inline fl_t _ceil(fl_t x) noexcept nogil:
    return ceilf(x) if fl_t is float else ceil(x)

cdef inline fl_t _trunc(fl_t x) noexcept nogil:
    return truncf(x) if fl_t is float else trunc(x)

# half to even (the default rounding mode), like torch.round
cdef inline fl_t _round(fl_t x) noexcept nogil:
    return nearbyintf(x) if fl_t is float else nearbyint(x)

cdef inline fl_t _exp2(fl_t x) noexcept nogil:
    return exp2f(x) if fl_t is float else exp2(x)

cdef inline fl_t _expm1(fl_t x) noexcept nogil:
    return expm1f(x) if fl_t is float else expm1(x)

cdef inline fl_t _log2(fl_t x) noexcept nogil:
    return log2f(x) if fl_t is float else log2(x)

cdef inline fl_t _log10(fl_t x) noexcept nogil:
    return log10f(x) if fl_t is float else log10(x)

cdef inline fl_t _log1p(fl_t x) noexcept nogil:
    return log1pf(x) if fl_t is float else log1p(x)

cdef inline fl_t _erf(fl_t x) noexcept nogil:
    return erff(x) if fl_t is float else erf(x)

cdef inline fl_t _erfc(fl_t x) noexcept nogil:
    return erfcf(x) if fl_t is float else erfc(x)

cdef inline fl_t _asin(fl_t x) noexcept nogil:
    return asinf(x) if fl_t is float else asin(x)

cdef inline fl_t _acos(fl_t x) noexcept nogil:
    return acosf(x) if fl_t is float else acos(x)

cdef inline fl_t _atan(fl_t x) noexcept nogil:
    return atanf(x) if fl_t is float else atan(x)

cdef inline fl_t _tan(fl_t x) noexcept nogil:
    return tanf(x) if fl_t is float else tan(x)

cdef inline fl_t _sinh(fl_t x) noexcept nogil:
    return sinhf(x) if fl_t is float else sinh(x)

cdef inline fl_t _cosh(fl_t x) noexcept nogil:
    return coshf(x) if fl_t is float else cosh(x)

cdef inline fl_t _rsqrt(fl_t x) noexcept nogil:
    return 1 / (sqrtf(x) if fl_t is float else sqrt(x))


# -- binary ops that exist for floats and integers ---------------------------------------
# The integer forms assume y != 0 (the loops check it first) and handle y == -1 apart:
# INT64_MIN / -1 and INT64_MIN % -1 trap on x86.

cdef inline fl_t _atan2(fl_t x, fl_t y) noexcept nogil:
    return atan2f(x, y) if fl_t is float else atan2(x, y)

# C fmod: the dividend's sign
cdef inline ct_t _fmod(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return 0 if y == -1 else x % y
    elif ct_t is float:
        return fmodf(x, y)
    else:
        return fmod(x, y)

# Python %: the divisor's sign (torch.remainder); floats through _vecmath.h's formula, which
# the float32 row loops share
cdef inline ct_t _remainder(ct_t x, ct_t y) noexcept nogil:
    cdef ct_t r = _fmod(x, y)
    if ct_t is float:
        return ember_remainder_f32(y, r)
    elif ct_t is double:
        return ember_remainder_f64(y, r)
    if (r != 0) and ((r < 0) != (y < 0)):
        r += y
    return r

# rounds toward -inf; floats as PyTorch's div_floor_floating
cdef inline ct_t _floor_divide(ct_t x, ct_t y) noexcept nogil:
    cdef ct_t q, r
    if ct_t is int64_t:
        if y == -1:
            return _neg(x)
        q = x / y
        r = x % y
        return q - 1 if (r != 0) and ((r < 0) != (y < 0)) else q
    elif ct_t is float:
        return ember_floor_divide_f32(x, y, fmodf(x, y))
    else:
        return ember_floor_divide_f64(x, y, fmod(x, y))

# C fmax/fmin: a NaN loses to a number; integers: max/min
cdef inline ct_t _fmax(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return x if x > y else y
    elif ct_t is float:
        return fmaxf(x, y)
    else:
        return fmax(x, y)

cdef inline ct_t _fmin(ct_t x, ct_t y) noexcept nogil:
    if ct_t is int64_t:
        return x if x < y else y
    elif ct_t is float:
        return fminf(x, y)
    else:
        return fmin(x, y)


# -- shifts on int64 (narrow types are staged in int64 and wrapped on store) ------------
# PyTorch: a count < 0 or >= the bit width gives 0 (left) or the sign fill (right); with
# int64 staging a count in [width, 64) already gives that for the narrow types

cdef inline int64_t _shift_left(int64_t x, int64_t n) noexcept nogil:
    return 0 if (n < 0) | (n >= 64) else <int64_t>(<uint64_t>x << n)

cdef inline int64_t _shift_right(int64_t x, int64_t n) noexcept nogil:
    return x >> (63 if (n < 0) | (n >= 64) else n)
