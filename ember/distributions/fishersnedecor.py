"""The Fisher-Snedecor (F) distribution."""
import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import _broadcast_params

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2): (X1 / df1) / (X2 / df2) for chi-squared X1, X2."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        (self.df1, self.df2), batch_shape = _broadcast_params(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        return ember.where(df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        df1, df2 = self.df1, self.df2
        mode = (df1 - 2) / df1 * df2 / (df2 + 2)
        return ember.where(df1 > 2, mode, math.nan)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        var = (2 * df2.pow(2) * (df1 + df2 - 2)
               / (df1 * (df2 - 2).pow(2) * (df2 - 4)))
        return ember.where(df2 > 4, var, math.nan)

    def rsample(self, sample_shape=ember.Size()):
        # Gamma(df/2, df) is chi2(df) / df
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape)
        tiny = ember.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        h = (self.df1 + self.df2) * 0.5
        t1 = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        t2 = self.df1.log() * h1 + self.df2.log() * h2
        t3 = value.log() * (h1 - 1)
        t4 = (self.df2 + self.df1 * value).log() * h
        return t1 + t2 + t3 - t4
