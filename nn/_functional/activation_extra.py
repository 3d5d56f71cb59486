"""The rest of torch.nn.functional's activations: the in-place forms (elu_, selu_, ...),
randomized leaky ReLU and the Gumbel-softmax estimator."""
from ember.core import _tensor as _T
from ember.core import activations as _A
from ember.core._errors import _tensor_arg
from ember.nn._functional import activation as _act

__all__ = ["celu_", "elu_", "gumbel_softmax", "hardtanh_", "leaky_relu_", "rrelu", "rrelu_",
           "selu_", "threshold_"]


def elu_(input, alpha=1.0):
    """elu in place."""
    return _act.elu(input, alpha, inplace=True)


def celu_(input, alpha=1.0):
    """celu in place."""
    return _act.celu(input, alpha, inplace=True)


def selu_(input):
    """selu in place."""
    return _act.selu(input, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh in place."""
    return _act.hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu in place."""
    return _act.leaky_relu(input, negative_slope, inplace=True)


def threshold_(input, threshold, value):
    """threshold in place."""
    return _act.threshold(input, threshold, value, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs times a slope drawn from U(lower, upper) per
    element while training, times (lower + upper) / 2 otherwise."""
    x = _A._float_input(input, "rrelu", "rrelu_with_noise_cpu")
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound: "
                           f"lower={lower}, upper={upper}")
    if not training:
        return _act.leaky_relu(input, (lower + upper) / 2, inplace)
    slope = _T.empty_like(x).uniform_(lower, upper)
    noise = _T.where(x >= 0, 1.0, slope).to(x.dtype)
    return _A._inplace(input, x * noise, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu in place."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples of the Gumbel-softmax distribution: softmax((logits + g) / tau) with g
    standard Gumbel noise; ``hard`` returns one-hot vectors whose gradient is the soft
    sample's (straight-through)."""
    _tensor_arg(logits, "gumbel_softmax", position=1)
    gumbels = -_T.empty_like(logits).exponential_().log()
    y_soft = _T.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _T.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
