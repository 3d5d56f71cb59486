"""Dropout layers (``torch.nn.modules.dropout``): active in training mode only."""
from ember.nn._functional import dropout as _D
from ember.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return self._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability p during training, scaling the rest by
    1/(1-p)."""
    _fn = staticmethod(_D.dropout)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) / (C, L) inputs during training."""
    _fn = staticmethod(_D.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) inputs during training."""
    _fn = staticmethod(_D.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) / (C, D, H, W) inputs during training."""
    _fn = staticmethod(_D.dropout3d)


__all__ += ["AlphaDropout", "FeatureAlphaDropout"]


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU activations' zero mean and unit variance (training only)."""
    _fn = staticmethod(_D.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels of (N, C, *) inputs (training only)."""
    _fn = staticmethod(_D.feature_alpha_dropout)
