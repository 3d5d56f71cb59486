"""The negative binomial distribution: successes before ``total_count`` failures."""
import ember
import ember.nn.functional as F
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import _BinaryParameter, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryParameter, Distribution):
    """NegativeBinomial(total_count, probs=None, logits=None): the number of successes
    (probability ``probs`` each) before ``total_count`` failures; total_count may be
    real (a gamma-Poisson mixture)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,), batch_shape = self._init_param(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(NegativeBinomial, batch_shape, _instance, ("total_count",))

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return ember.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        normalization = (-ember.lgamma(n + value) + ember.lgamma(1.0 + value)
                         + ember.lgamma(n))
        # total_count = 0: all the mass at 0, whose log_prob is 0
        normalization = normalization.masked_fill(n + value == 0.0, 0.0)
        return unnormalized - normalization
