"""conv3d: PyTorch's argument rules (core/conv.py's helpers: int/tuple/'valid'/'same'
padding, unbatched inputs, channel, group and dtype checks) over the core's 2-d convolution:
each depth tap of the kernel is a conv2d over the (strided) depth slices it reads, folded
into the batch, and the taps' outputs add up.  Autograd goes through conv2d."""
from ember.core.conv import _conv_args, conv2d
from ember.nn._functional.padding import pad as _pad

__all__ = ["conv3d"]


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation of ``input`` [N, C, D, H, W] (or unbatched [C, D, H, W]) with
    ``weight`` [Cout, C / groups, kD, kH, kW], plus ``bias`` [Cout]; ``stride``, ``padding``
    and ``dilation`` are ints or triples; ``padding`` may also be 'valid' or 'same'."""
    x, weight, stride, padding, dilation, groups, unbatched = _conv_args(
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
    if bias is not None:           # in the taps' dtype: under autocast, not bias's float32
        out = out + bias.reshape(1, -1, 1, 1, 1).to(out.dtype)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out
