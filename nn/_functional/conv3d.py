"""conv3d: PyTorch's argument rules (core/conv.py's helpers: int/tuple/'valid'/'same'
padding, unbatched inputs, channel, group and dtype checks) over the core's 2-d convolution:
each depth tap of the kernel is a conv2d over the (strided) depth slices it reads, folded
into the batch, and the taps' outputs add up.  Autograd goes through conv2d."""
from ember.core.conv import (
    _check,
    _check_shapes,
    _expand,
    _pad_right,
    _same_padding,
    _tensor_arg,
    conv2d,
)
from ember.nn._functional.padding import pad as _pad

__all__ = ["conv3d"]


def _conv_args(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """The checked arguments of a conv{nd}d call: the input batched and with 'same''s odd
    extra padding applied, stride/padding/dilation as nd-tuples, groups, and whether the
    input was unbatched."""
    x = _tensor_arg(input, name, "input")
    weight = _tensor_arg(weight, name, "weight")
    if bias is not None:
        _tensor_arg(bias, name, "bias")
    groups = int(groups)
    _check(x, weight, bias, groups, nd, name)
    stride = _expand(stride, nd, "stride")
    dilation = _expand(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    extra = [0] * nd
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            padding, extra = _same_padding(weight, stride, dilation, nd)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _expand(padding, nd, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
    unbatched = x.dim() == nd + 1
    if unbatched:
        x = x.unsqueeze(0)
    x = _pad_right(x, extra)
    _check_shapes(x, weight, bias, padding, dilation, groups, nd)
    return x, stride, padding, dilation, groups, unbatched


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation of ``input`` [N, C, D, H, W] (or unbatched [C, D, H, W]) with
    ``weight`` [Cout, C / groups, kD, kH, kW], plus ``bias`` [Cout]; ``stride``, ``padding``
    and ``dilation`` are ints or triples; ``padding`` may also be 'valid' or 'same'."""
    x, stride, padding, dilation, groups, unbatched = _conv_args(
        input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")
    if padding[0]:
        x = _pad(x, (0, 0, 0, 0, padding[0], padding[0]))
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    kd = weight.shape[2]
    out_d = (depth - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    out = None
    for t in range(kd):
        # the depth slices this tap reads, one 2-d image per (sample, output depth)
        start = t * dilation[0]
        planes = x[:, :, start:start + (out_d - 1) * stride[0] + 1:stride[0]]
        planes = planes.transpose(1, 2).reshape(n * out_d, c, x.shape[3], x.shape[4])
        r = conv2d(planes, weight[:, :, t], None, stride[1:], padding[1:], dilation[1:],
                   groups)
        out = r if out is None else out + r
    out = out.reshape(n, out_d, out.shape[1], out.shape[2], out.shape[3]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out
