"""Samplers beyond uniform/normal fills, vectorised over ember ops and drawn from ember's
generators: standard gamma (reparameterised), Dirichlet, Poisson and binomial.  Every
rejection loop redraws only the elements still pending, so its cost is a few passes.

- Gamma(alpha): Marsaglia & Tsang (2000); alpha < 1 by Gamma(alpha + 1) U^(1/alpha).  The
  sample carries an implicit-reparameterisation gradient dx/dalpha = -(dP/dalpha) / p(x)
  (P the regularized incomplete gamma function, p the density), dP/dalpha by a central
  difference of P (or of Q = 1 - P in the upper half) for alpha <= 1000, about ten
  correct digits; above, the derivative of the Wilson-Hilferty map
  x = a (1 - 1/(9a) + z / (3 sqrt a))^3 at fixed z.
- Poisson(rate): counting uniforms' products against e^-rate below rate 10, Hormann's PTRS
  transformed rejection (1993) from 10 up.
- Binomial(n, p): Knuth's beta splitting (TAOCP 3.4.1 F) halves n with one Beta draw per
  step until n <= 16, then counts n Bernoulli draws: exact for any n."""
import math

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core.function import Function, zero_derivative
from ember.core.grad_mode import no_grad
from ember.core.incomplete_gamma import _regularized
from ember.core.special import lgamma
from ember.core.typeinfo import finfo

__all__ = ["binomial", "poisson"]

_F32 = _dtype_by_name["float32"]
_F64 = _dtype_by_name["float64"]
_BOOL = _dtype_by_name["bool"]
_DIFFERENCE_ALPHA = 1000.0
_TINY64 = 2.2250738585072014e-308          # float64's smallest normal number


def _check_dtype(t, name, reduced=False):
    """NotImplementedError for the dtypes PyTorch's CPU kernel ``name`` lacks: all but
    float32 and float64 (float16 and bfloat16 too with ``reduced``; other devices' kernels
    take every floating dtype)."""
    if t.dtype is _F32 or t.dtype is _F64 or (
            t.is_floating_point() and (reduced or t.device.type != "cpu")):
        return
    raise NotImplementedError(f"\"{name}\" not implemented for '{_T._st_name(t.dtype)}'")


def _uniform(n, generator, device):
    return _T.rand(n, generator=generator, dtype=_F64, device=device)


def _normal(n, generator, device):
    return _T.randn(n, generator=generator, dtype=_F64, device=device)


def _until_accepted(shape_source, propose, generator):
    """A float64 tensor like ``shape_source`` (1-d) filled by ``propose(idx)``, which
    returns (values, accepted) for the pending elements ``idx``; redrawn until none is
    pending."""
    out = _T.zeros_like(shape_source, dtype=_F64)
    pending = _T.arange(shape_source.shape[0], device=shape_source.device)
    while pending.numel():
        values, ok = propose(pending)
        out[pending[ok]] = values[ok]
        pending = pending[~ok]
    return out


# --- gamma ------------------------------------------------------------------------------

def _marsaglia_tsang(alpha, generator):
    """Gamma(alpha, 1) for a 1-d float64 tensor alpha >= 1."""
    d = alpha - 1 / 3
    c = 1 / _T.sqrt(9 * d)
    dev = alpha.device

    def propose(idx):
        z = _normal(idx.numel(), generator, dev)
        u = _uniform(idx.numel(), generator, dev)
        dd, cc = d[idx], c[idx]
        v = (1 + cc * z) ** 3
        safe_v = _T.where(v > 0, v, 1.0)
        ok = (v > 0) & (_T.log(u) < 0.5 * z * z + dd - dd * safe_v + dd * _T.log(safe_v))
        return dd * safe_v, ok

    return _until_accepted(alpha, propose, generator)


def _gamma_sample(alpha, generator):
    """Gamma(alpha, 1) samples (float64, alpha's shape; 0 where alpha is 0, nan where it is
    negative or nan)."""
    flat = alpha.reshape(-1)
    small = flat < 1
    boosted = _T.where(small, flat + 1, flat)
    valid = flat > 0
    x = _T.zeros_like(flat)
    if bool(valid.any()):
        x[valid] = _marsaglia_tsang(boosted[valid], generator)
    if bool((small & valid).any()):
        u = _uniform(flat.shape[0], generator, flat.device)
        x = _T.where(small & valid, x * u ** (1 / _T.where(valid, flat, 1.0)), x)
    x = _T.where((flat < 0) | flat.isnan(), math.nan, x)
    return x.reshape(alpha.shape)


def _d_gamma_difference(x, a):
    """dx/dalpha = -(dP/dalpha) / p(x; a) for a <= 1000, with dP/dalpha a central difference
    of the regularized incomplete gamma function (accurate to ~1e-15 relative, so the
    difference keeps ~10 digits); Q = 1 - P is differenced above the median, where P
    would cancel."""
    h = 1e-5 * _T.where(a > 1, a, 1.0)
    upper = x > a
    dp = _T.zeros_like(x)
    for side, sign in ((upper, -1.0), (~upper, 1.0)):
        if bool(side.any()):
            xs, as_, hs = x[side], a[side], h[side]
            q = sign < 0
            dp[side] = sign * (_regularized(as_ + hs, xs, q) - _regularized(as_ - hs, xs, q)) \
                / (2 * hs)
    density = _T.exp((a - 1) * _T.log(x) - x - lgamma(a))
    return -dp / density


def _d_gamma_wilson_hilferty(x, a):
    """dx/dalpha at fixed z of x = a (1 - 1/(9a) + z / (3 sqrt a))^3 (a > 1000)."""
    c = (x / a) ** (1 / 3)
    z = (c - 1 + 1 / (9 * a)) * 3 * _T.sqrt(a)
    dc = 1 / (9 * a * a) - z / (6 * a * _T.sqrt(a))
    return c ** 3 + 3 * a * c * c * dc


def _standard_gamma_grad(self, output):
    """d output / d self for Gamma(self, 1) samples ``output`` (PyTorch's
    _standard_gamma_grad): implicit reparameterisation, see the module docstring."""
    with no_grad():
        a, x = self.detach().to(_F64), output.detach().to(_F64)
        x = _T.where(x > 0, x, 1e-300)
        small = a <= _DIFFERENCE_ALPHA
        r = _T.zeros_like(x)
        if bool(small.any()):
            r[small] = _d_gamma_difference(x[small], a[small])
        if bool((~small).any()):
            r[~small] = _d_gamma_wilson_hilferty(x[~small], a[~small])
    return r.to(output.dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha, generator):
        x = _gamma_sample(alpha.detach().to(_F64), generator).to(alpha.dtype)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, g):
        x, alpha = ctx.saved_tensors
        return g * _standard_gamma_grad(alpha, x), None


_StandardGamma._node_name = "StandardGammaBackward0"


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) samples of input's shape and dtype, differentiable in ``input``."""
    alpha = _tensor_arg(input, "_standard_gamma")
    _check_dtype(alpha, "standard_gamma")
    return _StandardGamma.apply(alpha, generator)


def _dirichlet_rsample(alpha, generator=None):
    """Dirichlet(alpha) samples over the last dim, differentiable in ``alpha`` (through the
    gammas' implicit reparameterisation).  As PyTorch's, the gammas are drawn and normalised
    in float64 (float32 gammas of concentrations below ~0.03 underflow, and a row of equal
    tiny values normalises to a spurious 1/k), and the sample is kept within
    [tiny, largest float below 1] of alpha's dtype, where its log density is finite."""
    _check_dtype(alpha, "dirichlet")
    g = _standard_gamma(alpha.to(_F64), generator).clamp(min=_TINY64)
    x = (g / g.sum(-1, keepdim=True)).to(alpha.dtype)
    info = finfo(alpha.dtype)
    inside = x.clamp(info.tiny, 1 - info.eps / 2)
    # gradients pass the clamp unchanged, as PyTorch's Dirichlet backward ignores it
    return x + (inside - x).detach() if x.requires_grad else inside


def _sample_dirichlet(input, generator=None):
    """Dirichlet(input) samples over the last dim (normalised gammas), not differentiable."""
    alpha = _tensor_arg(input, "_sample_dirichlet")
    with no_grad():
        return _dirichlet_rsample(alpha, generator)


# --- Poisson ----------------------------------------------------------------------------

def _poisson_small(lam, generator):
    """Poisson(lam) for lam < 10: the number of uniforms whose running product stays above
    e^-lam."""
    limit = _T.exp(-lam)
    count = _T.zeros_like(lam)
    product = _T.ones_like(lam)
    active = _T.ones_like(lam, dtype=_BOOL)
    while bool(active.any()):
        product = product * _T.where(active, _uniform(lam.shape[0], generator, lam.device),
                                     1.0)
        active = active & (product > limit)
        count = count + active.to(_F64)
    return count


def _poisson_ptrs(lam, generator):
    """Poisson(lam) for lam >= 10 by transformed rejection with squeeze (PTRS)."""
    slam = _T.sqrt(lam)
    log_lam = _T.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    dev = lam.device

    def propose(idx):
        u = _uniform(idx.numel(), generator, dev) - 0.5
        v = _uniform(idx.numel(), generator, dev)
        us = 0.5 - u.abs()
        ai, bi, li = a[idx], b[idx], lam[idx]
        k = ((2 * ai / us + bi) * u + li + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr[idx])
        hopeless = (k < 0) | ((us < 0.013) & (v > us))
        kk = _T.where(k < 0, 0.0, k)
        log_ratio = (_T.log(v) + _T.log(inv_alpha[idx]) - _T.log(ai / (us * us) + bi))
        exact = log_ratio <= -li + kk * log_lam[idx] - lgamma(kk + 1)
        return k, quick | (~hopeless & exact)

    return _until_accepted(lam, propose, generator)


def _poisson_sample(rate, generator):
    lam = rate.detach().to(_F64).reshape(-1)
    if bool((lam < 0).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    out = _T.zeros_like(lam)
    low = (lam > 0) & (lam < 10)
    high = lam >= 10
    if bool(low.any()):
        out[low] = _poisson_small(lam[low], generator)
    if bool(high.any()):
        out[high] = _poisson_ptrs(lam[high], generator)
    out = _T.where(lam.isnan(), math.nan, out)
    return out.reshape(rate.shape).to(rate.dtype)


def poisson(input, generator=None):
    """poisson(input, generator=None) -> Tensor: Poisson samples with rates ``input``
    (PyTorch records a zero gradient for the rates)."""
    rate = _tensor_arg(input, "poisson")
    _check_dtype(rate, "poisson", reduced=True)
    return zero_derivative("poisson", lambda r: _poisson_sample(r, generator), rate)


# --- binomial ---------------------------------------------------------------------------

_DIRECT_N = 16


def _binomial_sample(count, prob, generator):
    n = count.detach().to(_F64).reshape(-1)
    p = prob.detach().to(_F64).reshape(-1)
    dev = n.device
    sure = (p <= 0) | (p >= 1)                          # no draw needed
    result = _T.where(p >= 1, n, 0.0)
    n = _T.where(sure, 0.0, n)
    p = p.clone()
    # beta splitting: with a = 1 + n // 2 and Y ~ Beta(a, n + 1 - a), the a-th smallest of
    # n uniforms, X = Binomial(a - 1, p / Y) if Y >= p, else a + Binomial(n - a, (p-Y)/(1-Y))
    while True:
        big = (n > _DIRECT_N) & (p > 0) & (p < 1)
        if not bool(big.any()):
            break
        idx = big.nonzero().reshape(-1)
        nb, pb = n[idx], p[idx]
        a = (nb / 2).floor() + 1
        ga = _gamma_sample(a, generator)
        gb = _gamma_sample(nb + 1 - a, generator)
        y = ga / (ga + gb)
        below = y >= pb
        result[idx] = result[idx] + _T.where(below, 0.0, a)
        n[idx] = _T.where(below, a - 1, nb - a)
        p[idx] = _T.where(below, pb / y, (pb - y) / (1 - y)).clamp(0.0, 1.0)
    m = int(n.max()) if n.numel() else 0
    for i in range(max(m, 0)):
        u = _uniform(n.shape[0], generator, dev)
        result = result + ((u < p) & (n > i)).to(_F64)
    return result


def binomial(count, prob, generator=None):
    """binomial(count, prob, generator=None) -> Tensor: Binomial(count, prob) samples in
    prob's dtype (count and prob broadcast together)."""
    for name, t in (("count", count), ("prob", prob)):
        _tensor_arg(t, "binomial", name)
        if not t.is_floating_point():
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_T._st_name(t.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_T._st_name(prob.dtype)} but expected "
                           f"{_T._st_name(count.dtype)}")
    _check_dtype(count, "binomial")
    from ember.core.shapes import broadcast_tensors
    c, p = broadcast_tensors(count, prob)
    shape = tuple(c.shape)
    r = _binomial_sample(c, p, generator).reshape(shape).to(prob.dtype)
    if _ag.is_grad_enabled() and (count.requires_grad or prob.requires_grad):
        from ember.core.function import without_derivative
        return without_derivative("binomial", lambda *_: r, count, prob)
    return r
