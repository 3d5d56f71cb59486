"""The normal distribution's functions of ember.special: erfcx, ndtr, log_ndtr and ndtri,
as composites of ember ops in float64.

- erfcx(x) = exp(x^2) erfc(x): exp(x^2) with x split into halves whose squares are exact
  (so no ulp of x^2 is amplified), up to x = 6; Laplace's continued fraction beyond.
- log_ndtr: through erfcx below x = -1 (no underflow), log1p(-erfc/2) above.
- ndtri: sqrt(2) erfinv(2p - 1) for 1/4 <= p <= 3/4 (where 2p - 1 is exact); in the tails
  Newton's method on log_ndtr(x) = log(p) from Abramowitz & Stegun 26.2.23's starting
  value, which in log space converges for every p down to the smallest subnormal.

PyTorch's ndtr is (1 + erf(x/sqrt 2))/2, 0 below x = -8.3; this one keeps the lower tail."""
import math

from ember.core import _tensor as _T
from ember.core.special import erfinv
from ember.core.special_support import (
    erfc,
    float_input,
    in_float64,
    log1p,
    out_,
    piecewise,
    with_derivative,
)

__all__ = ["erfcx", "log_ndtr", "ndtr", "ndtri"]

_SQRT1_2 = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SPLIT = 134217729.0            # 2^27 + 1: Veltkamp's splitter for doubles


def _exp_square(x):
    """exp(x^2) without the rounding error of x^2 (|x| < 27)."""
    big = x * _SPLIT
    hi = big - (big - x)
    lo = x - hi
    return _T.exp(hi * hi) * _T.exp(lo * (2 * hi + lo))


def _erfcx_fraction(x):
    """erfcx(x) = 1 / (sqrt(pi) (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))), x >= 6."""
    f = _T.zeros_like(x)
    for k in range(24, 0, -1):
        f = (k / 2) / (x + f)
    return 1 / (math.sqrt(math.pi) * (x + f))


def _erfcx(x):
    return piecewise(x, [(x < -27, lambda s: _T.full_like(s, math.inf)),
                         ((x >= -27) & (x < 6), lambda s: _exp_square(s) * erfc(s)),
                         (x >= 6, _erfcx_fraction)])


def _log_ndtr(x):
    def lower(s):
        return _T.log(_erfcx(s * -_SQRT1_2) / 2) - s * s / 2
    return piecewise(x, [(x < -1, lower),
                         (x >= -1, lambda s: log1p(erfc(s * _SQRT1_2) * -0.5))])


def _mills_inverse(x):
    """phi(x) / Phi(x), the derivative of log_ndtr, without overflow or underflow."""
    return _SQRT_2_OVER_PI / _erfcx(x * -_SQRT1_2)


# Abramowitz & Stegun 26.2.23: |error| < 4.5e-4, enough to start Newton's method
_AS_NUM = (2.515517, 0.802853, 0.010328)
_AS_DEN = (1.432788, 0.189269, 0.001308)


def _ndtri(p):
    def lower_tail(q):                      # the x < 0 with Phi(x) = q, 0 < q <= 1/2
        log_q = _T.log(q)
        t = _T.sqrt(-2 * log_q)
        num = _AS_NUM[0] + t * (_AS_NUM[1] + t * _AS_NUM[2])
        den = 1 + t * (_AS_DEN[0] + t * (_AS_DEN[1] + t * _AS_DEN[2]))
        x = num / den - t
        for _ in range(5):
            x = x - (_log_ndtr(x) - log_q) / _mills_inverse(x)
        return x

    central = (p >= 0.25) & (p <= 0.75)
    return piecewise(p, [(p == 0, lambda s: _T.full_like(s, -math.inf)),
                         (p == 1, lambda s: _T.full_like(s, math.inf)),
                         # 2 (p - 1/2) is exact here, and erfinv accurate to a few ulps
                         (central, lambda s: math.sqrt(2) * erfinv((s - 0.5) * 2)),
                         ((p > 0) & (p < 0.25), lower_tail),
                         ((p > 0.75) & (p < 1), lambda s: -lower_tail(1 - s))])


def _unary(name, title, impl, derivative):
    def fn(input, *, out=None):
        x = float_input(input, name, name, half=False)     # as PyTorch's CPU kernels
        r = with_derivative(title, lambda v: in_float64(impl, v), (x,), (derivative,))
        return out_(r, out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


erfcx = _unary("erfcx", "SpecialErfcx", _erfcx,
               lambda x, r: 2 * x * r - 2 / math.sqrt(math.pi))
log_ndtr = _unary("log_ndtr", "SpecialLogNdtr", _log_ndtr,
                  lambda x, r: _SQRT_2_OVER_PI / erfcx(x * -_SQRT1_2))
ndtri = _unary("ndtri", "SpecialNdtri", _ndtri,
               lambda p, r: math.sqrt(2 * math.pi) * _T.exp(r * r / 2))


def ndtr(input, *, out=None):
    """ndtr(input, *, out=None) -> Tensor: the standard normal CDF, (1 + erf(x/sqrt 2)) / 2,
    as erfc(-x / sqrt 2) / 2 (accurate in the lower tail; differentiable through erfc)."""
    x = float_input(input, "ndtr", "ndtr")
    return out_(erfc(x * -_SQRT1_2) * 0.5, out, "ndtr")


erfcx.__doc__ = "erfcx(input, *, out=None) -> Tensor: exp(input^2) * erfc(input)."
log_ndtr.__doc__ = "log_ndtr(input, *, out=None) -> Tensor: log of the standard normal CDF."
ndtri.__doc__ = ("ndtri(input, *, out=None) -> Tensor: the standard normal quantile function "
                 "(inverse of ndtr), -inf at 0, inf at 1, nan outside [0, 1].")
