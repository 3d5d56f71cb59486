"""Activation functions of torch.nn.functional: the core's kernels and composites
(core/activations.py, the fused softmax family) behind PyTorch's signatures.

Also the in-place forms (elu_, selu_, ...), randomized leaky ReLU and the Gumbel-softmax
estimator."""
import warnings

from ember.core import _tensor as _T
from ember.core import activations as _A
from ember.core._errors import _tensor_arg

__all__ = ["celu", "elu", "gelu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
           "leaky_relu", "log_softmax", "logsigmoid", "mish", "normalize", "relu",
           "relu6", "relu_", "selu", "sigmoid", "silu", "softmax", "softmin",
           "softplus", "softshrink", "softsign", "tanh", "tanhshrink", "threshold",
           "celu_", "elu_", "gumbel_softmax", "hardtanh_", "leaky_relu_", "rrelu",
           "rrelu_", "selu_", "threshold_"]


_F = _T.table_functions()

gelu = _A.gelu
silu = _A.silu
mish = _A.mish
softplus = _A.softplus
hardtanh = _A.hardtanh
elu = _A.elu
leaky_relu = _A.leaky_relu
hardshrink = _A.hardshrink
prelu = _A.prelu

# SELU's constants (Klambauer et al. 2017)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


_finish = _A._inplace


def relu(input, inplace=False):
    """max(input, 0) elementwise (in place with ``inplace``)."""
    _tensor_arg(input, "relu", position=1)
    return input.relu_() if inplace else _T.relu(input)


def relu_(input):
    """relu in place."""
    return _tensor_arg(input, "relu_", position=1).relu_()


def relu6(input, inplace=False):
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def sigmoid(input):
    """1 / (1 + exp(-input))."""
    return _T.sigmoid(_tensor_arg(input, "sigmoid", position=1))


def tanh(input):
    """tanh(input)."""
    return _T.tanh(_tensor_arg(input, "tanh", position=1))


def selu(input, inplace=False):
    """scale * elu(input, alpha) with SELU's fixed constants."""
    x = _A._source(_A._float_input(input, "selu", "elu_cpu"), inplace)
    return _finish(input, _A._elu_kernel(x, _SELU_ALPHA, _SELU_SCALE,
                                         out=_A._into(input, x, inplace)), inplace)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    x = _A._source(_A._float_input(input, "celu", "elu_cpu"), inplace)
    return _finish(input, _A._elu_kernel(x, alpha, input_scale=1 / alpha, name="celu",
                                         out=_A._into(input, x, inplace)), inplace)


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value."""
    _tensor_arg(input, "threshold", position=1)
    return _finish(input, _T.where(input > threshold, input, value), inplace)


_threshold = threshold        # for threshold_, whose argument of that name shadows it


@_A._in_opmath(1)
def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6 (its gradient 1/6 only where -3 < x < 3)."""
    x = _A._source(_A._float_input(input, "hardsigmoid"), inplace)
    r = _A._fused_activation("hardsigmoid", x, out=_A._into(input, x, inplace))
    return _finish(input, _A._hardtanh(x + 3.0, 0.0, 6.0) / 6.0 if r is None else r, inplace)


@_A._in_opmath(1)
def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6: gradient 0 for x <= -3, x / 3 + 1/2 below 3, then 1."""
    x = _A._source(_A._float_input(input, "hardswish"), inplace)
    r = _A._fused_activation("hardswish", x, out=_A._into(input, x, inplace))
    return _finish(input, x * _A._hardtanh(x + 3.0, 0.0, 6.0) / 6.0 if r is None else r,
                   inplace)


def softshrink(input, lambd=0.5):
    """input - lambd above lambd, input + lambd below -lambd, else 0."""
    _tensor_arg(input, "softshrink", position=1)
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    r = _A._fused_activation("softshrink", input, lambd)
    if r is not None:
        return r
    # masks rather than input - clamp(input): no gradient at +-lambd itself, as PyTorch's
    # softshrink_backward (the clamp's ties would pass half); nan passes through
    inside = _T._abs(input) <= lambd
    return _T.where(inside, input * 0, input - input.sign() * lambd)


def softsign(input):
    """x / (1 + |x|)."""
    return _tensor_arg(input, "softsign", position=1) / (1 + _T._abs(input))


def tanhshrink(input):
    """x - tanh(x)."""
    return _tensor_arg(input, "tanhshrink", position=1) - _T.tanh(input)


@_A._in_opmath()
def logsigmoid(input):
    """log(sigmoid(x)), computed as min(x, 0) - log1p(exp(-|x|)) (no overflow)."""
    x = _A._float_input(input, "log_sigmoid_forward")
    r = _A._fused_activation("log_sigmoid", x)
    if r is not None:
        return r
    return _T._minimum_scalar(x, 0.0) - _F["log1p"](_T.exp(-_T._abs(x)))


@_A._in_opmath()
def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of ``input`` along ``dim``."""
    _tensor_arg(input, "glu", position=1)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        d = dim % input.dim()
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    half = size // 2
    return input.narrow(dim, 0, half) * _T.sigmoid(input.narrow(dim, half, half))


def _softmax_dim(name, ndim, stacklevel):
    # PyTorch's legacy rule for a missing dim: 0 for 0-d, 1-d and 3-d inputs, else 1
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  f"to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim`` (``dtype`` casts the input first)."""
    _tensor_arg(input, "softmax", position=1)
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _T.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input)."""
    _tensor_arg(input, "softmin", position=1)
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    x = input if dtype is None else input.to(dtype)
    return _T.softmax(-x, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along ``dim``, computed stably."""
    _tensor_arg(input, "log_softmax", position=1)
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _T.log_softmax(input, dim, dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    from ember.core.norms import norm
    _tensor_arg(input, "normalize", position=1)
    denom = _T._maximum_scalar(norm(input, p, dim, keepdim=True), eps).expand_as(input)
    result = input / denom
    if out is not None:
        return _T._result_out(result, out, "normalize")
    return result


__all__ += ["prelu"]


def elu_(input, alpha=1.0):
    """elu in place."""
    return elu(input, alpha, inplace=True)


def celu_(input, alpha=1.0):
    """celu in place."""
    return celu(input, alpha, inplace=True)


def selu_(input):
    """selu in place."""
    return selu(input, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh in place."""
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu in place."""
    return leaky_relu(input, negative_slope, inplace=True)


def threshold_(input, threshold, value):
    """threshold in place."""
    return _threshold(input, threshold, value, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs times a slope drawn from U(lower, upper) per
    element while training, times (lower + upper) / 2 otherwise."""
    x = _A._float_input(input, "rrelu", "rrelu_with_noise_cpu")
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound: "
                           f"lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    x = _A._source(x, inplace)
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
