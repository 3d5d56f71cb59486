"""Bessel and Airy functions of ember.special, as composites of ember ops in float64.

Each function is split by argument range into pieces that reach double precision:
- small arguments: the ascending power series (I_n, J_n, and K_n / Y_n through their series
  with harmonic-number terms, which cancel only mildly up to x = 2);
- middle range: Gauss-Legendre quadrature of an integral representation (Bessel's integral
  for J_n; Y_n's two-integral form; K_nu(x) e^x = int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t)
  dt, which covers every x > 2 once the interval is cut where the integrand drops below
  e^-45);
- large arguments: Hankel's asymptotic expansions (J_n, Y_n, I_n; Airy on the negative
  axis), whose truncation error there is below e^-50.

Values at inf/nan and outside the domain follow PyTorch (e.g. i0(inf) and j0(inf) are nan
there, as its Chebyshev/Hankel kernels give)."""
import math

from ember.core import _tensor as _T
from ember.core.elementwise import sign
from ember.core.special_support import (
    EULER,
    acosh,
    asinh,
    cosh,
    fixed_nodes,
    float_input,
    in_float64,
    out_,
    piecewise,
    power_series,
    quad,
    sinh,
    trig_quad,
    with_derivative,
)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "i0", "i0e",
           "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0"]

_I_SERIES_MAX = 20.0       # I_n by its power series up to here, Hankel's expansion above
_J_QUAD_MAX = 25.0         # J_n, Y_n by quadrature up to here, Hankel's expansion above
_TAIL = 45.0               # integrands are cut where exp(-...) < e^-45
_NODES = 64


# --- modified Bessel functions I_n, K_n (n = 0, 1) ------------------------------------

def _series(x, n, sign=1.0):
    """sum_k sign^k (x^2/4)^k / (k! (k+n)!) * (x/2)^n (50 terms): I_n(x) for 0 <= x <= 20,
    J_n(x) (sign -1) for |x| <= 2."""
    q = x * x * (sign / 4)
    first = _T.ones_like(x) if n == 0 else x / 2
    return power_series(x, first, lambda k: q / (k * (k + n)), 50)


def _i_scaled_asymptotic(x, n):
    """I_n(x) e^-x for x > 20: e^x / sqrt(2 pi x) sum_k prod_j ((2j-1)^2 - 4n^2) / (8 j x)."""
    mu = 4 * n * n
    s = power_series(x, _T.ones_like(x), lambda k: ((2 * k - 1) ** 2 - mu) / (8 * k) / x, 30)
    return s / _T.sqrt(2 * math.pi * x)


def _i_abs(x, n, scaled):
    """I_n(|x|) (times e^-|x| when ``scaled``) for a float64 tensor."""
    a = x.abs()

    def series(s):
        r = _series(s, n)
        return r * _T.exp(-s) if scaled else r

    def asymptotic(s):
        r = _i_scaled_asymptotic(s, n)
        return r if scaled else _T.exp(s) * r        # overflows past 709.78, as PyTorch

    return piecewise(a, [(a <= _I_SERIES_MAX, series), (a > _I_SERIES_MAX, asymptotic)])


def _odd(x, r):
    """f(x) from r = f(|x|) for an odd f."""
    return _T.where(x < 0, -r, r)


def _log_series(x, n, sign):
    """(sum_k t_k, sum_k t_k (H_k + H_(k+n))) with t_k = sign^k (x^2/4)^k / (k! (k+n)!):
    the sums in the small-argument series of K_n (sign +1) and Y_n (sign -1)."""
    q = x * x / 4
    t = _T.ones_like(x)
    plain, harmonic = t, t * (0.0 if n == 0 else 1.0)
    h, hn = 0.0, float(n)
    for k in range(1, 30):
        t = t * (sign / (k * (k + n))) * q
        h += 1 / k
        hn += 1 / (k + n)
        plain = plain + t
        harmonic = harmonic + t * (h + hn)
    return plain, harmonic


def _k_series(x, n):
    """K_n(x) for 0 < x <= 2 (A&S 9.6.13, 9.6.11)."""
    plain, harmonic = _log_series(x, n, 1.0)
    log_half = _T.log(x / 2)
    if n == 0:
        return -(log_half + EULER) * plain + harmonic / 2
    return 1 / x + log_half * (x / 2) * plain - x / 4 * (harmonic - 2 * EULER * plain)


def _k_scaled_quad(x, nu):
    """K_nu(x) e^x for x > 2 (any real order nu) by quadrature."""
    def integrand(t, xc):
        return _T.exp(-2 * xc * _T.square(sinh(t / 2))) * cosh(nu * t)
    return quad(integrand, _T.zeros_like(x), acosh(1 + _TAIL / x), 32, x)


def _k(x, n, scaled):
    def series(s):
        r = _k_series(s, n)
        return r * _T.exp(s) if scaled else r

    def integral(s):
        r = _k_scaled_quad(s, n)
        return r if scaled else r * _T.exp(-s)

    finite = x.isfinite()
    return piecewise(x, [(x == 0, lambda s: _T.full_like(s, math.inf)),
                         ((x > 0) & (x <= 2), series), ((x > 2) & finite, integral),
                         (x == math.inf, _T.zeros_like)])


# --- Bessel functions J_n, Y_n (n = 0, 1) -----------------------------------------------

def _hankel(x, n):
    """(P, Q, cos w, sin w) of Hankel's expansion, w = x - (2n + 1) pi / 4, for x > 25."""
    mu = 4 * n * n
    term = _T.ones_like(x)
    p, q = term, _T.zeros_like(x)
    for k in range(1, 24):
        term = term * ((mu - (2 * k - 1) ** 2) / (8 * k)) / x
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    c, s = _T.cos(x), _T.sin(x)
    if n == 0:
        return p, q, (c + s) * math.sqrt(0.5), (s - c) * math.sqrt(0.5)
    return p, q, (s - c) * math.sqrt(0.5), -(s + c) * math.sqrt(0.5)


def _j_large(x, n):
    p, q, cw, sw = _hankel(x, n)
    return _T.sqrt(2 / (math.pi * x)) * (p * cw - q * sw)


def _y_large(x, n):
    p, q, cw, sw = _hankel(x, n)
    return _T.sqrt(2 / (math.pi * x)) * (p * sw + q * cw)


def _bessel_integrals(x, n, want_y):
    """(J_n(x), the first integral of Y_n(x)) for 0 <= x <= 25 by Bessel's integrals
    (1/pi) int_0^pi cos(n t - x sin t) dt and (1/pi) int_0^pi sin(x sin t - n t) dt: with
    cos/sin(n t) constant per node, each node costs one cos and one sin of x sin(t)."""
    t, w = fixed_nodes(math.pi, _NODES, x.device)
    s, cn, sn = _T.sin(t), _T.cos(n * t) * w / math.pi, _T.sin(n * t) * w / math.pi
    pairs = [(cn, sn if n else None)] + ([(-sn, cn)] if want_y else [])
    return trig_quad(x, s, pairs)


def _j_quad(x, n):
    return _bessel_integrals(x, n, False)[0]


def _j_abs(x, n):
    a = x.abs()
    return piecewise(a, [(a <= 2, lambda s: _series(s, n, -1.0)),
                         ((a > 2) & (a <= _J_QUAD_MAX), lambda s: _j_quad(s, n)),
                         (a > _J_QUAD_MAX, lambda s: _j_large(s, n))])


def _y_series(x, n):
    """Y_n(x) for 0 < x <= 2 (A&S 9.1.13, 9.1.11)."""
    plain, harmonic = _log_series(x, n, -1.0)
    log_half = _T.log(x / 2)
    if n == 0:
        return 2 / math.pi * ((log_half + EULER) * plain - harmonic / 2)
    j1 = x / 2 * plain
    return (-2 / (math.pi * x) + 2 / math.pi * log_half * j1
            - x / (2 * math.pi) * (harmonic - 2 * EULER * plain))


def _y_quad(x, n):
    """Y_n(x) for 2 < x <= 25: (1/pi) int_0^pi sin(x sin t - n t) dt
    - (1/pi) int_0^inf (e^(n t) + (-1)^n e^(-n t)) e^(-x sinh t) dt."""
    first = _bessel_integrals(x, n, True)[1]
    sign = -1.0 if n % 2 else 1.0
    second = quad(lambda t, xc: (_T.exp(n * t) + sign * _T.exp(-n * t))
                  * _T.exp(-xc * sinh(t)), _T.zeros_like(x), asinh(_TAIL / x), 32, x)
    return first - second / math.pi


def _y(x, n):
    return piecewise(x, [(x == 0, lambda s: _T.full_like(s, -math.inf)),
                         ((x > 0) & (x <= 2), lambda s: _y_series(s, n)),
                         ((x > 2) & (x <= _J_QUAD_MAX), lambda s: _y_quad(s, n)),
                         (x > _J_QUAD_MAX, lambda s: _y_large(s, n))])


# --- Airy Ai ----------------------------------------------------------------------------

_AI0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))        # Ai(0)
_AIP0 = 1 / (3 ** (1 / 3) * math.gamma(1 / 3))       # -Ai'(0)


def _airy_series(x):
    """Maclaurin series of Ai for -2 <= x <= 1 (A&S 10.4.2)."""
    x3 = x * x * x
    f = power_series(x, _T.ones_like(x), lambda k: x3 / ((3 * k - 1) * (3 * k)), 25)
    g = power_series(x, x, lambda k: x3 / ((3 * k) * (3 * k + 1)), 25)
    return _AI0 * f - _AIP0 * g


def _airy_positive(x):
    """Ai(x) = sqrt(x/3) K_1/3(zeta) / pi, zeta = 2/3 x^3/2, for x > 1."""
    zeta = 2 / 3 * x * _T.sqrt(x)
    k = _k_scaled_quad(_T.where(zeta.isinf(), 1.0, zeta), 1 / 3)     # 0 once zeta overflows
    return _T.sqrt(x / 3) / math.pi * _T.exp(-zeta) * _T.where(x.isinf(), math.nan, k)


def _airy_negative(x):
    """Ai(-z) = sqrt(z)/3 (J_1/3(zeta) + J_-1/3(zeta)) for 2 <= z, zeta <= 25, by DLMF
    10.9.6 summed over the two orders."""
    z = -x
    zeta = 2 / 3 * z * _T.sqrt(z)
    t, w = fixed_nodes(math.pi, _NODES, x.device)
    (first,) = trig_quad(zeta, _T.sin(t), [(_T.cos(t / 3) * w, None)])
    second = quad(lambda tt, zc: _T.exp(-zc * sinh(tt)) * sinh(tt / 3), _T.zeros_like(x),
                  asinh(_TAIL / zeta), 32, zeta)
    return _T.sqrt(z) / 3 * (2 / math.pi) * (first + math.sin(math.pi / 3) * second)


def _airy_negative_large(x):
    """Ai(-z) ~ (sin(zeta + pi/4) P - cos(zeta + pi/4) Q) / (sqrt(pi) z^1/4) for zeta > 25
    (DLMF 9.7.9), u_k = u_(k-1) (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k)."""
    z = -x
    zeta = 2 / 3 * z * _T.sqrt(z)
    term = _T.ones_like(x)
    p, q = term, _T.zeros_like(x)
    for k in range(1, 20):
        term = term * ((6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)) / zeta
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    c, s = _T.cos(zeta), _T.sin(zeta)
    sin_w, cos_w = (s + c) * math.sqrt(0.5), (c - s) * math.sqrt(0.5)   # w = zeta + pi/4
    return (sin_w * p - cos_w * q) / (math.sqrt(math.pi) * _T.sqrt(_T.sqrt(z)))


def _airy(x):
    negative_quad_min = -((25 * 1.5) ** (2 / 3))          # zeta = 25
    return piecewise(x, [((x >= -2) & (x <= 1), _airy_series),
                         (x > 1, _airy_positive),
                         ((x < -2) & (x >= negative_quad_min), _airy_negative),
                         (x < negative_quad_min, _airy_negative_large)])


# --- public functions -------------------------------------------------------------------

def _no_grad_unary(name, impl):
    """A function PyTorch gives no derivative (its result never requires grad)."""
    def fn(input, *, out=None):
        x = float_input(input, name, name, half=False)
        return out_(in_float64(impl, x), out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _spherical_j0(x):
    safe = _T.where(x == 0, 1.0, x)
    r = _T.where(x == 0, 1.0, _T.sin(safe) / safe)
    return _T.where(x.isinf(), 0.0, r)


bessel_j0 = _no_grad_unary("bessel_j0", lambda x: _j_abs(x, 0))
bessel_j1 = _no_grad_unary("bessel_j1", lambda x: _odd(x, _j_abs(x, 1)))
bessel_y0 = _no_grad_unary("bessel_y0", lambda x: _y(x, 0))
bessel_y1 = _no_grad_unary("bessel_y1", lambda x: _y(x, 1))
modified_bessel_i0 = _no_grad_unary("modified_bessel_i0", lambda x: _i_abs(x, 0, False))
modified_bessel_i1 = _no_grad_unary("modified_bessel_i1",
                                    lambda x: _odd(x, _i_abs(x, 1, False)))
modified_bessel_k0 = _no_grad_unary("modified_bessel_k0", lambda x: _k(x, 0, False))
modified_bessel_k1 = _no_grad_unary("modified_bessel_k1", lambda x: _k(x, 1, False))
scaled_modified_bessel_k0 = _no_grad_unary("scaled_modified_bessel_k0",
                                           lambda x: _k(x, 0, True))
scaled_modified_bessel_k1 = _no_grad_unary("scaled_modified_bessel_k1",
                                           lambda x: _k(x, 1, True))
spherical_bessel_j0 = _no_grad_unary("spherical_bessel_j0", _spherical_j0)
airy_ai = _no_grad_unary("airy_ai", _airy)


def _i_value(x, n, scaled):
    r = _i_abs(x, n, scaled)
    return _odd(x, r) if n else r


def _i_function(name, title, n, scaled, derivative, kernel):
    def impl(x):
        return in_float64(lambda s: _i_value(s, n, scaled), x)

    def fn(input, *, out=None):
        x = float_input(input, name, kernel)
        return out_(with_derivative(title, impl, (x,), (derivative,)), out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _safe_x(x):
    return _T.where(x == 0, 1.0, x)


i0 = _i_function("i0", "I0", 0, False, lambda x, r: i1(x), "i0")
i0e = _i_function("i0e", "SpecialI0E", 0, True, lambda x, r: i1e(x) - sign(x) * r, "i0e")
# I1' = I0 - I1/x and (I1 e^-|x|)' = I0e - I1e (sgn x + 1/x): 1/2 at 0
i1 = _i_function("i1", "SpecialI1", 1, False,
                 lambda x, r: _T.where(x == 0, 0.5, i0(x) - r / _safe_x(x)), "i1")
i1e = _i_function("i1e", "SpecialI1E", 1, True,
                  lambda x, r: _T.where(x == 0, 0.5, i0e(x) - r * (sign(x) + 1 / _safe_x(x))),
                  "i1e")

for _f, _doc in ((bessel_j0, "Bessel function of the first kind of order 0"),
                 (bessel_j1, "Bessel function of the first kind of order 1"),
                 (bessel_y0, "Bessel function of the second kind of order 0"),
                 (bessel_y1, "Bessel function of the second kind of order 1"),
                 (modified_bessel_i0, "modified Bessel function of the first kind, order 0"),
                 (modified_bessel_i1, "modified Bessel function of the first kind, order 1"),
                 (modified_bessel_k0, "modified Bessel function of the second kind, order 0"),
                 (modified_bessel_k1, "modified Bessel function of the second kind, order 1"),
                 (scaled_modified_bessel_k0, "K_0(input) * exp(input)"),
                 (scaled_modified_bessel_k1, "K_1(input) * exp(input)"),
                 (spherical_bessel_j0, "spherical Bessel function j_0: sin(input) / input"),
                 (airy_ai, "Airy function Ai"),
                 (i0, "modified Bessel function I_0 (differentiable: I_1)"),
                 (i0e, "exponentially scaled I_0: I_0(input) * exp(-|input|)"),
                 (i1, "modified Bessel function I_1"),
                 (i1e, "exponentially scaled I_1: I_1(input) * exp(-|input|)")):
    _f.__doc__ = f"{_f.__name__}(input, *, out=None) -> Tensor: the {_doc}, elementwise."
