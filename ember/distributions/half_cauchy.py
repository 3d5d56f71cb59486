"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""
import math

import ember
from ember.distributions._folded import _FoldedAtZero
from ember.distributions.cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    """HalfCauchy(scale)."""

    _base = Cauchy

    def expand(self, batch_shape, _instance=None):
        return self._expand_subclass(HalfCauchy, batch_shape, _instance)

    @property
    def mean(self):
        return ember.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
