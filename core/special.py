"""Special-function composites over the erfinv/lgamma/digamma kernels: polygamma (through
the Hurwitz zeta function) and mvlgamma.  Written in ember ops, so autograd differentiates
them and every device has them."""
import math

from ember.core import _tensor as _T
from ember.core._errors import _tensor_arg

__all__ = ["digamma", "erfinv", "lgamma", "mvlgamma", "polygamma"]

_fns = _T._special_functions()
erfinv, lgamma, digamma = _fns["erfinv"], _fns["lgamma"], _fns["digamma"]

_SHIFT = 12             # terms summed directly before the Euler-Maclaurin tail
# B_2j / (2j)! for j = 1..8 (Bernoulli numbers over factorials)
_BERNOULLI = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
              -691 / 1307674368000, 1 / 74724249600, -3617 / 10670622842880000)


def _float(x, op):
    _tensor_arg(x, op)
    return x if x.is_floating_point() else x.to(_T._state_default_dtype())


def _hurwitz_zeta(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2: the first terms summed, the rest
    by Euler-Maclaurin at a = q + shift (shifted further when q has negative elements)."""
    low = float(q.min()) if q.numel() else 0.0
    shift = _SHIFT + (math.ceil(-low) if low < 0 and math.isfinite(low) else 0)
    total = 0
    for k in range(shift):
        total = total + (q + k) ** -s
    a = q + shift
    tail = a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    rising = s                      # s (s + 1) ... (s + 2j - 2)
    power = a ** (-s - 1)           # a^(-s - 2j + 1)
    inv_a2 = 1 / (a * a)
    for j, b in enumerate(_BERNOULLI):
        tail = tail + b * rising * power
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2)
        power = power * inv_a2
    return total + tail


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, input) for n >= 1."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    x = _float(input, "polygamma")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        r = digamma(x)
    else:
        r = (-1) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, x)
        # poles at 0 and the negative integers (the sum above overflows to +-inf there)
        pole = (x <= 0) & (x == x.floor())
        r = _T.where(pole, math.inf if n % 2 else math.nan, r) if bool(pole.any()) else r
    return r if out is None else out.copy_(r)


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p``:
    sum_i lgamma(input - i/2) + p (p - 1) / 4 log(pi) (inf at the poles, as PyTorch 2.13,
    which no longer rejects elements below (p-1)/2)."""
    x = _float(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    r = lgamma(x)
    for i in range(1, p):
        r = r + lgamma(x - i / 2)
    return r + p * (p - 1) / 4 * math.log(math.pi)
