"""What HalfNormal and HalfCauchy share: |X| for X from a distribution symmetric about 0
(the base, with location 0 and the given scale), through AbsTransform.  The density doubles
on [0, inf), the cdf is 2 F(x) - 1, and the entropy drops by log 2."""
import math

import ember
from ember.distributions import constraints
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AbsTransform

__all__ = []


class _FoldedAtZero(TransformedDistribution):
    """``cls(scale)``: |X| for X ~ ``cls._base``(0, scale)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None            # the symmetric distribution folded (Normal, Cauchy)

    def __init__(self, scale, validate_args=None):
        super().__init__(self._base(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return ember.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = ember.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, lp, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
