"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d over
``ember.nn.functional``'s convolutions."""
import math

from ember.core import _tensor as _T

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What the convolution layers share: argument checks, parameters, init and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, ntuple, device=None, dtype=None,
                 transposed=False, output_padding=0):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in ntuple(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            modes = ", ".join(repr(m) for m in sorted(_PADDING_MODES))
            raise ValueError(f"padding_mode must be one of {{{modes}}}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = ntuple(kernel_size)
        self.stride = ntuple(stride)
        self.padding = padding if isinstance(padding, str) else ntuple(padding)
        self.dilation = ntuple(dilation)
        self.transposed, self.output_padding = transposed, ntuple(output_padding)
        self.groups, self.padding_mode = groups, padding_mode
        self._reversed_padding_repeated_twice = self._padding_for_pad()
        factory = {"device": device, "dtype": dtype}
        # a transposed conv's weight maps in_channels to out_channels / groups per group
        channels = (in_channels, out_channels // groups) if transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(_T.empty(channels + self.kernel_size, **factory))
        if bias:
            self.bias = Parameter(_T.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _padding_for_pad(self):
        """F.pad's argument (last dim first) for a non-'zeros' padding_mode."""
        if self.padding == "valid":
            return [0, 0] * len(self.kernel_size)
        if self.padding == "same":
            pads = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return pads
        return list(_reverse_repeat_tuple(self.padding, 2))

    def reset_parameters(self):
        """PyTorch's default: kaiming_uniform_(a=sqrt(5)) weights, U(-1/sqrt(fan_in), ...)
        bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        n = len(self.kernel_size)
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _conv_forward(self, conv, input, weight, bias, ntuple):
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, ntuple(0), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L) or (C_in, L) inputs:
    ``Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
    groups=1, bias=True, padding_mode='zeros', device=None, dtype=None)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, _single, device, dtype)

    def forward(self, input):
        return self._conv_forward(F.conv1d, input, self.weight, self.bias, _single)


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W) inputs:
    ``Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
    groups=1, bias=True, padding_mode='zeros', device=None, dtype=None)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, _pair, device, dtype)

    def forward(self, input):
        return self._conv_forward(F.conv2d, input, self.weight, self.bias, _pair)


class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs:
    ``Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
    groups=1, bias=True, padding_mode='zeros', device=None, dtype=None)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, _triple, device, dtype)

    def forward(self, input):
        return self._conv_forward(F.conv3d, input, self.weight, self.bias, _triple)


class _ConvTransposeNd(_ConvNd):
    """What the transposed convolution layers share: weight [in, out / groups, *k], only
    'zeros' padding, and ``output_size=`` in forward picking the output padding."""

    _nd = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, groups, bias, dilation, padding_mode, ntuple, device, dtype):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, ntuple, device, dtype, transposed=True,
                         output_padding=output_padding)

    def _output_padding(self, input, output_size):
        """The output padding giving ``output_size`` (with or without the batch and channel
        dims), checked against the sizes this layer's stride can produce."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.dim() == nd + 2 else 1
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {lead + nd} elements (got {len(output_size)})")
        spatial = input.shape[input.dim() - nd:]
        low = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d]
               + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        high = [low[d] + self.stride[d] - 1 for d in range(nd)]
        for d in range(nd):
            if not low[d] <= output_size[d] <= high[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {low} to {high} (for an input of "
                                 f"{input.shape[2:]})")
        return tuple(int(output_size[d]) - low[d] for d in range(nd))

    def forward(self, input, output_size=None):
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution over (N, C_in, L) or (C_in, L) inputs:
    ``ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
    dtype=None)``; ``forward(input, output_size=None)``."""

    _nd = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, _single, device,
                         dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution over (N, C_in, H, W) or (C_in, H, W) inputs:
    ``ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
    dtype=None)``; ``forward(input, output_size=None)``."""

    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, _pair, device,
                         dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs:
    ``ConvTranspose3d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
    dtype=None)``; ``forward(input, output_size=None)``."""

    _nd = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, _triple, device,
                         dtype)


# the lazy variants live in lazy.py (which imports this module) and report this module as
# theirs, PyTorch's path: they resolve here on first use
_LAZY_CLASSES = ("LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                 "LazyConvTranspose2d", "LazyConvTranspose3d")
__all__ += list(_LAZY_CLASSES)


def __getattr__(name):
    if name in _LAZY_CLASSES:
        from . import lazy
        return getattr(lazy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
