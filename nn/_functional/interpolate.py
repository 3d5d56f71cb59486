"""interpolate (PyTorch's upsample family): nearest, nearest-exact, (bi/tri)linear and
bicubic resampling applied one spatial dim at a time (each is separable: PyTorch's weights
are products of per-dim weights), plus 'area' through adaptive average pooling.  Each dim
is an index_select of the source rows a destination row reads, weighted and summed, so
autograd scatters gradients back.  Source positions follow PyTorch's kernels: float32
arithmetic for the nearest modes' scales (so rounding picks the same rows), the input's
precision otherwise."""
import math
import struct

from ember.core._errors import _tensor_arg
from ember.core.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from ember.nn._functional.pooling import adaptive_avg_pool3d

import ember

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

_MODES_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_AXES = ("D", "H", "W")
_CUBIC_A = -0.75  # PyTorch's bicubic convolution coefficient


def _f32(v):
    """``v`` rounded to the nearest float32 (the nearest modes compute in float)."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _nearest_rows(in_size, out_size, scale, exact):
    """Source row of each destination row (PyTorch's nearest_idx / nearest_exact_idx)."""
    if not exact and out_size == in_size:
        return list(range(out_size))
    if not exact and out_size == 2 * in_size:
        return [o >> 1 for o in range(out_size)]
    s = _f32(1.0 / scale) if scale is not None and scale > 0 else _f32(_f32(in_size) / out_size)
    offset = 0.5 if exact else 0.0
    return [min(int(math.floor(_f32((o + offset) * s))), in_size - 1) for o in range(out_size)]


def _source_scale(in_size, out_size, align_corners, scale):
    """PyTorch's area_pixel_compute_scale."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _source_pos(o, s, align_corners, cubic):
    """PyTorch's area_pixel_compute_source_index."""
    if align_corners:
        return s * o
    src = s * (o + 0.5) - 0.5
    return src if cubic or src >= 0 else 0.0


def _cubic_weights(t):
    """The 4 cubic-convolution weights of the taps at offsets -1, 0, 1, 2 from floor(src)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resample(x, dim, out_size, mode, align_corners, scale):
    """``x`` resampled to ``out_size`` along ``dim``."""
    in_size = x.shape[dim]
    dev = x.device
    if mode in ("nearest", "nearest-exact"):
        rows = _nearest_rows(in_size, out_size, scale, mode == "nearest-exact")
        return x.index_select(dim, ember.tensor(rows, dtype=ember.int64, device=dev))
    s = _source_scale(in_size, out_size, align_corners, scale)
    cubic = mode == "bicubic"
    n = 4 if cubic else 2
    taps, weights = [[] for _ in range(n)], [[] for _ in range(n)]
    for o in range(out_size):
        src = _source_pos(o, s, align_corners, cubic)
        if cubic:
            i0 = math.floor(src)
            for j, w in enumerate(_cubic_weights(src - i0)):
                taps[j].append(min(max(i0 - 1 + j, 0), in_size - 1))
                weights[j].append(w)
        else:
            i0 = min(int(src), in_size - 1)
            lam = src - i0
            taps[0].append(i0)
            taps[1].append(i0 + 1 if i0 < in_size - 1 else i0)
            weights[0].append(1.0 - lam)
            weights[1].append(lam)
    shape = [1] * x.dim()
    shape[dim] = out_size
    out = None
    for rows, w in zip(taps, weights):
        part = x.index_select(dim, ember.tensor(rows, dtype=ember.int64, device=dev))
        part = part * ember.tensor(w, dtype=x.dtype, device=dev).reshape(shape)
        out = part if out is None else out + part
    return out


def _sizes(input, size, scale_factor, recompute_scale_factor, nd):
    """(output sizes, scales handed to the kernels: None where sizes were given)."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. Please "
                                 f"provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 f"output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(v, int) for v in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, "
                                f"int] or Tuple[int, int, int], but got size with types "
                                f"{[type(v) for v in size]}")
            return list(size), [None] * nd
        return [int(size)] * nd, [None] * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                             f"...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(v) for v in scale_factor]
    else:
        scales = [float(scale_factor)] * nd
    out = [int(math.floor(input.shape[2 + i] * scales[i])) for i in range(nd)]
    return out, ([None] * nd if recompute_scale_factor else scales)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample ``input`` [N, C, *spatial] (1 to 3 spatial dims) to ``size`` or by
    ``scale_factor``.  mode: 'nearest', 'nearest-exact', 'linear' (3-D input), 'bilinear' or
    'bicubic' (4-D), 'trilinear' (5-D), 'area'.  ``align_corners`` (interpolating modes)
    maps the corner pixels' centres onto each other; ``recompute_scale_factor`` computes the
    sampling scale from the output size instead of using ``scale_factor``."""
    _tensor_arg(input, "interpolate", position=1)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    else:
        align_corners = bool(align_corners)
    nd = input.dim() - 2
    valid = mode in ("nearest", "nearest-exact", "area") or mode in _MODES_DIMS
    if nd not in (1, 2, 3) or not valid:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, nd)
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and "
                             "lanczos modes and requires a 4-D tensor as input")
        raise NotImplementedError("interpolate: antialias=True is not implemented in ember")
    if mode in _MODES_DIMS and _MODES_DIMS[mode] != nd:
        need = _MODES_DIMS[mode] + 2
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D "
                                  f"input")
    if min(input.shape[2:]) <= 0 or min(out) <= 0:
        axes = _AXES[3 - nd:]
        ins = ", ".join(f"{a}: {v}" for a, v in zip(axes, input.shape[2:]))
        outs = ", ".join(f"{a}: {v}" for a, v in zip(axes, out))
        sep = " and" if nd == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({ins}){sep} output ({outs})")
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1]
        return pool(input, out)
    x = input
    for i in range(nd):
        if mode in ("nearest", "nearest-exact") or out[i] != x.shape[2 + i] or \
                scales[i] is not None:
            x = _resample(x, 2 + i, out[i], mode, align_corners, scales[i])
    return x if x is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated spelling of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
