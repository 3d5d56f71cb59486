"""Padding layers (``torch.nn.modules.padding``): F.pad with a fixed mode and amounts.

``padding`` is an int (every side) or a tuple in F.pad's order: (left, right) for the last
dim, then (top, bottom), then (front, back)."""
from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


class _PadNd(Module):
    __constants__ = ["padding"]
    mode = "constant"
    dims = 1        # spatial dims padded: input is (C, *spatial) or (N, C, *spatial)

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self.dims)(padding)

    def _check_input_dim(self, input):
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input "
                             f"(got {input.dim()}D input)")

    def forward(self, input):
        if self.mode == "circular":     # PyTorch checks the rank for circular padding only
            self._check_input_dim(input)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim of (N, C, W) or (C, W) with ``value``: ``ConstantPad1d(padding,
    value)``."""
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims of (N, C, H, W) or (C, H, W) with ``value``."""
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims of (N, C, D, H, W) or (C, D, H, W) with ``value``."""
    dims = 3


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros: ``ZeroPad1d(padding)``."""
    dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros: ``ZeroPad2d(padding)``."""
    dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros: ``ZeroPad3d(padding)``."""
    dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its mirror image (edge excluded): ``ReflectionPad1d(padding)``."""
    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pad the last two dims with their mirror images (edges excluded)."""
    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pad the last three dims with their mirror images (edges excluded)."""
    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim with copies of its edge values: ``ReplicationPad1d(padding)``."""
    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pad the last two dims with copies of their edge values."""
    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pad the last three dims with copies of their edge values."""
    mode, dims = "replicate", 3


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around (periodic): ``CircularPad1d(padding)``."""
    mode, dims = "circular", 1


class CircularPad2d(_PadNd):
    """Pad the last two dims by wrapping around (periodic)."""
    mode, dims = "circular", 2


class CircularPad3d(_PadNd):
    """Pad the last three dims by wrapping around (periodic)."""
    mode, dims = "circular", 3
