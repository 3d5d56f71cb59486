"""LayerNorm, GroupNorm and RMSNorm over ``ember.nn.functional``."""
import numbers

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]

_INT64 = _dtype_by_name["int64"]


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


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta:
    ``LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)``."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The legacy (Lua Torch) cross-channel LRN of 4-d inputs: x * (k + alpha / size *
    sum of x^2 over a window of channels)^-beta, the window reproducing the original's
    running update (which never drops channel 0 once it entered)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        channels = input.shape[1]
        pre_pad = int((self.size - 1) / 2 + 1)
        sq = input * input
        zero = _T.zeros((input.shape[0], 1) + tuple(input.shape[2:]), dtype=sq.dtype,
                        device=sq.device)
        running = _T.cumsum(_T._cat([zero, sq], 1), 1)     # running[c] = sum of sq[:c]
        lo = [max(0, c - pre_pad + 1) for c in range(channels)]
        hi = [min(c + pre_pad - 1, channels - 1) + 1 for c in range(channels)]
        at = {"dtype": _INT64, "device": input.device}
        scale = running.index_select(1, _T.tensor(hi, **at)) - \
            running.index_select(1, _T.tensor(lo, **at))
        dropped = _T.tensor([float(v > 0) for v in lo], dtype=sq.dtype, device=sq.device)
        scale = scale + sq[:, :1] * dropped.reshape(1, -1, 1, 1)
        return input * (scale * (self.alpha / self.size) + self.k).pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ += ["CrossMapLRN2d", "LocalResponseNorm"]
