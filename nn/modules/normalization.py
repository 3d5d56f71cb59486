"""LayerNorm, GroupNorm and RMSNorm over ``ember.nn.functional``."""
import numbers

from ember.core import _tensor as _T

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]


def _affine_parameters(module, shape, affine, bias, factory):
    """weight (and bias, unless ``bias`` is False) of ``shape`` when ``affine``; the norms'
    shared parameter layout (None entries keep the state_dict keys out)."""
    for name, wanted in (("weight", affine), ("bias", affine and bias)):
        module.register_parameter(name, Parameter(_T.empty(shape, **factory)) if wanted
                                  else None)


def _reset_affine(module):
    """weight ones, bias zeros (where present)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dims: ``LayerNorm(normalized_shape,
    eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None)``."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias,
                           {"device": device, "dtype": dtype})
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones, bias zeros."""
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalises each of ``num_groups`` channel groups: ``GroupNorm(num_groups,
    num_channels, eps=1e-05, affine=True, device=None, dtype=None, *, bias=True)``."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        _affine_parameters(self, num_channels, affine, bias, {"device": device, "dtype": dtype})
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones, bias zeros."""
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims:
    ``RMSNorm(normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None)``
    (``eps`` None: the input dtype's machine epsilon); a weight (ones), no bias."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.register_parameter("weight", Parameter(_T.empty(self.normalized_shape,
                                                             device=device, dtype=dtype))
                                if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
