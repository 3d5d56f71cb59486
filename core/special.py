"""Special-function composites over the erfinv/lgamma/digamma kernels: polygamma and zeta
(through the Hurwitz zeta function), mvlgamma, entr and xlog1py.  Written in ember ops, so
every device has them."""
import math
import operator

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _arg_type_message, _is_any_true, _physical, _tensor_arg
from ember.core.special_support import (
    float_input,
    float_pair,
    in_float64,
    log1p,
    out_,
    piecewise_args,
    with_derivative,
)

__all__ = ["digamma", "entr", "erfinv", "lgamma", "multigammaln", "mvlgamma", "polygamma",
           "xlog1py", "zeta"]

_fns = _T.table_functions()          # rows of the op table (core/optable.py)
erfinv, lgamma, digamma = _fns["erfinv"], _fns["lgamma"], _fns["digamma"]

_SHIFT = 12             # terms summed directly before the Euler-Maclaurin tail
# B_2j / (2j)! for j = 1..8 (Bernoulli numbers over factorials)
_BERNOULLI = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
              -691 / 1307674368000, 1 / 74724249600, -3617 / 10670622842880000)


def _float(x, op):
    _tensor_arg(x, op)
    return x if x.is_floating_point() else x.to(_T._state_default_dtype())


def _hurwitz_zeta(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for s > 1 (an integer, or a tensor): the first terms
    summed, the rest by Euler-Maclaurin at a = q + shift (shifted further when q has
    negative elements, which only integer s allow)."""
    # inside vmap a shift that suits every sample suits each
    low = float(_physical(q).min()) if q.numel() else 0.0
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
        rising = rising * ((s + 2 * j + 1) * (s + 2 * j + 2))
        power = power * inv_a2
    return total + tail


def _int_arg(n, op, arg):
    """``n`` as a Python int where PyTorch's int arguments take it: an int, a numpy
    integer or a 0-d integer tensor (not a bool, float or 1-d tensor): else TypeError."""
    if isinstance(n, _T.TensorBase):
        ok = n.dim() == 0 and not (n.is_floating_point() or n.is_complex()
                                   or n.dtype is _dtype_by_name["bool"])
    else:
        ok = hasattr(type(n), "__index__") and not isinstance(n, bool)
    if not ok:
        raise TypeError(_arg_type_message(n, op, arg, expected="int"))
    return operator.index(n)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, input) for n >= 1."""
    n = _int_arg(n, "polygamma", "n")
    x = _float(input, "polygamma")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        r = digamma(x)
    else:
        r = (-1) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, x)
        # poles at 0 and the negative integers (the sum above overflows to +-inf there)
        pole = (x <= 0) & (x == x.floor())
        if bool(_is_any_true(pole)):                # (any sample's, inside vmap)
            r = _T.where(pole, math.inf if n % 2 else math.nan, r)
    return r if out is None else _T._result_out(r, out, "polygamma")


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


multigammaln = mvlgamma


def _zeta(s, q):
    """Hurwitz zeta of float64 tensors, with PyTorch's values off the domain: inf at s = 1
    and at the poles q = 0, -1, ...; nan for s < 1, for negative non-integer q unless s is
    an integer, and (as its kernel gives) where q or s is inf, except zeta(inf, q <= 1)."""
    pole = (q <= 0) & (q == q.floor())
    ok = (s > 1) & s.isfinite() & q.isfinite() & ~pole & ((q > 0) | (s == s.floor()))

    def const(v):
        return lambda sv, qv: _T.full_like(sv, v)

    return piecewise_args((s, q), [
        ((s == 1) | ((s > 1) & pole), const(math.inf)),
        ((s == math.inf) & (q < 1) & ~pole, const(math.inf)),
        ((s == math.inf) & (q == 1), const(1.0)),
        (ok, _hurwitz_zeta)])


def zeta(input, other, *, out=None):
    """zeta(input, other, *, out=None) -> Tensor: the Hurwitz zeta function
    sum_k (other + k)^-input (differentiable in ``other``: -input zeta(input + 1, other))."""
    x, q = float_pair(input, other, "zeta", "zeta", half=False)
    r = with_derivative("SpecialZeta", lambda a, b: in_float64(_zeta, a, b), (x, q),
                        (None, lambda a, b, res: -a * zeta(a + 1, b)), ("zeta",))
    return out_(r, out, "zeta")


def _entr(x):
    positive = -x * _T.log(_T.where(x > 0, x, 1.0))
    return _T.where(x > 0, positive, _T.where(x == 0, 0.0, _T.where(x < 0, -math.inf, x)))


def entr(input, *, out=None):
    """entr(input, *, out=None) -> Tensor: -input * log(input) for input > 0, 0 at 0 and
    -inf below (its derivative -(1 + log(input)))."""
    x = float_input(input, "entr", "entr")
    r = with_derivative("SpecialEntr", _entr, (x,), (lambda v, res: -(1 + _T.log(v)),))
    return out_(r, out)


def _xlog1py(x, y):
    return _T.where((x == 0) & ~y.isnan(), 0.0, x * log1p(y))


def xlog1py(input, other, *, out=None):
    """xlog1py(input, other, *, out=None) -> Tensor: input * log1p(other), 0 where input is 0
    (unless other is nan); either argument may be a number."""
    x, y = float_pair(input, other, "xlog1py", "xlog1py")
    r = with_derivative("SpecialXlog1Py", _xlog1py, (x, y), (
        lambda a, b, res: _T.where((a == 0) & (b <= -1), 0.0, log1p(b)),
        lambda a, b, res: a / (b + 1)))
    return out_(r, out)
