"""The generalized Pareto distribution (exponential for concentration 0, Pareto for
positive, bounded for negative concentration)."""
import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _broadcast_params

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): survival function
    (1 + c z)^(-1/c), z = (x - loc) / scale (exp(-z) at c = 0)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        (self.loc, self.scale, self.concentration), batch_shape = _broadcast_params(
            loc, scale, concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance,
                                   ("loc", "scale", "concentration"))

    def _zero_and_safe(self):
        """(where c counts as 0, c with those elements set to 1)."""
        c = self.concentration
        zero = ember.isclose(c, ember.zeros_like(c))
        return zero, ember.where(zero, 1.0, c)

    def rsample(self, sample_shape=ember.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe()
        y = 1 / c + ember.ones_like(z)
        nonzero = ember.where(y == 0, y, y * ember.log1p(c * z))
        return -self.scale.log() - ember.where(zero, z, nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe()
        return ember.where(zero, -z, -ember.log1p(c * z) / c)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, c = self._zero_and_safe()
        log_u = ember.log1p(-value)
        nonzero = self.loc + self.scale / c * ember.expm1(-c * log_u)
        return ember.where(zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        c = self.concentration
        valid = c < 1
        return ember.where(valid, self.loc + self.scale / (1 - ember.where(valid, c, 0.5)),
                           math.nan)

    @property
    def variance(self):
        c = self.concentration
        valid = c < 0.5
        safe = ember.where(valid, c, 0.25)
        return ember.where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)),
                           math.nan)

    def entropy(self):
        return ember.broadcast_to(ember.log(self.scale) + self.concentration + 1,
                                  tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = ember.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(self.loc, upper)
