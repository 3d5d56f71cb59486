"""Normalisation functions: layer_norm and batch_norm are the core's explicit ops (fused
on the CPU); group_norm normalises each group through the layer-norm op, instance_norm each
(sample, channel) through the batch-norm op; rms_norm is a composite."""
import math
import numbers

from ember.core import _tensor as _T
from ember.core.typeinfo import finfo

__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm", "local_response_norm",
           "rms_norm"]

batch_norm = _T.batch_norm
layer_norm = _T.layer_norm


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
    grouped = input.reshape(n, num_groups, math.prod(input.shape[1:]) // num_groups)
    y = _T.native_layer_norm(grouped, (grouped.shape[-1],), None, None, eps)[0]
    y = y.reshape(input.shape)
    affine = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(affine)
    if bias is not None:
        y = y + bias.reshape(affine)
    return y


def _repeat(t, times):
    return None if t is None else t.repeat(times)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Instance normalisation: each channel of each sample of ``input`` (N, C, ...)
    normalised over its spatial dims, then the per-channel ``weight`` and ``bias``.

    With ``use_input_stats`` the statistics come from the input (and ``running_mean`` /
    ``running_var``, when given, move towards their mean over the batch by ``momentum``);
    otherwise the running statistics are used."""
    shape = tuple(input.shape)
    if use_input_stats:
        spatial = 1
        for s in shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = shape[0], shape[1]
    # a batch norm over one sample whose channels are the N * C (sample, channel) pairs
    flat = input.reshape((1, b * c) + shape[2:])
    mean, var = _repeat(running_mean, b), _repeat(running_var, b)
    out = _T.batch_norm(flat, mean, var, _repeat(weight, b), _repeat(bias, b),
                        use_input_stats, momentum, eps)
    if use_input_stats:
        for running, repeated in ((running_mean, mean), (running_var, var)):
            if running is not None:
                running.copy_(repeated.reshape(b, c).mean(0))
    return out.reshape(shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims:
    ``input / sqrt(mean(input ** 2) + eps) * weight``; ``eps`` None means the machine
    epsilon of the compute dtype (float32 for half inputs)."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{list(ns)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(ns)}")
    if input.dim() < len(ns):
        raise ValueError(f"Input tensor must have at least {len(ns)} dimensions, but got "
                         f"{input.dim()}")
    if tuple(input.shape[input.dim() - len(ns):]) != ns:
        star = ", ".join(str(n) for n in ns)
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{star}], but got input of size{list(input.shape)}")
    x = input
    if x.dtype.itemsize < 4:               # half and bfloat16 compute in float32
        x = x.float()
    if eps is None:
        eps = finfo(x.dtype).eps
    dims = tuple(range(-len(ns), 0))
    y = x * (x * x).mean(dims, keepdim=True).add(eps).rsqrt()
    if weight is not None:
        y = y * weight
    return y.to(input.dtype)                # as PyTorch: the input's dtype, whatever weight's


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta; the window
    holds size // 2 channels before and (size - 1) // 2 after (zeros past the edges)."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    shape = list(sq.shape)
    shape[1] = size // 2
    front = _T.zeros(tuple(shape), dtype=sq.dtype, device=sq.device)
    shape[1] = (size - 1) // 2
    back = _T.zeros(tuple(shape), dtype=sq.dtype, device=sq.device)
    padded = _T._cat([front, sq, back], 1)
    mean = padded.unfold(1, size, 1).sum(-1) / size
    return input / (mean * alpha + k).pow(beta)
