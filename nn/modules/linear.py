"""Identity, Linear and Bilinear (``torch.nn.modules.linear``)."""
import math

from ember.core import _tensor as _T
from ember.nn import init
from ember.nn._functional.linear import bilinear, linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Bilinear", "Identity", "Linear"]


def _new_param(shape, device, dtype):
    return Parameter(_T.empty(shape, device=device, dtype=dtype))


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x A^T + b with weight A of shape (out_features, in_features), initialised
    from U(-1/sqrt(in_features), 1/sqrt(in_features)) as PyTorch does."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _new_param((out_features, in_features), device, dtype)
        if bias:
            self.bias = _new_param((out_features,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in), ...) for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A x2 + b with weight A of shape (out_features, in1_features,
    in2_features)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = _new_param((out_features, in1_features, in2_features), device, dtype)
        if bias:
            self.bias = _new_param((out_features,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """U(-1/sqrt(in1_features), 1/sqrt(in1_features)) for weight and bias."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear by another name: PyTorch gives MultiheadAttention's ``out_proj`` this class
    (so that quantization leaves it alone), and its repr shows it."""


# the lazy variants live in lazy.py (which imports this module) and report this module as
# theirs, PyTorch's path: they resolve here on first use
_LAZY_CLASSES = ("LazyLinear",)
__all__ += list(_LAZY_CLASSES) + ["NonDynamicallyQuantizableLinear"]


def __getattr__(name):
    if name in _LAZY_CLASSES:
        from . import lazy
        return getattr(lazy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
