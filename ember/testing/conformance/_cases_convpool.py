"""Cases of the fused conv and pool entries, forward and backward, against NumPy formulas:
conv1d, conv2d (stride, padding, dilation, groups) and conv3d; max and average pooling
with padding, ceil_mode, dilation, count_include_pad and divisor_override; adaptive
pooling."""
import itertools

import numpy as np

import ember
from ember.testing.conformance._case import case
from ember.testing.conformance._cases_nn import _leaf
from ember.testing.conformance._data import FLOATS, check, seeded, to_device, tolerance, values

F = ember.nn.functional

__all__ = ["np_conv", "np_conv_backward", "np_pool"]


# --- conv --------------------------------------------------------------------------------

def _taps(size, k, s, p, d):
    """(output size, one slice of the padded input per kernel offset) along one axis."""
    out = (size + 2 * p - d * (k - 1) - 1) // s + 1
    return out, [slice(ki * d, ki * d + s * (out - 1) + 1, s) for ki in range(k)]


def _conv_windows(x, w, s, p, d):
    """(padded x, output spatial shape, [(kernel offset, window slices)])."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    taps = [_taps(x.shape[2 + i], w.shape[2 + i], s[i], p[i], d[i]) for i in range(nd)]
    windows = [(offs, tuple(taps[i][1][o] for i, o in enumerate(offs)))
               for offs in itertools.product(*(range(k) for k in w.shape[2:]))]
    return xp, tuple(t[0] for t in taps), windows


def np_conv(x, w, b, s, p, d, g):
    """N-d cross-correlation of x [N, C, *S] with w [O, C / g, *K] plus b [O] (or None);
    s, p, d: one int per spatial axis."""
    xp, out_sp, windows = _conv_windows(x, w, s, p, d)
    O, Cg = w.shape[:2]
    out = np.zeros((x.shape[0], O) + out_sp)
    for gi in range(g):
        cs, os_ = slice(gi * Cg, (gi + 1) * Cg), slice(gi * O // g, (gi + 1) * O // g)
        for offs, win in windows:
            out[:, os_] += np.einsum("nc...,oc->no...", xp[(slice(None), cs) + win],
                                     w[(os_, slice(None)) + offs])
    if b is not None:
        out += b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return out


def np_conv_backward(x, w, gout, s, p, d, g):
    """(grad input, grad weight, grad bias) of np_conv given grad output."""
    xp, _, windows = _conv_windows(x, w, s, p, d)
    O, Cg = w.shape[:2]
    gxp, gw = np.zeros_like(xp), np.zeros(w.shape)
    for gi in range(g):
        cs, os_ = slice(gi * Cg, (gi + 1) * Cg), slice(gi * O // g, (gi + 1) * O // g)
        for offs, win in windows:
            wk = (os_, slice(None)) + offs
            gxp[(slice(None), cs) + win] += np.einsum("no...,oc->nc...", gout[:, os_], w[wk])
            axes = [0] + list(range(2, x.ndim))          # batch and spatial axes
            gw[wk] += np.tensordot(gout[:, os_], xp[(slice(None), cs) + win], (axes, axes))
    inner = tuple(slice(pi, pi + n) for pi, n in zip(p, x.shape[2:]))
    return gxp[(slice(None), slice(None)) + inner], gw, gout.sum((0,) + tuple(
        range(2, gout.ndim)))


# variant: (spatial input shape, kernel shape, stride, padding, dilation, groups)
_CONV = {"plain": ((6, 5), (3, 3), 1, 1, 1, 1), "strided": ((6, 5), (3, 3), 2, 0, 1, 1),
         "dilated": ((6, 5), (3, 3), 1, 1, 2, 1), "groups": ((6, 5), (3, 3), 1, 1, 1, 2),
         "conv1d": ((11,), (3,), 2, 2, 2, 2),
         "conv3d": ((4, 5, 3), (2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), 1)}
_CONV_FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _per_axis(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


def _conv_case(op):
    def run(device, dtype, variant):
        spatial, kernel, s, p, d, g = _CONV[variant]
        nd = len(spatial)
        rng = seeded("conv", op, dtype, variant)
        hx = values(rng, (2, 4) + spatial, dtype, "small")
        hw = values(rng, (4, 4 // g) + kernel, dtype, "small")
        hb = values(rng, (4,), dtype, "small")
        x, w, b = _leaf(hx, dtype, device), _leaf(hw, dtype, device), _leaf(hb, dtype, device)
        y = _CONV_FN[nd](x, w, b, stride=s, padding=p, dilation=d, groups=g)
        s, p, d = (_per_axis(v, nd) for v in (s, p, d))
        want = np_conv(hx, hw, hb, s, p, d, g)
        tol = tolerance(dtype, 16)
        name = f"conv{nd}d"
        if op == "forward":
            check(y, want, dtype, device, tol, name)
            return
        hg = values(rng, want.shape, dtype, "small")
        y.backward(to_device(hg, dtype, device))
        gx, gw, gb = np_conv_backward(hx, hw, hg, s, p, d, g)
        if op == "backward_input":
            check(x.grad, gx, dtype, device, tol, f"{name} grad input")
        else:
            check(w.grad, gw, dtype, device, tol, f"{name} grad weight")
            check(b.grad, gb, dtype, device, tol, f"{name} grad bias")
    return run


for _op in ("forward", "backward_input", "backward_weight"):
    case("conv", _op, FLOATS, tuple(_CONV))(_conv_case(_op))


# --- pool --------------------------------------------------------------------------------

def _windows(H, k, s, p, d=1, ceil_mode=False, count_include_pad=True):
    """PyTorch's pooling windows along one axis: [(input positions, divisor share)], the
    share being the window's length clipped to the padded input (count_include_pad) or
    to the input."""
    span = H + 2 * p - d * (k - 1) - 1
    Ho = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (Ho - 1) * s >= H + p:       # the last window must start inside
        Ho -= 1
    out = []
    for i in range(Ho):
        start = i * s - p
        pos = np.array([start + j * d for j in range(k) if 0 <= start + j * d < H])
        share = min(start + k, H + p) - start if count_include_pad else len(pos)
        out.append((pos, share))
    return out


def _adaptive(H, Ho):
    return [(np.arange(i * H // Ho, -(-(i + 1) * H // Ho)), None) for i in range(Ho)]


def np_pool(x, kind, rows, cols, divisor=None):
    """(out, flat argmax per output) of max/avg pooling of x [N, C, H, W] over the given
    windows; `divisor` overrides the average's."""
    N, C, H, W = x.shape
    out = np.zeros((N, C, len(rows), len(cols)))
    arg = np.zeros(out.shape, np.int64)
    for i, (r, rd) in enumerate(rows):
        for j, (c, cd) in enumerate(cols):
            win = x[:, :, r[:, None], c[None, :]].reshape(N, C, -1)
            if kind == "max":
                a = win.argmax(-1)
                out[:, :, i, j] = np.take_along_axis(win, a[..., None], -1)[..., 0]
                arg[:, :, i, j] = r[a // len(c)] * W + c[a % len(c)]
            else:
                out[:, :, i, j] = win.sum(-1) / _divisor(divisor, rd, cd, r, c)
    return out, arg


def _divisor(override, rd, cd, r, c):
    if override:
        return override
    return rd * cd if rd is not None else len(r) * len(c)


# variant: (kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor)
_POOL = {"plain": (2, 2, 0, 1, False, True, None), "padded": (3, 2, 1, 1, False, True, None),
         "ceil_mode": (3, 2, 1, 1, True, True, None),
         "dilated": (2, 1, 1, 2, False, True, None),
         "dilated_ceil": (3, 2, 1, 2, True, True, None),
         "exclude_pad": (3, 2, 1, 1, False, False, None),
         "ceil_exclude_pad": (3, 2, 1, 1, True, False, None),
         "divisor": (3, 2, 1, 1, False, True, 4)}
_POOL_VARIANTS = {"max": ("plain", "padded", "ceil_mode", "dilated", "dilated_ceil"),
                  "avg": ("plain", "padded", "ceil_mode", "exclude_pad", "ceil_exclude_pad",
                          "divisor"),
                  "adaptive": ("plain", "padded")}


def _pool_windows(adaptive, kind, variant, H, W):
    """(rows, cols, divisor override, the nn.functional call on x)."""
    if adaptive:
        out_hw = (2, 3) if variant == "plain" else (4, 5)
        fn = F.adaptive_max_pool2d if kind == "max" else F.adaptive_avg_pool2d
        return _adaptive(H, out_hw[0]), _adaptive(W, out_hw[1]), None, \
            lambda x: fn(x, out_hw)
    k, s, p, d, ceil_mode, include, divisor = _POOL[variant]
    rows = _windows(H, k, s, p, d, ceil_mode, include)
    cols = _windows(W, k, s, p, d, ceil_mode, include)
    if kind == "max":
        return rows, cols, None, lambda x: F.max_pool2d(x, k, s, p, dilation=d,
                                                        ceil_mode=ceil_mode)
    return rows, cols, divisor, lambda x: F.avg_pool2d(
        x, k, s, p, ceil_mode=ceil_mode, count_include_pad=include, divisor_override=divisor)


def _pool_case(op):
    adaptive = op.startswith("adaptive")
    kind = "max" if "max" in op else "avg"
    backward = op.endswith("backward")

    def run(device, dtype, variant):
        rng = seeded("pool", op, dtype, variant)
        N, C, H, W = 2, 3, 6, 7
        # distinct values, exact in every float dtype: no ties for the max
        hx = (rng.permutation(N * C * H * W).reshape(N, C, H, W) - 100) / 8.0
        x = _leaf(hx, dtype, device)
        rows, cols, divisor, fn = _pool_windows(adaptive, kind, variant, H, W)
        y = fn(x)
        want, arg = np_pool(hx, kind, rows, cols, divisor)
        tol = tolerance(dtype, 4)
        if not backward:
            check(y, want, dtype, device, tol, f"{op} ({variant})")
            return
        hg = values(rng, want.shape, dtype)
        y.backward(to_device(hg, dtype, device))
        gx = np.zeros_like(hx)
        if kind == "max":
            flat = gx.reshape(N, C, -1)
            for n in range(N):
                for c in range(C):
                    np.add.at(flat[n, c], arg[n, c].ravel(), hg[n, c].ravel())
        else:
            for i, (r, rd) in enumerate(rows):
                for j, (c, cd) in enumerate(cols):
                    gx[:, :, r[:, None], c[None, :]] += \
                        hg[:, :, i:i + 1, j:j + 1] / _divisor(divisor, rd, cd, r, c)
        check(x.grad, gx, dtype, device, tol, f"{op} grad ({variant})")
    return run


for _op in ("max", "max_backward", "avg", "avg_backward", "adaptive_avg",
            "adaptive_avg_backward", "adaptive_max"):
    _kind = "adaptive" if _op.startswith("adaptive") else _op.split("_")[0]
    case("pool", _op, FLOATS, _POOL_VARIANTS[_kind])(_pool_case(_op))
