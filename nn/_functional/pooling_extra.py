"""Power-average, unpooling and fractional max pooling (torch.nn.functional's lp_pool*,
max_unpool*, fractional_max_pool*), composed of the core's pooling, scatter and gather."""
import numpy as np
from ember.core import _tensor as _T
from ember.core._errors import _tensor_arg
from ember.nn._functional import pooling as _pool
from ember.nn._functional import pooling3d as _pool3d
from ember.nn.modules.utils import _ntuple

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]


# -- power-average pooling --------------------------------------------------------------------

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    avg = (_pool.avg_pool1d, _pool.avg_pool2d, _pool3d.avg_pool3d)[nd - 1]
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
