"""Convolutions for ``ember.nn.functional``: the core's conv1d/conv2d (core/conv.py), and as
composites over them conv3d and the transposed convolutions.

conv3d applies PyTorch's argument rules (core/conv.py's helpers: int/tuple/'valid'/'same'
padding, unbatched inputs, channel, group and dtype checks) over the core's 2-d convolution:
each depth tap of the kernel is a conv2d over the (strided) depth slices it reads, folded into
the batch, and the taps' outputs add up.

conv_transpose1d/2d/3d are the adjoint (gradient with respect to the input) of a convolution,
as PyTorch's, computed as an ordinary convolution: the input with stride - 1 zeros inserted
between its elements, padded by dilation * (kernel - 1) - padding (cropped where negative,
plus output_padding on the right), correlated with the kernel flipped and its in/out channels
swapped within each group.  Autograd goes through the convolutions."""
from ember.core._errors import _tensor_arg
from ember.core.conv import _check, _conv_args, _expand, _steps, conv1d, conv2d
from ember.nn._functional.padding import pad as _pad

import ember

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]


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


_CONV = {1: conv1d, 2: conv2d, 3: conv3d}
_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _dilate(x, stride):
    """``x`` with stride[i] - 1 zeros between neighbours along spatial dim i."""
    for i, s in enumerate(stride):
        d = 2 + i
        size = x.shape[d]
        if s == 1 or size == 0:
            continue
        shape = list(x.shape)
        shape.insert(d + 1, s - 1)
        zeros = ember.zeros(shape, dtype=x.dtype, device=x.device)
        spread = ember.cat([x.unsqueeze(d + 1), zeros], d + 1)
        merged = list(x.shape)
        merged[d] = size * s
        x = spread.reshape(merged).narrow(d, 0, (size - 1) * s + 1)
    return x


def _check_transposed(x, weight, bias, groups, nd):
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"[{list(weight.shape)}] instead")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {weight.shape[0]} channels, "
                           f"but got {x.shape[1]} channels instead")
    cout = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected bias to be 1-dimensional with {cout} elements, but got "
                           f"bias of size {list(bias.shape)} instead")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nd):
    name = f"conv_transpose{nd}d"
    x = _tensor_arg(input, name, "input")
    weight = _tensor_arg(weight, name, "weight")
    if bias is not None:
        _tensor_arg(bias, name, "bias")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    groups = int(groups)
    _check(x, weight, bias, groups, nd, name)
    stride, dilation = _steps(stride, dilation, nd)
    padding = _expand(padding, nd, "padding")
    output_padding = _expand(output_padding, nd, "output_padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        # PyTorch names the 1-d case's dims as a 2-d one's (height 0/1/1)
        axes = _AXES[max(nd, 2)]
        lead = {"output_padding": 0, "stride": 1, "dilation": 1} if nd == 1 else None
        parts = []
        for arg, values in (("output_padding", output_padding), ("stride", stride),
                            ("dilation", dilation)):
            vals = ((lead[arg],) if lead else ()) + values
            parts += [f"{arg}_{a}: {v}" for a, v in zip(axes, vals)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    unbatched = x.dim() == nd + 1
    if unbatched:
        x = x.unsqueeze(0)
    _check_transposed(x, weight, bias, groups, nd)
    spatial = x.shape[2:]
    kernel = weight.shape[2:]
    out = [(spatial[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1)
           + output_padding[i] + 1 for i in range(nd)]
    if any(o < 0 for o in out) or (0 in out and not _onednn_path(x, weight, groups)):
        sizes = ([1] if nd == 1 else []) + list(spatial)
        outs = ([1] if nd == 1 else []) + out
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sizes))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, outs))}). Output size is too small")
    x = _dilate(x, stride)
    amounts = []
    for i in reversed(range(nd)):  # F.pad lists the last dim first
        left = dilation[i] * (kernel[i] - 1) - padding[i]
        # an empty output dim is computed one long and cut (the convolution wants one)
        amounts += [left, left + output_padding[i] + (out[i] == 0)]
    if any(amounts):
        x = _pad(x, amounts)
    cin, cout_g = weight.shape[0], weight.shape[1]
    w = weight.reshape((groups, cin // groups, cout_g) + tuple(kernel)).transpose(1, 2)
    w = w.reshape((groups * cout_g, cin // groups) + tuple(kernel))
    w = w.flip(list(range(2, 2 + nd)))
    r = _CONV[nd](x, w, bias, 1, 0, dilation, groups)
    if 0 in out:
        r = r[(slice(None),) * 2 + tuple(slice(0, o) for o in out)]
    return r.squeeze(0) if unbatched else r


def _onednn_path(x, weight, groups):
    """Whether PyTorch's CPU would run this transposed convolution through oneDNN, the only
    path of its that returns an empty tensor for an output dim of size 0 (the others call
    that output too small): float32, and grouped, batched, a kernel over 3 x 3 or an input
    over 20480 elements."""
    kernel = weight.shape[2:]
    return x.dtype == ember.float32 and (groups > 1 or x.shape[0] > 1 or x.numel() > 20480 or
                                      (len(kernel) > 1 and min(kernel[-2:]) > 3))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Transposed 1-d convolution of ``input`` [N, Cin, L] (or [Cin, L]) with ``weight``
    [Cin, Cout / groups, k]: output length (L - 1) * stride - 2 * padding + dilation *
    (k - 1) + output_padding + 1."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Transposed 2-d convolution ("deconvolution") of ``input`` [N, Cin, H, W] (or
    [Cin, H, W]) with ``weight`` [Cin, Cout / groups, kH, kW]; ``output_padding`` (smaller
    than stride or dilation) adds rows/columns on one side to pick among the output sizes
    that a strided convolution maps to the same input size."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Transposed 3-d convolution of ``input`` [N, Cin, D, H, W] (or [Cin, D, H, W]) with
    ``weight`` [Cin, Cout / groups, kD, kH, kW]."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)
