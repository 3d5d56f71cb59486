"""ember.special: PyTorch's torch.special, loaded on first use.

The functions live in the core (core/bessel.py, error_functions.py, incomplete_gamma.py,
orthogonal_polynomials.py, special.py) as composites of ember ops; the ones PyTorch also
has at the top level (erf, expm1, sinc, ...) are the same functions under their
torch.special names, wrapped here only where torch.special's signature adds ``out=``."""
from ember.core import _tensor as _T
from ember.core.activations import logit as _logit
from ember.core.bessel import airy_ai as airy_ai
from ember.core.bessel import bessel_j0 as bessel_j0
from ember.core.bessel import bessel_j1 as bessel_j1
from ember.core.bessel import bessel_y0 as bessel_y0
from ember.core.bessel import bessel_y1 as bessel_y1
from ember.core.bessel import i0 as i0
from ember.core.bessel import i0e as i0e
from ember.core.bessel import i1 as i1
from ember.core.bessel import i1e as i1e
from ember.core.bessel import modified_bessel_i0 as modified_bessel_i0
from ember.core.bessel import modified_bessel_i1 as modified_bessel_i1
from ember.core.bessel import modified_bessel_k0 as modified_bessel_k0
from ember.core.bessel import modified_bessel_k1 as modified_bessel_k1
from ember.core.bessel import scaled_modified_bessel_k0 as scaled_modified_bessel_k0
from ember.core.bessel import scaled_modified_bessel_k1 as scaled_modified_bessel_k1
from ember.core.bessel import spherical_bessel_j0 as spherical_bessel_j0
from ember.core.elementwise import sinc as sinc
from ember.core.elementwise import xlogy as xlogy
from ember.core.error_functions import erfcx as erfcx
from ember.core.error_functions import log_ndtr as log_ndtr
from ember.core.error_functions import ndtr as ndtr
from ember.core.error_functions import ndtri as ndtri
from ember.core.incomplete_gamma import gammainc as gammainc
from ember.core.incomplete_gamma import gammaincc as gammaincc
from ember.core.orthogonal_polynomials import chebyshev_polynomial_t as chebyshev_polynomial_t
from ember.core.orthogonal_polynomials import chebyshev_polynomial_u as chebyshev_polynomial_u
from ember.core.orthogonal_polynomials import chebyshev_polynomial_v as chebyshev_polynomial_v
from ember.core.orthogonal_polynomials import chebyshev_polynomial_w as chebyshev_polynomial_w
from ember.core.orthogonal_polynomials import hermite_polynomial_h as hermite_polynomial_h
from ember.core.orthogonal_polynomials import hermite_polynomial_he as hermite_polynomial_he
from ember.core.orthogonal_polynomials import laguerre_polynomial_l as laguerre_polynomial_l
from ember.core.orthogonal_polynomials import legendre_polynomial_p as legendre_polynomial_p
from ember.core.orthogonal_polynomials import (
    shifted_chebyshev_polynomial_t as shifted_chebyshev_polynomial_t,
)
from ember.core.orthogonal_polynomials import (
    shifted_chebyshev_polynomial_u as shifted_chebyshev_polynomial_u,
)
from ember.core.orthogonal_polynomials import (
    shifted_chebyshev_polynomial_v as shifted_chebyshev_polynomial_v,
)
from ember.core.orthogonal_polynomials import (
    shifted_chebyshev_polynomial_w as shifted_chebyshev_polynomial_w,
)
from ember.core.special import digamma as digamma
from ember.core.special import entr as entr
from ember.core.special import erfinv as erfinv
from ember.core.special import lgamma as _lgamma
from ember.core.special import mvlgamma as _mvlgamma
from ember.core.special import polygamma as polygamma
from ember.core.special import xlog1py as xlog1py
from ember.core.special import zeta as zeta
from ember.core.special_support import not_implemented_dtype as _not_implemented_dtype
from ember.core.special_support import out_ as _out
from ember.core.statistics import logsumexp as _logsumexp

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
           "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
           "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
           "xlog1py", "xlogy", "zeta"]

_more = _T.table_functions()
erf, erfc, exp2, expm1, log1p = (_more[n] for n in ("erf", "erfc", "exp2", "expm1", "log1p"))
expit = _T.sigmoid
gammaln = _lgamma
psi = digamma


def round(input, *, decimals=0, out=None):
    """round(input, *, decimals=0, out=None) -> Tensor: round half to even, at ``decimals``
    decimal places (floating inputs only, as torch.special.round's CPU kernel)."""
    if isinstance(input, _T.TensorBase) and not input.is_floating_point():
        raise _not_implemented_dtype("round_vml", input)
    return _T._round(input, decimals=decimals, out=out)


def logit(input, eps=None, *, out=None):
    """logit(input, eps=None, *, out=None) -> Tensor: log(p / (1 - p)), with p clamped to
    [eps, 1 - eps] when ``eps`` is given."""
    return _out(_logit(input, eps), out)


def logsumexp(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """logsumexp(input, dim, keepdim=False, *, out=None) -> Tensor: log(sum(exp(input)))
    over ``dim`` (``axis``), computed stably."""
    return _out(_logsumexp(input, dim, keepdim, axis=axis, keepdims=keepdims), out)


def softmax(input, dim=None, *, dtype=None, axis=None):
    """softmax(input, dim, *, dtype=None) -> Tensor (input cast to ``dtype`` first)."""
    return _T.softmax(input, dim, dtype, axis=axis)


def log_softmax(input, dim=None, *, dtype=None, axis=None):
    """log_softmax(input, dim, *, dtype=None) -> Tensor (input cast to ``dtype`` first)."""
    return _T.log_softmax(input, dim, dtype, axis=axis)


def multigammaln(input, p, *, out=None):
    """multigammaln(input, p, *, out=None) -> Tensor: the log of the multivariate gamma
    function of dimension ``p``."""
    return _out(_mvlgamma(input, p), out)
