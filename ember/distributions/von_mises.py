"""The von Mises distribution on the circle."""
import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _broadcast_params, lazy_property

__all__ = ["VonMises"]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0 and ``order`` 0 or 1, as log(exponentially scaled I) + x:
    no overflow for large x."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    scaled = ember.special.i0e(x) if order == 0 else ember.special.i1e(x)
    return scaled.log() + x


def _rejection_sample(loc, concentration, proposal_r, shape, dtype, device):
    """Best & Fisher (1979): wrapped-Cauchy proposals accepted elementwise, redrawn for the
    pending elements only (in float64)."""
    out = ember.empty(shape, dtype=ember.float64, device=device)
    k = concentration.to(ember.float64).expand(shape).reshape(-1)
    r = proposal_r.to(ember.float64).expand(shape).reshape(-1)
    flat = out.reshape(-1)
    pending = ember.arange(flat.shape[0], device=device)
    while pending.numel():
        n = pending.numel()
        u = ember.rand(3, n, dtype=ember.float64, device=device)
        kk, rr = k[pending], r[pending]
        z = ember.cos(math.pi * u[0])
        f = (1 + rr * z) / (rr + z)
        c = kk * (rr - f)
        ok = ((c * (2 - c) - u[1]) > 0) | ((c / u[1]).log() + 1 - c >= 0)
        x = (u[2] - 0.5).sign() * ember.acos(f.clamp(-1, 1))
        flat[pending[ok]] = x[ok]
        pending = pending[~ok]
    result = flat.reshape(shape)
    loc64 = loc.to(ember.float64)
    return ((result + math.pi + loc64) % (2 * math.pi) - math.pi).to(dtype)


class VonMises(Distribution):
    """VonMises(loc, concentration): density exp(k cos(x - loc)) / (2 pi I_0(k)) on
    [-pi, pi)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        (self.loc, self.concentration), batch_shape = _broadcast_params(loc, concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * ember.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration))

    @lazy_property
    def _proposal_r(self):
        k = self.concentration.to(ember.float64)
        tau = 1 + (1 + 4 * k ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        r = (1 + rho ** 2) / (2 * rho)
        # the closed form cancels for small k: its expansion 1/k + k there
        return ember.where(k < 1e-5, 1 / k + k, r)

    def sample(self, sample_shape=ember.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            return _rejection_sample(self.loc, self.concentration, self._proposal_r, shape,
                                     self.loc.dtype, self.loc.device)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - (ember.special.i1e(k) / ember.special.i0e(k))

    def entropy(self):
        k = self.concentration
        ratio = ember.special.i1e(k) / ember.special.i0e(k)
        return -k * ratio + math.log(2 * math.pi) + _log_modified_bessel_fn(k)
