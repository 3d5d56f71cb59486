"""The Dirichlet distribution on the simplex."""
import ember
import ember.nn.functional as F
from ember.core.random_samplers import _dirichlet_rsample
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class _Dirichlet:
    """PyTorch's autograd Function behind Dirichlet.rsample: ``_Dirichlet.apply(
    concentration)`` is a reparameterised sample (ember differentiates the gammas it
    normalises, so apply is the sampler itself)."""

    apply = staticmethod(_dirichlet_rsample)


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): density prod_i x_i^(a_i - 1) / B(a) on the simplex."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.size()
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1))
                - ember.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        # with every a_i < 1 the density peaks at a vertex: the largest a_i - 1
        corner = (self.concentration < 1).all(-1, keepdim=True)
        vertex = F.one_hot(shifted.argmax(-1), shifted.shape[-1]).to(mode.dtype)
        return ember.where(corner, vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return (self.concentration * (total - self.concentration)
                / (total.pow(2) * (total + 1)))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        total = c.sum(-1)
        return (ember.lgamma(c).sum(-1) - ember.lgamma(total) - (k - total)
                * ember.digamma(total) - ((c - 1.0) * ember.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))
