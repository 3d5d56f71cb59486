"""dropout and its channel-wise variants dropout1d/2d/3d (torch.nn.functional)."""
import warnings

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d"]


def _check(input, p, op):
    _tensor_arg(input, op, position=1)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input, p, inplace, mask_shape):
    """Zero elements (or whole channels when ``mask_shape`` has 1s) with probability p and
    scale the survivors by 1 / (1 - p)."""
    if p == 1.0:
        mask = _T.zeros(mask_shape, dtype=input.dtype, device=input.device)
    else:
        # half types draw in float32: their rounding would bias `u >= p`
        draw = input.dtype if input.dtype.itemsize >= 4 else _dtype_by_name["float32"]
        u = _T.rand(*mask_shape, dtype=draw, device=input.device)
        mask = (u >= p).to(input.dtype).mul_(1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


def dropout(input, p=0.5, training=True, inplace=False):
    """During training, zero each element with probability ``p`` and scale the rest by
    1 / (1 - p); the identity otherwise."""
    _check(input, p, "dropout")
    if not training or p == 0.0:
        return input
    if not input.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.type()[6:-6]}")
    return _apply_mask(input, p, inplace, tuple(input.shape))


def _feature_dropout(input, p, training, inplace, batched, op):
    _check(input, p, op)
    if not training or p == 0.0:
        return input
    lead = 2 if batched else 1          # (N, C, *) or (C, *): one draw per channel
    shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    return _apply_mask(input, p, inplace, shape)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p``."""
    if isinstance(input, TensorBase) and input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.dim()}D input. Note that dropout1d exists to provide "
                           f"channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or "
                           f"3D inputs).")
    return _feature_dropout(input, p, training, inplace, input.dim() == 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) input with probability ``p`` (a 3-D input is
    taken as (N, C, L), as PyTorch does, with a warning)."""
    if isinstance(input, TensorBase):
        if input.dim() not in (3, 4):
            warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which "
                          f"is deprecated and will result in an error in a future release. "
                          f"To retain the behavior and silence this warning, please use "
                          f"dropout instead. Note that dropout2d exists to provide "
                          f"channel-wise dropout on inputs with 2 spatial dimensions, a "
                          f"channel dimension, and an optional batch dimension (i.e. 3D or "
                          f"4D inputs).")
        elif input.dim() == 3:
            warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                          "channel-wise 1D dropout behavior is desired - input is interpreted "
                          "as shape (N, C, L), where C is the channel dim. This behavior will "
                          "change in a future release to interpret the input as one without a "
                          "batch dimension, i.e. shape (C, H, W). To maintain the 1D "
                          "channel-wise dropout behavior, please switch to using dropout1d "
                          "instead.")
    return _feature_dropout(input, p, training, inplace, True, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input."""
    if isinstance(input, TensorBase) and input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. "
                      f"Note that dropout3d exists to provide channel-wise dropout on inputs "
                      f"with 3 spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 4D or 5D inputs).")
    batched = not isinstance(input, TensorBase) or input.dim() != 4
    return _feature_dropout(input, p, training, inplace, batched, "dropout3d")


__all__ += ["alpha_dropout", "feature_alpha_dropout"]

# SELU's negative saturation value -scale * alpha, the value a dropped unit takes
_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(input, p, training, inplace, feature, op):
    """Dropped units take SELU's saturation value; an affine map a x + b then restores
    zero mean and unit variance (Klambauer et al. 2017), as PyTorch's kernel does."""
    _check(input, p, op)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0) if inplace else input * 0
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    draw = input.dtype if input.dtype.itemsize >= 4 else _dtype_by_name["float32"]
    keep = (_T.rand(*shape, dtype=draw, device=input.device) >= p).to(input.dtype)
    a = 1.0 / ((_ALPHA_PRIME ** 2 * p + 1) * (1 - p)) ** 0.5
    b = (keep - 1) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p
    if inplace:
        return input.mul_(keep * a).add_(b)
    return input * (keep * a) + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: keeps the input's mean and variance (training only)."""
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels of an (N, C, *) input."""
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")
