"""Spatial transformers: affine_grid and grid_sample (``torch.nn.functional``), composed of
gathers weighted by interpolation coefficients, so both the input and the sampling grid get
gradients on every device."""
import warnings

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg

import ember as _E

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def _align(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return align_corners


def _base(n, align_corners, dtype, device):
    """The sample positions of n pixels in [-1, 1] (pixel centres unless align_corners)."""
    if n <= 1:
        return _T.zeros(n, dtype=dtype, device=device)
    steps = _E.linspace(-1.0, 1.0, n, dtype=dtype, device=device)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps ``theta``
    (N, 2, 3) or (N, 3, 4) over an output of ``size`` (N, C, H, W) or (N, C, D, H, W)."""
    align_corners = _align(align_corners)
    _tensor_arg(theta, "affine_grid", "theta", position=1)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{str(theta.dtype).replace('ember', 'torch')}")
    size = tuple(size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    nd = len(size) - 2
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape "
                         f"Nx{nd}x{nd + 1} for size {size}. Got {theta.shape}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    # base[..., :] = (x, y[, z], 1): the last spatial dim is x
    axes = [_base(s, align_corners, theta.dtype, theta.device) for s in spatial]
    grids = _E.meshgrid(*axes, indexing="ij") if nd > 1 else axes
    coords = [g for g in reversed(grids)] + [_T.ones_like(grids[0])]
    base = _E.stack(coords, -1).reshape(1, -1, nd + 1)
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape((size[0],) + tuple(spatial) + (nd,))


# -- grid_sample --------------------------------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """coord reflected back and forth into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return _T.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = coord.fmod(span)
    flips = (coord / span).floor()
    return _T.where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _pad_coord(coord, size, padding_mode, align_corners):
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
    # PyTorch's clip_coordinates (a vectorised max/min) sends nan to 0
    return _T.where(coord.isnan(), 0.0, coord.clamp(0, size - 1))


def _gather(flat, taps, spatial):
    """sum over taps of weight * input[at tap] (zero outside the input); ``taps`` is a list
    of (weight, [index per dim]) with index tensors of the grid's shape (N, *out).  As in
    PyTorch's kernels the value outside is 0, not the weight: a nan weight (a nan in the
    grid) gives nan, and a nan index is outside."""
    n, c = flat.shape[0], flat.shape[1]
    total = flat.shape[2]
    # one zero past the end: what a tap outside the input (or at a nan index) reads
    flat = _E.cat([flat, flat.new_zeros((n, c, 1))], 2)
    out = None
    for weight, index in taps:
        valid = None
        linear = None
        for d, idx in enumerate(index):
            inside = (idx >= 0) & (idx <= spatial[d] - 1)
            valid = inside if valid is None else valid & inside
            clipped = _T.where(inside, idx, 0.0).long()
            linear = clipped if linear is None else linear * spatial[d] + clipped
        linear = _T.where(valid, linear, total)
        linear = linear.reshape(n, 1, -1).expand(n, c, linear[0].numel())
        term = flat.gather(2, linear) * weight.reshape(n, 1, -1)
        out = term if out is None else out + term
    return out


def _cubic(t, a=-0.75):
    """The four cubic-convolution coefficients (Keys, A = -0.75) for offset t in [0, 1)."""
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@composite("grid_sampler")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalized positions of
    ``grid`` (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), (-1, -1) the top-left
    corner; ``mode`` 'bilinear' (trilinear in 3-d), 'nearest' or 'bicubic' (2-d);
    ``padding_mode`` 'zeros', 'border' or 'reflection' for positions outside."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _align(align_corners)
    _tensor_arg(input, "grid_sampler", "input", position=1)
    _tensor_arg(grid, "grid_sampler", "grid", position=2)
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.dim() != grid.dim():
        raise RuntimeError(f"grid_sampler(): expected {input.dim()}D input and grid with same "
                           f"number of dimensions, but got {sizes}")
    if input.dim() not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same "
                           f"number of dimensions, but got {sizes}")
    nd = input.dim() - 2
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c = input.shape[0], input.shape[1]
    spatial = tuple(input.shape[2:])
    out_shape = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    # grid's last dim is (x, y[, z]): x indexes the last spatial dim
    coords = [_unnormalize(grid[..., nd - 1 - d], spatial[d], align_corners)
              for d in range(nd)]
    if mode == "bicubic":
        floors = [co.floor() for co in coords]
        weights = [_cubic(co - fl) for co, fl in zip(coords, floors)]
        taps = []
        for i in range(4):
            for j in range(4):
                idx = [_pad_coord(floors[0] + (i - 1), spatial[0], padding_mode,
                                  align_corners),
                       _pad_coord(floors[1] + (j - 1), spatial[1], padding_mode,
                                  align_corners)]
                taps.append((weights[0][i] * weights[1][j], idx))
    else:
        coords = [_pad_coord(co, spatial[d], padding_mode, align_corners)
                  for d, co in enumerate(coords)]
        if mode == "nearest":
            weight = _T.ones_like(coords[0])
            if grid.requires_grad and _ag.is_grad_enabled():
                # PyTorch's output depends on the grid, with a zero gradient (not none)
                weight = weight + (coords[0] * 0).nan_to_num()
            taps = [(weight, [co.round() for co in coords])]
        else:
            low = [co.floor() for co in coords]
            frac = [co - lo for co, lo in zip(coords, low)]
            taps = []
            for corner in range(2 ** nd):
                bits = [(corner >> (nd - 1 - d)) & 1 for d in range(nd)]
                weight = None
                for d, b in enumerate(bits):
                    w = frac[d] if b else 1 - frac[d]
                    weight = w if weight is None else weight * w
                taps.append((weight, [low[d] + bits[d] for d in range(nd)]))
    return _gather(flat, taps, spatial).reshape((n, c) + out_shape)
