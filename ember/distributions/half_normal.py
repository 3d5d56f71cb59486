"""The half-normal distribution: |X| for X ~ Normal(0, scale)."""
import math

from ember.distributions._folded import _FoldedAtZero
from ember.distributions.normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_FoldedAtZero):
    """HalfNormal(scale)."""

    _base = Normal

    def expand(self, batch_shape, _instance=None):
        return self._expand_subclass(HalfNormal, batch_shape, _instance)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
