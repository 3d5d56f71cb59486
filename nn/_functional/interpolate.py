"""interpolate (PyTorch's upsample family): nearest, nearest-exact, (bi/tri)linear and
bicubic resampling applied one spatial dim at a time (each is separable: PyTorch's weights
are products of per-dim weights), plus 'area' through adaptive average pooling.  Each dim
is an index_select of the source rows a destination row reads, weighted and summed, so
autograd scatters gradients back.  Source positions follow PyTorch's kernels: float32
arithmetic for the nearest modes' scales (so rounding picks the same rows), the input's
precision otherwise."""
import math
import struct

import numpy as np
from ember.core._errors import _int_like, _scalar_name, _tensor_arg, _type_name
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


def _nearest_rows(in_size, out_size, scale, exact, shortcuts):
    """Source row of each destination row (PyTorch's nearest_idx / nearest_exact_idx).
    ``shortcuts``: PyTorch's 2-d nearest kernel copies a dim whose size is kept and halves
    indices of a doubled one whatever the scale; its 1-d and 3-d kernels always use the
    scale (so scale_factor=1.1 on 7 rows reads rows 0, 0, 1, ..., 5 there)."""
    if shortcuts and not exact and out_size == in_size:
        return list(range(out_size))
    if shortcuts and not exact and out_size == 2 * in_size:
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


def _cubic_near_far(a=_CUBIC_A):
    """PyTorch's cubic convolution polynomials for |x| <= 1 and 1 < |x| < 2."""

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return near, far


def _cubic_weights(t):
    """The 4 cubic-convolution weights of the taps at offsets -1, 0, 1, 2 from floor(src)."""
    near, far = _cubic_near_far()
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resample(x, dim, out_size, mode, align_corners, scale):
    """``x`` resampled to ``out_size`` along ``dim``."""
    in_size = x.shape[dim]
    dev = x.device
    if mode in ("nearest", "nearest-exact"):
        rows = _nearest_rows(in_size, out_size, scale, mode == "nearest-exact", x.dim() == 4)
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
            sizes = [_int_like(v) for v in size]      # NumPy and tensor integers too
            if None in sizes:
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, "
                                f"int] or Tuple[int, int, int], but got size with types "
                                f"{[type(v) for v in size]}")
            return sizes, [None] * nd
        single = _int_like(size)
        if single is None:
            raise TypeError(f"interpolate(): argument 'size' must be int or tuple of ints, not "
                            f"{_type_name(size)}")
        return [single] * nd, [None] * nd
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
    'bicubic' (4-D), 'trilinear' (5-D), 'area', 'lanczos' (4-D, antialiased only).
    ``align_corners`` (interpolating modes) maps the corner pixels' centres onto each other;
    ``recompute_scale_factor`` computes the sampling scale from the output size instead of
    using ``scale_factor``; ``antialias`` (bilinear, bicubic, lanczos) widens the filter by
    the downscale factor, so that downsampling averages every input pixel."""
    _tensor_arg(input, "interpolate", position=1)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    else:
        align_corners = bool(align_corners)
    nd = input.dim() - 2
    valid = mode in ("nearest", "nearest-exact", "area") or mode in _MODES_DIMS or \
        (mode == "lanczos" and (nd == 2 or antialias))
    if nd not in (1, 2, 3) or not valid:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, nd)
    if antialias and not (mode in _AA_TAPS and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and "
                         "lanczos modes and requires a 4-D tensor as input")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
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
    if antialias:
        return _antialiased(input, out, mode, align_corners, scales)
    _check_dtype(input, mode, nd)
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1]
        return pool(input, out)
    if input.dtype == ember.uint8 and mode in ("bilinear", "bicubic"):
        return _resample_uint8(input, out, mode, align_corners, scales)
    x = input
    for i in range(nd):
        # PyTorch's linear kernels copy a dim whose size is kept, whatever the scale; the
        # bicubic and nearest ones map coordinates with the given scale_factor
        kept = out[i] == x.shape[2 + i]
        if mode in ("nearest", "nearest-exact") or not kept or \
                (scales[i] is not None and mode == "bicubic"):
            x = _resample(x, 2 + i, out[i], mode, align_corners, scales[i])
    return x if x is not input else input.clone()


# the kernel PyTorch names in its "not implemented for" error, per mode and spatial dims
_KERNELS = {("nearest", 2): "upsample_nearest2d_channels_last",
            ("nearest-exact", 2): "upsample_nearest2d_channels_last",
            ("linear", 1): "compute_indices_weights_linear",
            ("trilinear", 3): "compute_indices_weights_linear",
            ("bilinear", 2): "upsample_bilinear2d_channels_last",
            ("bicubic", 2): "compute_indices_weights_cubic",
            ("area", 1): "adaptive_avg_pool2d", ("area", 2): "adaptive_avg_pool2d",
            ("area", 3): "adaptive_avg_pool3d_cpu"}


def _check_dtype(input, mode, nd):
    """PyTorch's CPU kernels take floating inputs, and uint8 ones for the nearest modes,
    bilinear and bicubic (not linear, trilinear, area)."""
    if input.is_floating_point() or input.is_complex():
        return
    if input.dtype == ember.uint8 and mode not in ("linear", "trilinear", "area"):
        return
    kernel = _KERNELS.get((mode, nd), "compute_indices_weights_nearest")
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(input)}\'')


def _filter(mode):
    """PyTorch's aa_filter of the mode (the cubic with a = -0.75 when not antialiasing)."""
    if mode == "bilinear":
        return lambda x: max(1.0 - abs(x), 0.0)
    near, far = _cubic_near_far()
    return lambda x: near(abs(x)) if abs(x) < 1.0 else (far(abs(x)) if abs(x) < 2.0 else 0.0)


def _int16_weights(in_size, out_size, mode, align_corners, scale, antialias):
    """(first tap, integer tap weights) per output row and their precision: PyTorch's
    _compute_index_ranges_int16_weights, which its uint8 kernels use.  The float path's
    taps and weights (without antialias, those of taps past an edge added onto the edge's
    tap), then scaled by 2**precision (the largest that keeps 2 * max weight < 2**15)."""
    if antialias:       # the antialiasing weights, in double
        first, count, w = _aa_weights(in_size, out_size, mode, align_corners, scale,
                                      np.float64)
        rows = [(int(f), w[o, :c].tolist()) for o, (f, c) in enumerate(zip(first, count))]
        return _int16_scaled(rows, float(w.max()))
    filt = _filter(mode)
    taps = 4 if mode == "bicubic" else 2
    support = taps // 2
    s = _source_scale(in_size, out_size, align_corners, scale)
    rows, w_max = [], 0.0
    for o in range(out_size):
        src = _source_pos(o, s, align_corners, taps == 4)
        i0 = min(math.floor(_f32(src)), in_size - 1)          # guard_index_and_lambda: floorf
        lam = min(max(src - i0, 0.0), 1.0)
        lo = i0 - support + 1
        first = max(lo, 0)
        size = min(max(min(i0 + support + 1, in_size) - first, 0), taps)
        w, k = [0.0] * taps, 0
        for j in range(taps):
            if lo + j <= 0:
                k = 0
            elif lo + j >= in_size - 1:
                k = size - 1
            w[k] += filt(j + 1 - support - lam)
            w_max = max(w_max, w[k])
            k += 1
        rows.append((first, w[:size]))
    return _int16_scaled(rows, w_max)


def _int16_scaled(rows, w_max):
    precision = 0
    while precision < 22 and int(0.5 + w_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = []
    for first, w in rows:       # C's int(): truncation, after rounding half away from 0
        scaled.append((first, [int(v * (1 << precision) + (0.5 if v >= 0 else -0.5))
                               for v in w]))
    return scaled, precision


def _resample_uint8(x, out, mode, align_corners, scales, antialias=False):
    """uint8 bilinear/bicubic as PyTorch computes it: integer weights, the width pass then
    the height pass, each rounded and saturated to uint8; a dim of kept size is copied."""
    input = x
    for dim in (3, 2):
        in_size, out_size = x.shape[dim], out[dim - 2]
        if in_size == out_size:
            continue
        rows, precision = _int16_weights(in_size, out_size, mode, align_corners,
                                         scales[dim - 2], antialias)
        taps = max(len(w) for _, w in rows)
        acc = ember.full((), 1 << (precision - 1), dtype=ember.int64, device=x.device)
        wide = x.to(ember.int64)
        shape = [1] * 4
        shape[dim] = out_size
        for j in range(taps):
            idx = [min(xmin + j, in_size - 1) for xmin, _ in rows]
            w = [w[j] if j < len(w) else 0 for _, w in rows]
            part = wide.index_select(dim, ember.tensor(idx, dtype=ember.int64,
                                                         device=x.device))
            acc = acc + part * ember.tensor(w, dtype=ember.int64, device=x.device).reshape(shape)
        x = (acc >> precision).clamp(0, 255).to(ember.uint8)        # >>: floor, as srai
    return x if x is not input else input.clone()


# -- antialias=True: PyTorch's separable _upsample_{bilinear,bicubic}2d_aa ---------------------

_AA_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}     # the filters' widths at scale 1


def _aa_filter(mode, x):
    """The antialiasing filter at (a NumPy array of) offsets ``x``: the triangle, the cubic
    convolution with a = -0.5 (PIL's, not the -0.75 of antialias=False), or Lanczos-3."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1 - x, 0).astype(x.dtype)
    if mode == "lanczos":
        return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0).astype(x.dtype)
    near, far = _cubic_near_far(-0.5)
    return np.where(x < 1, near(x), np.where(x < 2, far(x), 0)).astype(x.dtype)


def _aa_weights(in_size, out_size, mode, align_corners, scale, ft):
    """(first tap, taps, weights [out_size, taps]) of each output row: the filter stretched by
    the downscale factor (so each output averages every input it covers), centred on the
    output's position, cut to the input and normalised to sum 1.  Arithmetic as PyTorch's
    _compute_weights_aa, in ``ft`` (float32 for float inputs) where it uses its opmath."""
    interp = _AA_TAPS[mode]
    s = ft(_source_scale(in_size, out_size, align_corners, scale))
    support = ft(interp * 0.5 * s) if s >= 1 else ft(interp * 0.5)
    taps = int(math.ceil(support)) * 2 + 1
    invscale = ft(1.0 / np.float64(s)) if s >= 1 else ft(1.0)
    center = (np.float64(s) * (np.arange(out_size) + 0.5)).astype(ft)
    # C's truncation of (center -/+ support) + 0.5, that sum in double
    first = np.maximum(np.trunc((center - support).astype(np.float64) + 0.5), 0).astype(np.int64)
    last = np.minimum(np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64),
                      in_size)
    count = np.clip(last - first, 0, taps)
    j = np.arange(taps)
    offset = ((j + first[:, None]).astype(ft) - center[:, None]) + 0.5
    w = _aa_filter(mode, (offset * np.float64(invscale)).astype(ft))
    w = np.where(j < count[:, None], w, ft(0))
    total = np.cumsum(w, axis=1, dtype=ft)[:, -1:]          # summed in order, as the kernel
    w = np.where(total != 0, w / np.where(total != 0, total, ft(1)), w).astype(ft)
    return first, count, w


def _antialiased(input, out, mode, align_corners, scales):
    """Antialiased bilinear/bicubic/lanczos resampling of [N, C, H, W]: the width pass, then the
    height pass (PyTorch's order), each a weighted sum of index_selects, so autograd gives
    the backward; a dim whose size is kept is left as is."""
    if input.dtype == ember.uint8:
        return _resample_uint8(input, out, mode, align_corners, scales, antialias=True)
    if not (input.is_floating_point() and input.element_size() >= 4):
        raise NotImplementedError(f'"compute_index_ranges_weights" not implemented for '
                                  f"'{_scalar_name(input)}'")
    ft = np.float64 if input.dtype == ember.float64 else np.float32
    x = input
    for dim in (3, 2):
        in_size, out_size = x.shape[dim], out[dim - 2]
        if in_size == out_size:
            continue
        first, count, w = _aa_weights(in_size, out_size, mode, align_corners,
                                      scales[dim - 2], ft)
        shape = [1] * 4
        shape[dim] = out_size
        last = first + np.maximum(count, 1) - 1     # zero-weight taps read the window's last
        acc = None
        for j in range(w.shape[1]):
            if not (j < count).any():
                break
            rows = np.minimum(first + j, last).clip(0, in_size - 1).tolist()
            part = x.index_select(dim, ember.tensor(rows, dtype=ember.int64, device=x.device))
            part = part * ember.tensor(w[:, j].tolist(), dtype=x.dtype,
                                       device=x.device).reshape(shape)
            acc = part if acc is None else acc + part
        x = acc
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
