"""Normalisation functions: layer_norm and batch_norm are the core's explicit ops (fused
on the CPU); group_norm normalises each group through the layer-norm op."""
from ember.core import _tensor as _T

__all__ = ["batch_norm", "group_norm", "layer_norm"]

layer_norm = _T.layer_norm
batch_norm = _T.batch_norm


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Group normalisation: the channels (dim 1) of ``input`` (N, C, ...) split into
    ``num_groups`` groups, each normalised over its channels and the remaining dims, then
    the per-channel affine ``weight`` and ``bias`` (shape (C,))."""
    if input.dim() < 2:
        raise RuntimeError(f"group_norm: expected input with at least 2 dims (N, C, ...), "
                           f"got {input.dim()}D input")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for p, name in ((weight, "weight"), (bias, "bias")):
        if p is not None and (p.dim() != 1 or p.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(p.shape)} and input of shape {list(input.shape)}")
    grouped = input.reshape(n, num_groups, -1)
    y = _T.native_layer_norm(grouped, (grouped.shape[-1],), None, None, eps)[0]
    y = y.reshape(input.shape)
    affine = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(affine)
    if bias is not None:
        y = y + bias.reshape(affine)
    return y
