"""Power-average, unpooling and fractional max-pooling layers; they report
``torch.nn.modules.pooling`` as their module, PyTorch's path (pooling.py re-exports them)."""
from ember.nn._functional import pooling_extra as F

from .module import Module
from .utils import _ntuple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """(sum over each window of x^p)^(1/p): ``LPPool1d(norm_type, kernel_size, stride=None,
    ceil_mode=False)``."""
    _fn = F.lp_pool1d


class LPPool2d(_LPPoolNd):
    """(sum over each window of x^p)^(1/p) over 2-d windows."""
    _fn = F.lp_pool2d


class LPPool3d(_LPPoolNd):
    """(sum over each window of x^p)^(1/p) over 3-d windows."""
    _fn = F.lp_pool3d


class _MaxUnpoolNd(Module):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        ntuple = _ntuple(self._nd)
        self.kernel_size = ntuple(kernel_size)
        self.stride = ntuple(stride if stride is not None else kernel_size)
        self.padding = ntuple(padding)

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: ``MaxUnpool1d(kernel_size, stride=None,
    padding=0)``; ``forward(input, indices, output_size=None)``."""
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d."""
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d."""
    _nd = 3


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        ntuple = _ntuple(self._nd)
        self.kernel_size = ntuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = ntuple(output_size) if output_size is not None else None
        self.output_ratio = ntuple(output_ratio) if output_ratio is not None else None
        name = f"FractionalMaxPool{self._nd}d"
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over pseudo-randomly placed windows with a fractional stride:
    ``FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None,
    return_indices=False, _random_samples=None)``."""
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """FractionalMaxPool2d over (N, C, T, H, W) inputs."""
    _nd = 3


for _name in __all__:
    globals()[_name].__module__ = "ember.nn.modules.pooling"
