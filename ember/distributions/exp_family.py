"""Exponential families (PyTorch's torch.distributions.exp_family): densities
p(x; theta) = h(x) exp(<t(x), theta> - F(theta)).  Subclasses give their natural
parameters theta, the log normalizer F and the carrier measure's mean E[log h(x)];
entropy (and the Bregman-divergence KL between two members of one family) follows from F
by autograd."""
import ember
from ember.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions."""

    @property
    def _natural_params(self):
        """The natural parameters theta, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """F(theta), the log normalizer."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[log h(x)]."""
        raise NotImplementedError

    def entropy(self):
        """-E[log h] + F(theta) - <theta, grad F(theta)>."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with ember.enable_grad():
            normalizer = self._log_normalizer(*params)
            grads = ember.autograd.grad(normalizer.sum(), params, create_graph=True)
        result = result + normalizer
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
