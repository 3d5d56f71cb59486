"""Cases of the fused entries behind nn.functional: softmax, norm, nll, conv and pool,
forward and backward, against NumPy formulas."""
import numpy as np

import ember
from ember.testing.conformance._case import case
from ember.testing.conformance._data import (
    FLOATS,
    check,
    round_to,
    seeded,
    to_device,
    tolerance,
    values,
)

F = ember.nn.functional


def _leaf(host, dtype, device, strided=False):
    """A leaf requiring grad holding `host`; `strided`: a transposed view's layout."""
    if strided:
        x = to_device(np.ascontiguousarray(np.swapaxes(host, 0, -1)), dtype, device)
        x = x.transpose(0, host.ndim - 1)
    else:
        x = to_device(host, dtype, device)
    return x.detach().requires_grad_()


def _r(host, dtype):
    return round_to(host, dtype)


# --- softmax -----------------------------------------------------------------------------

def _np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True)) if x.size else x
    return e / e.sum(axis=dim, keepdims=True) if x.size else x


_SM_LAYOUT = {"contiguous": ((3, 5), -1), "dim0": ((4, 3), 0), "strided": ((3, 5), -1),
              "empty": ((0, 5), -1)}


def _softmax_case(op):
    log = op.startswith("log")
    backward = op.endswith("backward")

    def run(device, dtype, layout):
        shape, dim = _SM_LAYOUT[layout]
        rng = seeded("softmax", op, dtype, layout)
        hx = values(rng, shape, dtype)
        x = _leaf(hx, dtype, device, strided=layout == "strided")
        y = (F.log_softmax if log else F.softmax)(x, dim)
        s = _np_softmax(hx, dim)
        want = np.log(s) if log else s
        tol = tolerance(dtype, 2)
        if not backward:
            check(y, want, dtype, device, tol, op)
            return
        hg = values(rng, shape, dtype)
        y.backward(to_device(hg, dtype, device))
        if log:
            gx = hg - s * hg.sum(axis=dim, keepdims=True)
        else:
            gx = s * (hg - (hg * s).sum(axis=dim, keepdims=True))
        check(x.grad, gx, dtype, device, tolerance(dtype, 4), f"{op} grad")
    return run


for _op in ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward"):
    case("softmax", _op, FLOATS, tuple(_SM_LAYOUT))(_softmax_case(_op))


# --- norm --------------------------------------------------------------------------------
EPS = 1e-5


def _norm_case(op):
    def run(device, dtype, layout):
        rng = seeded("norm", op, dtype, layout)
        strided = layout == "strided"
        tol = tolerance(dtype, 8)
        if op.startswith("layer_norm"):
            hx, hw, hb = values(rng, (4, 6), dtype), values(rng, (6,), dtype), \
                values(rng, (6,), dtype)
            x, w, b = _leaf(hx, dtype, device, strided), _leaf(hw, dtype, device), \
                _leaf(hb, dtype, device)
            y = F.layer_norm(x, (6,), w, b, eps=EPS)
            mean, var = hx.mean(-1, keepdims=True), hx.var(-1, keepdims=True)
            rstd = 1 / np.sqrt(var + EPS)
            xhat = (hx - mean) * rstd
            if op == "layer_norm":
                check(y, xhat * hw + hb, dtype, device, tol, "layer_norm")
                return
            hg = values(rng, (4, 6), dtype)
            y.backward(to_device(hg, dtype, device))
            h = hg * hw
            gx = rstd * (h - h.mean(-1, keepdims=True) - xhat * (h * xhat).mean(-1,
                                                                                  keepdims=True))
            check(x.grad, gx, dtype, device, tol, "layer_norm grad input")
            check(w.grad, (hg * xhat).sum(0), dtype, device, tol, "layer_norm grad weight")
            check(b.grad, hg.sum(0), dtype, device, tol, "layer_norm grad bias")
            return
        training = op in ("batch_norm_stats", "batch_norm_backward")
        hx = values(rng, (4, 3, 5), dtype)
        hw, hb = values(rng, (3,), dtype), values(rng, (3,), dtype)
        hrm = _r(rng.standard_normal(3) * 0.1, dtype)
        hrv = _r(rng.uniform(0.5, 2.0, 3), dtype)
        x, w, b = _leaf(hx, dtype, device, strided), _leaf(hw, dtype, device), \
            _leaf(hb, dtype, device)
        rm, rv = to_device(hrm, dtype, device), to_device(hrv, dtype, device)
        y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.1, eps=EPS)
        if training:
            mean, var = hx.mean((0, 2)), hx.var((0, 2))
            n = hx.size // 3
            check(rm, 0.9 * hrm + 0.1 * mean, dtype, device, tol, "running_mean")
            check(rv, 0.9 * hrv + 0.1 * var * n / (n - 1), dtype, device, tol, "running_var")
        else:
            mean, var = hrm, hrv
        rstd = 1 / np.sqrt(var + EPS)
        xhat = (hx - mean[None, :, None]) * rstd[None, :, None]
        if op in ("batch_norm_stats", "batch_norm_apply"):
            check(y, xhat * hw[None, :, None] + hb[None, :, None], dtype, device, tol,
                  f"batch_norm ({'training' if training else 'eval'})")
            return
        hg = values(rng, (4, 3, 5), dtype)
        y.backward(to_device(hg, dtype, device))
        h = hg * hw[None, :, None]
        r = rstd[None, :, None]
        if training:
            gx = r * (h - h.mean((0, 2), keepdims=True) -
                      xhat * (h * xhat).mean((0, 2), keepdims=True))
        else:
            gx = h * r
        check(x.grad, gx, dtype, device, tol, "batch_norm grad input")
        check(w.grad, (hg * xhat).sum((0, 2)), dtype, device, tol, "batch_norm grad weight")
        check(b.grad, hg.sum((0, 2)), dtype, device, tol, "batch_norm grad bias")
    return run


for _op in ("layer_norm", "layer_norm_backward", "batch_norm_stats", "batch_norm_apply",
            "batch_norm_backward", "batch_norm_backward_eval"):
    case("norm", _op, FLOATS, ("contiguous", "strided"))(_norm_case(_op))


# --- nll ---------------------------------------------------------------------------------

def _nll_case(op):
    fused = op.startswith("cross_entropy")
    backward = op.endswith("backward")

    def run(device, dtype, variant):
        rng = seeded("nll", op, dtype, variant)
        R, C = 6, 4
        ha = values(rng, (R, C), dtype)
        ht = rng.integers(0, C, R)
        weighted = variant == "weighted"
        hw = _r(rng.uniform(0.5, 2.0, C), dtype) if weighted else np.ones(C)
        if weighted:
            ht[1] = -100                                       # ignore_index
        logp = ha - np.log(np.exp(ha).sum(-1, keepdims=True)) if fused else ha
        a = _leaf(ha, dtype, device)
        t = to_device(ht, "int64", device)
        kw = {"weight": to_device(hw, dtype, device)} if weighted else {}
        reduction = "sum" if weighted else "mean"
        loss = (F.cross_entropy if fused else F.nll_loss)(a, t, reduction=reduction, **kw)
        keep = ht != -100
        wt = np.where(keep, hw[np.where(keep, ht, 0)], 0.0)
        per = -wt * logp[np.arange(R), np.where(keep, ht, 0)]
        total = per.sum() if weighted else per.sum() / wt.sum()
        tol = tolerance(dtype, 8)
        if not backward:
            check(loss, total, dtype, device, tol, op)
            return
        loss.backward()
        scale = 1.0 if weighted else 1.0 / wt.sum()
        onehot = np.zeros((R, C))
        onehot[np.arange(R)[keep], ht[keep]] = 1
        if fused:
            sm = np.exp(logp)
            g = scale * wt[:, None] * (sm - onehot)
        else:
            g = -scale * wt[:, None] * onehot
        check(a.grad, g, dtype, device, tol, f"{op} grad")
    return run


for _op in ("nll", "cross_entropy", "nll_backward", "cross_entropy_backward"):
    case("nll", _op, FLOATS, ("plain", "weighted"))(_nll_case(_op))


# --- conv --------------------------------------------------------------------------------
# (stride, padding, dilation, groups)
_CONV = {"plain": (1, 1, 1, 1), "strided": (2, 0, 1, 1), "dilated": (1, 1, 2, 1),
         "groups": (1, 1, 1, 2)}


def _conv_windows(H, k, s, p, d):
    Ho = (H + 2 * p - d * (k - 1) - 1) // s + 1
    return Ho, [slice(ki * d, ki * d + s * (Ho - 1) + 1, s) for ki in range(k)]


def np_conv2d(x, w, b, s, p, d, g):
    """Forward plus the pieces backward needs: (out, padded x, windows)."""
    N, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    Ho, rows = _conv_windows(H, kh, s, p, d)
    Wo, cols = _conv_windows(W, kw, s, p, d)
    out = np.zeros((N, O, Ho, Wo))
    Og = O // g
    for gi in range(g):
        cs, os_ = slice(gi * Cg, (gi + 1) * Cg), slice(gi * Og, (gi + 1) * Og)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                out[:, os_] += np.einsum("nchw,oc->nohw", xp[:, cs, r, c], w[os_, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out, xp, rows, cols


def np_conv2d_backward(x, w, gout, s, p, d, g):
    N, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    _, xp, rows, cols = np_conv2d(x, w, None, s, p, d, g)
    gxp, gw = np.zeros_like(xp), np.zeros(w.shape)
    Og = O // g
    for gi in range(g):
        cs, os_ = slice(gi * Cg, (gi + 1) * Cg), slice(gi * Og, (gi + 1) * Og)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                gxp[:, cs, r, c] += np.einsum("nohw,oc->nchw", gout[:, os_], w[os_, :, i, j])
                gw[os_, :, i, j] += np.einsum("nohw,nchw->oc", gout[:, os_], xp[:, cs, r, c])
    return gxp[:, :, p:p + H, p:p + W], gw, gout.sum((0, 2, 3))


def _conv_case(op):
    def run(device, dtype, variant):
        s, p, d, g = _CONV[variant]
        rng = seeded("conv", op, dtype, variant)
        hx = values(rng, (2, 4, 6, 5), dtype, "small")
        hw = values(rng, (4, 4 // g, 3, 3), dtype, "small")
        hb = values(rng, (4,), dtype, "small")
        x, w, b = _leaf(hx, dtype, device), _leaf(hw, dtype, device), _leaf(hb, dtype, device)
        y = F.conv2d(x, w, b, stride=s, padding=p, dilation=d, groups=g)
        want = np_conv2d(hx, hw, hb, s, p, d, g)[0]
        tol = tolerance(dtype, 16)
        if op == "forward":
            check(y, want, dtype, device, tol, "conv2d")
            return
        hg = values(rng, want.shape, dtype, "small")
        y.backward(to_device(hg, dtype, device))
        gx, gw, gb = np_conv2d_backward(hx, hw, hg, s, p, d, g)
        if op == "backward_input":
            check(x.grad, gx, dtype, device, tol, "conv2d grad input")
        else:
            check(w.grad, gw, dtype, device, tol, "conv2d grad weight")
            check(b.grad, gb, dtype, device, tol, "conv2d grad bias")
    return run


for _op in ("forward", "backward_input", "backward_weight"):
    case("conv", _op, FLOATS, tuple(_CONV))(_conv_case(_op))


# --- pool --------------------------------------------------------------------------------

def _windows(H, k, s, p):
    """PyTorch's pooling windows over one axis: [(start, end, divisor_end)]."""
    Ho = (H + 2 * p - k) // s + 1
    out = []
    for i in range(Ho):
        start = i * s - p
        end_pad = min(start + k, H + p)
        out.append((max(start, 0), min(start + k, H), end_pad - start))
    return out


def _adaptive(H, Ho):
    return [(i * H // Ho, -(-(i + 1) * H // Ho), None) for i in range(Ho)]


def np_pool(x, kind, rows, cols):
    """(out, flat argmax per output or None) of max/avg pooling over given windows."""
    N, C, H, W = x.shape
    out = np.zeros((N, C, len(rows), len(cols)))
    arg = np.zeros(out.shape, np.int64)
    for i, (r0, r1, rd) in enumerate(rows):
        for j, (c0, c1, cd) in enumerate(cols):
            win = x[:, :, r0:r1, c0:c1].reshape(N, C, -1)
            if kind == "max":
                a = win.argmax(-1)
                out[:, :, i, j] = np.take_along_axis(win, a[..., None], -1)[..., 0]
                arg[:, :, i, j] = (r0 + a // (c1 - c0)) * W + c0 + a % (c1 - c0)
            else:
                div = (rd * cd) if rd is not None else win.shape[-1]
                out[:, :, i, j] = win.sum(-1) / div
    return out, arg


_POOL = {"plain": (2, 2, 0), "padded": (3, 2, 1)}       # (kernel, stride, padding)


def _pool_case(op):
    adaptive = op.startswith("adaptive")
    kind = "max" if "max" in op else "avg"
    backward = op.endswith("backward")

    def run(device, dtype, variant):
        rng = seeded("pool", op, dtype, variant)
        N, C, H, W = 2, 3, 5, 7
        # distinct values, exact in every float dtype: no ties for the max
        hx = (rng.permutation(N * C * H * W).reshape(N, C, H, W) - 100) / 8.0
        x = _leaf(hx, dtype, device)
        if adaptive:
            out_hw = (2, 3) if variant == "plain" else (3, 4)
            rows, cols = _adaptive(H, out_hw[0]), _adaptive(W, out_hw[1])
            fn = F.adaptive_max_pool2d if kind == "max" else F.adaptive_avg_pool2d
            y = fn(x, out_hw)
        else:
            k, s, p = _POOL[variant]
            rows, cols = _windows(H, k, s, p), _windows(W, k, s, p)
            fn = F.max_pool2d if kind == "max" else F.avg_pool2d
            y = fn(x, k, s, p)
        want, arg = np_pool(hx, kind, rows, cols)
        tol = tolerance(dtype, 4)
        if not backward:
            check(y, want, dtype, device, tol, op)
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
            for i, (r0, r1, rd) in enumerate(rows):
                for j, (c0, c1, cd) in enumerate(cols):
                    div = (rd * cd) if rd is not None else (r1 - r0) * (c1 - c0)
                    gx[:, :, r0:r1, c0:c1] += hg[:, :, i:i + 1, j:j + 1] / div
        check(x.grad, gx, dtype, device, tol, f"{op} grad")
    return run


for _op in ("max", "max_backward", "avg", "avg_backward", "adaptive_avg",
            "adaptive_avg_backward", "adaptive_max"):
    case("pool", _op, FLOATS, ("plain", "padded"))(_pool_case(_op))
