"""Activation modules (``torch.nn.modules.activation``): each holds its hyper-parameters
and calls the matching nn.functional function."""
import warnings

from ember.nn._functional import activation as F
from ember.nn._functional import activation as _F_act
from ember.nn.modules.module import Module

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish",
           "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "ReLU", "ReLU6",
           "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus",
           "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold"]


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    __constants__ = ["inplace"]
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return self._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _Plain(Module):
    """An activation without options."""

    _fn = None

    def forward(self, input):
        return self._fn(input)


class ReLU(_Inplace):
    """max(0, x)."""
    _fn = staticmethod(F.relu)


class ReLU6(_Inplace):
    """min(max(0, x), 6)."""
    _fn = staticmethod(F.relu6)


class SELU(_Inplace):
    """scale * elu(x, alpha) with SELU's constants."""
    _fn = staticmethod(F.selu)


class SiLU(_Inplace):
    """x * sigmoid(x)."""
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    """x * tanh(softplus(x))."""
    _fn = staticmethod(F.mish)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6."""
    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self):
        return ""           # PyTorch's repr leaves out ``inplace`` here


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6."""
    _fn = staticmethod(F.hardswish)

    def extra_repr(self):
        return ""           # PyTorch's repr leaves out ``inplace`` here


class Sigmoid(_Plain):
    """1 / (1 + exp(-x))."""
    _fn = staticmethod(F.sigmoid)


class Tanh(_Plain):
    """tanh(x)."""
    _fn = staticmethod(F.tanh)


class LogSigmoid(_Plain):
    """log(sigmoid(x))."""
    _fn = staticmethod(F.logsigmoid)


class Softsign(_Plain):
    """x / (1 + |x|)."""
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    """x - tanh(x)."""
    _fn = staticmethod(F.tanhshrink)


class GELU(Module):
    """x * Phi(x) (``approximate='tanh'``: the tanh approximation)."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x for x >= 0, negative_slope * x otherwise."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + \
            (", inplace=True" if self.inplace else "")


class _AlphaUnit(Module):
    """ELU and CELU: an ``alpha`` and ``inplace``."""

    __constants__ = ["alpha", "inplace"]
    _fn = None

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return self._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class ELU(_AlphaUnit):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    _fn = staticmethod(F.elu)


class CELU(_AlphaUnit):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _fn = staticmethod(F.celu)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clamped into [min_val, max_val]."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        # min_value/max_value: PyTorch's deprecated spellings, warned about and honoured
        for old, new in (("min_value", min_value), ("max_value", max_value)):
            if new is not None:
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to "
                              f"`{old[:3]}_val`", FutureWarning, stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            (", inplace=True" if self.inplace else "")


class Threshold(Module):
    """x where x > threshold, else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + \
            (", inplace=True" if self.inplace else "")


class _Shrink(Module):
    __constants__ = ["lambd"]
    _fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return self._fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""
    _fn = staticmethod(F.hardshrink)


class Softshrink(_Shrink):
    """x -+ lambd outside [-lambd, lambd], else 0."""
    _fn = staticmethod(F.softshrink)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _SoftmaxFamily(Module):
    __constants__ = ["dim"]
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def forward(self, input):
        return self._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    """exp(x) / sum(exp(x)) along ``dim``."""
    _fn = staticmethod(F.softmax)


class Softmin(_SoftmaxFamily):
    """softmax(-x) along ``dim``."""
    _fn = staticmethod(F.softmin)


class LogSoftmax(_SoftmaxFamily):
    """log(softmax(x)) along ``dim``."""
    _fn = staticmethod(F.log_softmax)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3, _stacklevel=5)


__all__ += ["PReLU"]


class PReLU(Module):
    """max(0, x) + a * min(0, x) with a learnable ``a``: one shared value or one per
    channel (``num_parameters``), initialised to ``init``."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        from ember.core import _tensor as _T
        from ember.nn.parameter import Parameter
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_T.empty((num_parameters,), device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from ember.nn import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: negative inputs times a slope drawn from U(lower, upper)
    while training, (lower + upper) / 2 in eval: ``RReLU(lower=1/8, upper=1/3,
    inplace=False)``."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return _F_act.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + \
            (", inplace=True" if self.inplace else "")


__all__ += ["RReLU"]

# MultiheadAttention lives in attention.py and reports this module as its own (PyTorch's)
from ember.nn.modules.attention import MultiheadAttention  # noqa: E402

__all__ += ["MultiheadAttention"]
