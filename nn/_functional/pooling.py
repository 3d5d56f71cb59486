"""Pooling for ``ember.nn.functional``, in one place.

- 1-d and 2-d: the core's pooling functions (core/pooling.py) and the ``*_with_indices``
  spellings of PyTorch's functional module.
- 3-d: max_pool3d, avg_pool3d (PyTorch's argument rules and messages) as composites over the
  kernel taps' strided views of the padded input (fold.py's ``_taps``), and
  adaptive_avg/max_pool3d over the core's adaptive 2-d pools plus a reduction along the
  depth.  Autograd goes through the views, max, sum and gather.
- Power-average, unpooling and fractional max pooling (lp_pool*, max_unpool*,
  fractional_max_pool*), composed of the pools above, scatter and gather."""
from functools import partial

import numpy as np
from ember.core import _tensor as _T
from ember.core._errors import _int_tuple, _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.pooling import (
    _adaptive_input,
    _adaptive_size,
    _omitted,
    _output,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ember.nn._functional.fold import _taps
from ember.nn._functional.padding import pad as _pad
from ember.nn.modules.utils import _ntuple

import ember

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "max_pool3d",
    "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d"
]

max_pool1d_with_indices = partial(max_pool1d, return_indices=True)
max_pool2d_with_indices = partial(max_pool2d, return_indices=True)
adaptive_max_pool1d_with_indices = partial(adaptive_max_pool1d, return_indices=True)
adaptive_max_pool2d_with_indices = partial(adaptive_max_pool2d, return_indices=True)


# -- 3-d pooling -----------------------------------------------------------------------------

def _triple(value, name, op, rule):
    """An int or a 1- or 3-sequence of ints as a triple; else PyTorch's error, which states
    the ``rule``."""
    seq = _int_tuple(value, name)
    if len(seq) not in (1, 3):
        raise RuntimeError(f"{op}: {name} must {rule}")
    return seq * 3 if len(seq) == 1 else seq


def _window(op, kernel_size, stride, padding, dilation):
    """kernel, stride, padding, dilation as triples, checked as PyTorch does (max_pool3d's
    messages say 'must either be', avg_pool3d's 'must be')."""
    either = "either " if op == "max_pool3d" else ""
    one_or_three = "a single int, or a tuple of three ints"
    k = _triple(kernel_size, "kernel_size", op, f"{either}be {one_or_three}")
    s = k if _omitted(stride) else _triple(stride, "stride", op,
                                           f"{either}be omitted, {one_or_three}")
    p = _triple(padding, "padding", op, f"{either}be {one_or_three}")
    d = _triple(dilation, "dilation", op, f"be either {one_or_three}")
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} "
                           f"kH: {k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} "
                           f"dH: {s[1]} dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} "
                           f"dilationH: {d[1]} dilationW: {d[2]}")
    for i in range(3):
        if p[i] < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p[i]}")
        if 2 * p[i] > (k[i] - 1) * d[i] + 1:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p[i]}, kernel_size={k[i]} and dilation={d[i]}")
    return k, s, p, d


def _input(input, op):
    """The input as [N, C, D, H, W] and whether it was unbatched."""
    _tensor_arg(input, op, position=1)
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for i, v in enumerate(input.shape[input.dim() - 4:]):
        if v == 0:
            where = "max_pool3d_with_indices_out_cpu_template" if op == "max_pool3d" else op
            raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have "
                               f"positive length, but input has a shape of "
                               f"{list(input.shape)} and non-batch dimension {i} has length "
                               f"zero!")
    unbatched = input.dim() == 4
    return (input.unsqueeze(0) if unbatched else input), unbatched


_out_size = _T._window_count       # windows along one dim: the 2-d ops' rule

def _padded(x, k, s, p, d, out, value):
    """x padded by p on the left and on the right as far as the last window reaches."""
    amounts = []
    for i in reversed(range(3)):
        size = x.shape[2 + i]
        right = max((out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - size - p[i], 0)
        amounts += [p[i], right]
    return _pad(x, amounts, value=value) if any(amounts) else x


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over (dilated) windows of ``input`` [N, C, D, H, W] (or [C, D, H, W]),
    padded with -inf; ``return_indices`` also gives each maximum's flat position
    (d * H + h) * W + w in its volume."""
    x, unbatched = _input(input, "max_pool3d")
    k, s, p, d = _window("max_pool3d", kernel_size, stride, padding, dilation)
    size = x.shape[2:]
    out = [_out_size(size[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3)]
    if min(out) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). "
                           f"Calculated output size: ({x.shape[1]}x{'x'.join(map(str, out))})"
                           f". Output size is too small")
    windows = _taps(_padded(x, k, s, p, d, out, float("-inf")), k, d, s, out)
    values, tap = windows.max(2)
    values = _output(values, unbatched, 3)
    if not return_indices:
        return values
    # a window's NaN wins, the last one as in PyTorch's kernel (max(dim) gives the first)
    nan = windows.isnan()
    taps = windows.shape[2]
    last_nan = (taps - 1) - nan.flip(2).to(ember.uint8).argmax(2)
    tap = ember.where(nan.any(2), last_nan, tap)
    # each (tap, output position)'s flat input position, then the winning tap's
    dev = x.device
    pos = [(ember.arange(k[i], device=dev) * d[i]).reshape(-1, 1)
           + ember.arange(out[i], device=dev) * s[i] - p[i] for i in range(3)]
    flat = ((pos[0].reshape(k[0], 1, 1, out[0], 1, 1) * size[1]
             + pos[1].reshape(1, k[1], 1, 1, out[1], 1)) * size[2]
            + pos[2].reshape(1, 1, k[2], 1, 1, out[2]))
    flat = flat.reshape([k[0] * k[1] * k[2]] + out)
    inside = [(q >= 0) & (q < size[i]) for i, q in enumerate(pos)]
    inside = (inside[0].reshape(k[0], 1, 1, out[0], 1, 1)
              & inside[1].reshape(1, k[1], 1, 1, out[1], 1)
              & inside[2].reshape(1, 1, k[2], 1, 1, out[2])).reshape(flat.shape)
    picked = tap.unsqueeze(2)
    lead = list(tap.shape[:2])
    indices = flat.expand(lead + list(flat.shape)).gather(2, picked).squeeze(2)
    # a window whose maximum is padding (no tap inside the volume, or only -inf ones):
    # PyTorch's index, the first tap past the padding
    first = [(q[0] + ((-q[0]).clamp(min=0) + d[i] - 1) // d[i] * d[i]) for i, q in enumerate(pos)]
    first = ((first[0].reshape(-1, 1, 1) * size[1] + first[1].reshape(1, -1, 1)) * size[2]
             + first[2].reshape(1, 1, -1))
    ok = inside.expand(lead + list(inside.shape)).gather(2, picked).squeeze(2)
    indices = ember.where(ok, indices, first)
    return values, _output(indices, unbatched, 3)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """max_pool3d returning (values, indices)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _divisor(size, k, s, p, out, count_include_pad, dtype, device):
    """Each output position's window size: clipped to the padded input, or to the input
    when padding does not count; a product of one factor per dim."""
    div = None
    for i in range(3):
        factors = []
        for o in range(out[i]):
            start = o * s[i] - p[i]
            end = min(start + k[i], size[i] + p[i])
            if not count_include_pad:
                start, end = max(start, 0), min(end, size[i])
            factors.append(end - start)
        shape = [1, 1, 1]
        shape[i] = out[i]
        f = ember.tensor(factors, dtype=dtype, device=device).reshape(shape)
        div = f if div is None else div * f
    return div


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean over windows of ``input`` [N, C, D, H, W] (or [C, D, H, W]): the window sum
    over ``divisor_override`` if given, else over the window size clipped to the padded input
    (``count_include_pad``) or to the input."""
    x, unbatched = _input(input, "avg_pool3d")
    k, s, p, _ = _window("avg_pool3d", kernel_size, stride, padding, 1)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    size = x.shape[2:]
    out = [_out_size(size[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(3)]
    if min(out) <= 0 or any(size[i] < k[i] for i in range(3)):    # padding aside
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller "
                           f"than kernel size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    sums = _taps(_padded(x, k, s, p, (1, 1, 1), out, 0.0), k, (1, 1, 1), s, out).sum(2)
    if divisor_override is not None:
        r = sums / int(divisor_override)
    else:
        r = sums / _divisor(size, k, s, p, out, count_include_pad, x.dtype, x.device)
    return _output(r, unbatched, 3)


def _depth_windows(depth, out):
    """Adaptive windows along one dim: [floor(i D / out), ceil((i + 1) D / out))."""
    return [(i * depth // out, -(-(i + 1) * depth // out)) for i in range(out)]


def adaptive_avg_pool3d(input, output_size):
    """The mean over an ``output_size`` grid of adaptive windows of ``input``
    [N, C, D, H, W] (or [C, D, H, W]); an int means a cube, a None entry keeps that size."""
    op = "adaptive_avg_pool3d"
    x, unbatched = _adaptive_input(input, op, 3)
    od, oh, ow = _adaptive_size(output_size, input, 3, op)
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    # a box mean is the mean over depth of the in-plane means
    planes = adaptive_avg_pool2d(x.reshape(n, c * depth, x.shape[3], x.shape[4]), (oh, ow))
    planes = planes.reshape(n, c, depth, oh, ow)
    r = ember.stack([planes[:, :, a:b].mean(2) for a, b in _depth_windows(depth, od)], 2)
    return _output(r, unbatched, 3)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The maximum over an ``output_size`` grid of adaptive windows of ``input``
    [N, C, D, H, W] (or [C, D, H, W]); ``return_indices`` also gives flat positions
    (d * H + h) * W + w."""
    op = "adaptive_max_pool3d"
    if isinstance(input, TensorBase) and input.dim() not in (4, 5):  # PyTorch's wording
        raise RuntimeError(f"{op}(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    x, unbatched = _adaptive_input(input, op, 3)
    od, oh, ow = _adaptive_size(output_size, input, 3, op)
    n, c, depth, h, w = x.shape
    planes, where = adaptive_max_pool2d(x.reshape(n, c * depth, h, w), (oh, ow), True)
    planes, where = planes.reshape(n, c, depth, oh, ow), where.reshape(n, c, depth, oh, ow)
    values, indices = [], []
    for a, b in _depth_windows(depth, od):
        # the first maximum in (d, h, w) order: the first plane holding the box maximum;
        # a NaN wins, the last one as in PyTorch's kernel: the last plane holding one
        v, t = planes[:, :, a:b].max(2)
        nan = planes[:, :, a:b].isnan()
        t = ember.where(nan.any(2), (b - a - 1) - nan.flip(2).to(ember.uint8).argmax(2), t)
        values.append(v)
        indices.append((t + a) * (h * w) + where[:, :, a:b].gather(2, t.unsqueeze(2))
                       .squeeze(2))
    r = _output(ember.stack(values, 2), unbatched, 3)
    return (r, _output(ember.stack(indices, 2), unbatched, 3)) if return_indices else r


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """adaptive_max_pool3d returning (values, indices)."""
    return adaptive_max_pool3d(input, output_size, True)


# -- power-average pooling --------------------------------------------------------------------

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    kernel = _ntuple(nd)(kernel_size)
    if stride is None:
        stride = kernel
    out = avg(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    area = 1
    for k in kernel:
        area *= k
    # (sum of |x|^p over the window)^(1/p); the sign/relu keeps the root of the mean's sign
    return (out.sign() * _T.relu(out.abs())).mul(area).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p) over (N, C, L) inputs; p = ``norm_type``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p) over (N, C, H, W) inputs."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p) over (N, C, D, H, W) inputs."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# -- unpooling --------------------------------------------------------------------------------

def _unpool_size(input, kernel, stride, padding, output_size, nd):
    spatial = input.shape[input.dim() - nd:]
    default = [(spatial[d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f"between {low} and {high})")
    return output_size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    op = f"max_unpool{nd}d"
    _tensor_arg(input, op, position=1)
    _tensor_arg(indices, op, "indices", position=2)
    kernel = _ntuple(nd)(kernel_size)
    stride = _ntuple(nd)(stride if stride is not None else kernel_size)
    padding = _ntuple(nd)(padding)
    size = _unpool_size(input, kernel, stride, padding, output_size, nd)
    if indices.dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype.name.capitalize()}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    lead = tuple(input.shape[:input.dim() - nd])
    plane = 1
    for s in size:
        plane *= s
    flat_in = input.reshape(lead + (-1,))
    flat_idx = indices.reshape(lead + (-1,))
    if flat_idx.numel():
        lo, hi = int(flat_idx.min()), int(flat_idx.max())
        if lo < 0 or hi >= plane:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of "
                               f"size {'x'.join(str(s) for s in size)})")
    out = _T.zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    return out.scatter(-1, flat_idx, flat_in).reshape(lead + tuple(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: each value of ``input`` at the position its
    ``indices`` entry names, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d (indices flat over each H x W output plane)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (indices flat over each D x H x W output volume)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


# -- fractional max pooling ---------------------------------------------------------------------

def _intervals(sample, size, out, pool, ftype):
    """Window starts along one dim (Graham, "Fractional Max-Pooling"): pseudo-random steps
    of floor or ceil of (size - pool) / (out - 1), the last window flush with the end.
    Computed in the samples' float type, as PyTorch's kernel does."""
    starts = np.empty(out, dtype=np.int64)
    if out > 1:
        alpha = ftype(size - pool) / ftype(out - 1)
        i = np.arange(out - 1, dtype=ftype)
        starts[:-1] = ((i + sample) * alpha).astype(np.int64) - np.int64(ftype(sample * alpha))
    starts[-1] = size - pool
    return starts


def _fractional(input, kernel_size, output_size, output_ratio, return_indices,
                _random_samples, nd):
    op = f"fractional_max_pool{nd}d"
    _tensor_arg(input, op, position=1)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    spatial = tuple(x.shape[2:])
    kernel = _ntuple(nd)(kernel_size)
    if output_size is None:
        ratio = _ntuple(nd)(output_ratio)
        output_size = tuple(int(spatial[d] * ratio[d]) for d in range(nd))
    out = _ntuple(nd)(output_size)
    names = ("time", "height", "width")[3 - nd:]
    for d in range(nd):
        if out[d] + kernel[d] - 1 > spatial[d]:
            raise RuntimeError(f"{op}(): pool {names[d]} {kernel[d]} too large relative to "
                               f"input {names[d]} {spatial[d]}")
    if _random_samples is None:
        _random_samples = _T.rand(n, c, nd, dtype=x.dtype, device=x.device)
    if tuple(_random_samples.shape[:2]) != (n, c) or _random_samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to be a 3D tensor of shape ({n}, {c}, "
                           f"{nd}); got {list(_random_samples.shape)}")
    if _random_samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{_random_samples.shape[2]}.")
    ftype = np.float64 if _random_samples.dtype.name == "float64" else np.float32
    samples = np.asarray(_random_samples.detach().float().cpu().numpy(), dtype=ftype)
    # PyTorch's samples are ordered (w, h) in 2-d and (t, h, w) in 3-d
    order = (1, 0) if nd == 2 else (0, 1, 2)
    strides = [int(np.prod(spatial[d + 1:])) for d in range(nd)]
    taps = np.stack(np.meshgrid(*[np.arange(k) for k in kernel], indexing="ij"), -1)
    taps = (taps.reshape(-1, nd) * strides).sum(-1)                       # (K,)
    flat = np.empty((n, c) + out + (taps.size,), dtype=np.int64)
    for b in range(n):
        for p in range(c):
            starts = [_intervals(samples[b, p, order[d]], spatial[d], out[d], kernel[d], ftype)
                      for d in range(nd)]
            grid = np.meshgrid(*starts, indexing="ij")
            base = sum(g * s for g, s in zip(grid, strides))
            flat[b, p] = base[..., None] + taps
    index = _T.tensor(flat.reshape(n, c, -1), device=x.device)
    windows = x.reshape(n, c, -1).gather(2, index).reshape((n, c) + out + (taps.size,))
    values, which = windows.max(-1)
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    indices = index.reshape((n, c) + out + (taps.size,)).gather(-1, which.unsqueeze(-1))
    indices = indices.squeeze(-1)
    return values, (indices.squeeze(0) if unbatched else indices)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over pseudo-randomly placed kernel_size windows whose starts step by a
    fractional stride, giving ``output_size`` (or ``output_ratio`` of the input size)."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """fractional_max_pool2d over (N, C, T, H, W) inputs."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples, 3)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """fractional_max_pool2d returning (values, indices)."""
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """fractional_max_pool3d returning (values, indices)."""
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 3)
