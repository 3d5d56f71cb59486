"""unfold (im2col) and fold (col2im): sliding blocks of a [N, C, H, W] input as columns, and
columns summed back into an image.  Composites of strided views, stack and index_add, so
autograd differentiates them (fold's gradient is an unfold, and the reverse)."""
import itertools

from ember.core._errors import _int_tuple, _tensor_arg
from ember.nn._functional.padding import pad

import ember

__all__ = ["fold", "unfold"]


def _taps(x, kernel, dilation, stride, out):
    """Each tap of a (dilated) kernel sliding over the last len(kernel) dims of ``x``: the
    strided view of the input elements that tap reads, stacked before those dims, so
    x [*, S1, ..., Sn] -> [*, k1 * ... * kn, O1, ..., On] (taps in row-major order)."""
    nd = len(kernel)
    lead = [slice(None)] * (x.dim() - nd)
    views = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        window = [slice(t * d, t * d + (o - 1) * s + 1, s)
                  for t, d, s, o in zip(tap, dilation, stride, out)]
        views.append(x[tuple(lead + window)])
    return ember.stack(views, x.dim() - nd)


def _pair_arg(value, name):
    seq = _int_tuple(value, name)
    seq = seq * 2 if len(seq) == 1 else seq
    if len(seq) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(seq)}")
    return seq


def _block_args(kernel_size, dilation, padding, stride):
    k, d = _pair_arg(kernel_size, "kernel_size"), _pair_arg(dilation, "dilation")
    p, s = _pair_arg(padding, "padding"), _pair_arg(stride, "stride")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    return k, d, p, s


def _blocks(size, k, d, p, s):
    """How many blocks fit along each of the two dims."""
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of ``input`` [N, C, H, W] (or unbatched [C, H, W]) as columns:
    [N, C * kH * kW, L], L the number of blocks; each column lists a block's elements channel
    by channel, in row-major order within the kernel."""
    x = _tensor_arg(input, "unfold", position=1)
    k, d, p, s = _block_args(kernel_size, dilation, padding, stride)
    if x.dim() not in (3, 4) or any(v == 0 for v in x.shape[x.dim() - 3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(x.shape)}")
    unbatched = x.dim() == 3
    if unbatched:
        x = x.unsqueeze(0)
    out = _blocks(x.shape[2:], k, d, p, s)
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), "
                           f"kernel_size={k}, dilation={d}, padding={p}, calculated shape of "
                           f"the array of sliding blocks as {out}, but its components must be "
                           f"at least one.")
    if p != (0, 0):
        x = pad(x, (p[1], p[1], p[0], p[0]))
    cols = _taps(x, k, d, s, out).reshape(x.shape[0], x.shape[1] * k[0] * k[1],
                                          out[0] * out[1])
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of ``unfold``: columns [N, C * kH * kW, L] (or [C * kH * kW, L]) summed
    into an image [N, C, *output_size], overlapping block elements adding up."""
    cols = _tensor_arg(input, "fold", position=1)
    size = _pair_arg(output_size, "output_size")
    k, d, p, s = _block_args(kernel_size, dilation, padding, stride)
    if cols.dim() not in (2, 3) or any(v == 0 for v in cols.shape[cols.dim() - 2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(cols.shape)}")
    unbatched = cols.dim() == 2
    if unbatched:
        cols = cols.unsqueeze(0)
    taps = k[0] * k[1]
    if cols.shape[1] % taps:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={cols.shape[1]} "
                           f"and kernel_size={k}.")
    out = _blocks(size, k, d, p, s)
    if out[0] < 1 or out[1] < 1 or cols.shape[2] != out[0] * out[1]:
        blocks = tuple(max(v, 0) for v in out)
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 "
                           f"to match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)="
                           f"{cols.shape[2]}.")
    n, c = cols.shape[0], cols.shape[1] // taps
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    # flat position in the padded plane of each (tap row, tap col, block row, block col)
    dev = cols.device
    rows = (ember.arange(k[0], device=dev) * d[0]).reshape(-1, 1) + \
        ember.arange(out[0], device=dev) * s[0]
    cols_ = (ember.arange(k[1], device=dev) * d[1]).reshape(-1, 1) + \
        ember.arange(out[1], device=dev) * s[1]
    index = (rows.reshape(k[0], 1, out[0], 1) * wp + cols_.reshape(1, k[1], 1, out[1]))
    plane = ember.zeros((n, c, hp * wp), dtype=cols.dtype, device=dev)
    img = plane.index_add(2, index.reshape(-1), cols.reshape(n, c, taps * out[0] * out[1]))
    img = img.reshape(n, c, hp, wp)[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]
    return img.squeeze(0) if unbatched else img
