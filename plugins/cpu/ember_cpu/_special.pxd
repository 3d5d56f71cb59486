# Special functions the C library lacks (erfinv, digamma) or has in a thread-unsafe form
# (lgamma writes the global `signgam`; lgamma_r does not), in double precision; float
# inputs compute in double and round once on return.
from libc.math cimport INFINITY, NAN, M_PI, copysign, erf, erfc, exp, fabs, floor, log, sqrt, tan

from ember_cpu._strided cimport ct_t


cdef extern from "math.h" nogil:
    double lgamma_r(double x, int *sign)


cdef inline double _horner(const double *c, int n, double w) noexcept nogil:
    cdef double p = c[0]
    cdef int i
    for i in range(1, n):
        p = p * w + c[i]
    return p


# Giles (2010), "Approximating the erfinv function": single-precision polynomials in
# w = -log(1 - y^2) (central: w < 5, in w - 2.5; tails: in sqrt(w) - 3), then refined
cdef extern from *:
    """
    static const double ember_erfinv_central[9] = {2.81022636e-08, 3.43273939e-07,
        -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
        0.246640727, 1.50140941};
    static const double ember_erfinv_tail[9] = {-0.000200214257, 0.000100950558,
        0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
        1.00167406, 2.83297682};
    """
    const double ERFINV_CENTRAL "ember_erfinv_central"[9]
    const double ERFINV_TAIL "ember_erfinv_tail"[9]


cdef inline double erfinv_d(double y, bint single) noexcept nogil:
    """Giles' approximation (relative error < 4e-7) polished: one Halley step on
    erf(x) = |y| (cubic convergence: to double precision), or, where erf flattens near
    |y| = 1 and its residual would cancel, Newton steps on log erfc(x) = log(1 - |y|), where
    1 - |y| is exact, so the tails keep full precision (until the step is below the result's
    precision; a float result also keeps the erf residual further out, as its error there
    is below float's)."""
    cdef double a = fabs(y), w, x, c, d, step
    cdef int k
    if not a <= 1:
        return NAN
    if a == 1:
        return copysign(INFINITY, y)
    w = -log((1 - a) * (1 + a))
    if w < 5:
        x = _horner(ERFINV_CENTRAL, 9, w - 2.5) * a
    else:
        x = _horner(ERFINV_TAIL, 9, sqrt(w) - 3) * a
    d = 1.1283791670955126 * exp(-x * x)             # erf'(x) = 2/sqrt(pi) exp(-x^2)
    if a < (0.999 if single else 0.9):
        step = (erf(x) - a) / d
        x -= step / (1 + x * step)                    # Halley: erf''/erf' = -2x
    else:                       # (Giles' tail drifts far out: more steps there)
        for k in range(8):
            c = erfc(x)
            step = (log(1 - a) - log(c)) * c / d
            x -= step
            if fabs(step) <= (1e-9 if single else 1e-16) * x:
                break
            d = 1.1283791670955126 * exp(-x * x)
    return copysign(x, y)


cdef inline double lgamma_d(double x) noexcept nogil:
    cdef int sign
    return lgamma_r(x, &sign)


cdef inline double digamma_d(double x) noexcept nogil:
    """Reflection below 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
    asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k)."""
    cdef double r = 0, z
    if x == 0:
        return copysign(INFINITY, -x)       # PyTorch: -inf at +0, +inf at -0
    if x < 0:
        if x == floor(x):
            return NAN
        r = -M_PI / tan(M_PI * x)          # psi(1 - x) - psi(x) = pi cot(pi x)
        x = 1 - x
    while x < 10:
        r -= 1 / x
        x += 1
    z = 1 / (x * x)
    return r + log(x) - 0.5 / x - z * (1.0 / 12 - z * (1.0 / 120 - z * (
        1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * 691.0 / 32760)))))


cdef inline ct_t _erfinv(ct_t x) noexcept nogil:
    return <ct_t>erfinv_d(x, ct_t is float)

cdef inline ct_t _lgamma(ct_t x) noexcept nogil:
    return <ct_t>lgamma_d(x)

cdef inline ct_t _digamma(ct_t x) noexcept nogil:
    return <ct_t>digamma_d(x)
