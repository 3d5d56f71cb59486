"""The classical orthogonal polynomials of ember.special, P_n(input) with n taken (as
PyTorch does) as the integer part of ``n``, a tensor or a number; 0 for n < 0.

Chebyshev T, U, V, W (and their shifted forms, T*_n(x) = T_n(2x - 1)) use their closed
forms, cos/sin of (n + c) acos x inside [-1, 1] and cosh/sinh of (n + c) acosh |x| outside:
no loop over n, so a large degree costs nothing.  Hermite (H, He), Laguerre and Legendre
run their three-term recurrences, vectorised over the elements up to the largest degree.
At x = +-inf the recurrences give PyTorch's values (inf or nan from inf - inf, n >= 3);
PyTorch's kernels have no derivative for these, so the results never require grad."""
from ember.core import _tensor as _T
from ember.core.special_support import (
    acos,
    acosh,
    cosh,
    float_pair,
    in_float64,
    out_,
    piecewise_args,
    remainder,
    sinh,
)

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]


# --- three-term recurrences: (P_0, P_1, P_(k+1) from k, x, P_(k-1), P_k) ---------------

_RECURRENCES = {
    "t": (lambda x: x, lambda k, x, p, q: 2 * x * q - p),
    "u": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * q - p),
    "v": (lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * q - p),
    "w": (lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * q - p),
    "h": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * q - 2 * k * p),
    "he": (lambda x: x, lambda k, x, p, q: x * q - k * p),
    "l": (lambda x: 1 - x, lambda k, x, p, q: ((2 * k + 1 - x) * q - k * p) / (k + 1)),
    "p": (lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * q - k * p) / (k + 1)),
}


def _recurrence(kind, x, n):
    """P_n(x) elementwise by the recurrence (n >= 0 an integral float64 tensor)."""
    first, step = _RECURRENCES[kind]
    p, q = _T.ones_like(x), first(x)
    r = _T.where(n == 0, p, q)
    top = int(n.max()) if n.numel() else 0
    for k in range(1, top):
        p, q = q, step(k, x, p, q)
        r = _T.where(n == k + 1, q, r)
    return r


# --- Chebyshev closed forms -------------------------------------------------------------
# With x = cos t (|x| <= 1) or x = +-cosh a (|x| > 1), a Chebyshev polynomial of degree n is
# f((n + c) t) / g(t) for the four kinds (c = 0, 1, 1/2, 1/2), hyperbolic outside.

def _trig(kind, n, t):
    if kind == "t":
        return _T.cos(n * t)
    if kind == "u":
        return _T.sin((n + 1) * t) / _T.sin(t)
    if kind == "v":
        return _T.cos((n + 0.5) * t) / _T.cos(t / 2)
    return _T.sin((n + 0.5) * t) / _T.sin(t / 2)


def _hyperbolic(kind, n, a):
    if kind == "t":
        return cosh(n * a)
    if kind == "u":
        return sinh((n + 1) * a) / sinh(a)
    if kind == "v":
        return cosh((n + 0.5) * a) / cosh(a / 2)
    return sinh((n + 0.5) * a) / sinh(a / 2)


_MIRROR = {"t": "t", "u": "u", "v": "w", "w": "v"}      # P_n(-x) = (-1)^n Q_n(x)


def _at_one(kind, n, sign):
    """P_n(sign), sign = +-1."""
    if sign > 0:
        return {"t": 1.0, "u": n + 1, "v": 1.0, "w": 2 * n + 1}[kind] * _T.ones_like(n)
    parity = 1 - 2 * remainder(n, 2)                   # (-1)^n
    return parity * _at_one(_MIRROR[kind], n, 1)


def _chebyshev(kind, x, n):
    inside = (x.abs() < 1)
    t = _T.where(inside, acos(_T.where(inside, x, 0.0)), 1.0)
    a = acosh(_T.where(inside, 2.0, x.abs()))
    parity = 1 - 2 * remainder(n, 2)
    outside_pos = _hyperbolic(kind, n, a)
    outside_neg = parity * _hyperbolic(_MIRROR[kind], n, a)
    r = _T.where(inside, _trig(kind, n, t), _T.where(x > 0, outside_pos, outside_neg))
    r = _T.where(x == 1, _at_one(kind, n, 1), _T.where(x == -1, _at_one(kind, n, -1), r))
    return r


# --- the public functions ---------------------------------------------------------------

def _evaluate(kind, x, n, shifted):
    n = n.trunc()
    if shifted:
        x = 2 * x - 1
    finite = x.isfinite()
    with_n = (n >= 0) & ~n.isnan()
    if kind in ("t", "u", "v", "w"):
        at_finite = lambda xm, nm: _chebyshev(kind, xm, nm)          # noqa: E731
    else:
        at_finite = lambda xm, nm: _recurrence(kind, xm, nm)         # noqa: E731
    # nan stays nan; at +-inf three steps reach PyTorch's inf - inf = nan
    return piecewise_args((x, n), [
        (with_n & finite, at_finite),
        (with_n & ~finite, lambda xm, nm: _recurrence(kind, xm, nm.clamp(max=3.0)))], fill=0.0)


def _polynomial(name, kind, shifted, doc):
    def fn(input, n, *, out=None):
        x, degree = float_pair(input, n, name, name, half=False)
        return out_(in_float64(lambda a, b: _evaluate(kind, a, b, shifted), x, degree), out,
                    name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(input, n, *, out=None) -> Tensor: the {doc} of degree n at input."
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "t", False,
                                     "Chebyshev polynomial of the first kind T_n")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "u", False,
                                     "Chebyshev polynomial of the second kind U_n")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "v", False,
                                     "Chebyshev polynomial of the third kind V_n")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "w", False,
                                     "Chebyshev polynomial of the fourth kind W_n")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "t", True,
                                             "shifted Chebyshev polynomial T*_n(x) = T_n(2x-1)")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "u", True,
                                             "shifted Chebyshev polynomial U*_n(x) = U_n(2x-1)")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "v", True,
                                             "shifted Chebyshev polynomial V*_n(x) = V_n(2x-1)")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "w", True,
                                             "shifted Chebyshev polynomial W*_n(x) = W_n(2x-1)")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "h", False,
                                   "physicists' Hermite polynomial H_n")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "he", False,
                                    "probabilists' Hermite polynomial He_n")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "l", False,
                                    "Laguerre polynomial L_n")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "p", False,
                                    "Legendre polynomial P_n")

