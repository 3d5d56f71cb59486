"""Cases of the fused entries behind nn.functional: softmax, norm, nll and the pointwise
activations, forward and backward, against NumPy formulas."""
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


# --- activation (the optional pointwise entry; without it the composites run) ----------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_SIXTH = float(np.float32(1 / 6))


def _np_act(name, x):
    """(f(x), f'(x)) of abi.h's EMBER_ACTIVATION_* formulas, with the parameters _ACT uses."""
    sp = np.log1p(np.exp(np.minimum(x, 20)))
    inside = np.abs(x) <= 0.5
    table = {
        "leaky_relu": (np.where(x > 0, x, 0.2 * x), np.where(x > 0, 1, 0.2)),
        "hardtanh": (np.clip(x, -1.5, 0.5), ((x > -1.5) & (x < 0.5)) * 1.0),
        "clamp": (np.clip(x, -1.5, 0.5), ((x >= -1.5) & (x <= 0.5)) * 1.0),
        # (PyTorch's slope is 1/6 rounded to float32, even for double)
        "hardsigmoid": (np.clip(x + 3, 0, 6) / 6, ((x > -3) & (x < 3)) * _SIXTH),
        "hardswish": (x * np.clip(x + 3, 0, 6) / 6,
                      np.where(x <= -3, 0, np.where(x < 3, x / 3 + 0.5, 1))),
        "silu": (x * _sigmoid(x), _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))),
        "elu": (np.where(x > 0, x, 0.7 * np.expm1(x)), np.where(x > 0, 1, 0.7 * np.exp(x))),
        "softplus": (np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2),
                     np.where(2 * x > 3, 1, _sigmoid(2 * x))),
        "log_sigmoid": (-np.log1p(np.exp(-x)), _sigmoid(-x)),
        "hardshrink": (np.where(inside, 0, x), np.where(inside, 0, 1)),
        "softshrink": (np.where(inside, 0, x - np.sign(x) * 0.5), np.where(inside, 0, 1)),
        "mish": (x * np.tanh(sp), np.tanh(sp) + x * _sigmoid(x) * (1 - np.tanh(sp) ** 2)),
    }
    return table[name]


# op code -> (the function that reaches it, its arguments)
_ACT = {"leaky_relu": (F.leaky_relu, {"negative_slope": 0.2}),
        "hardtanh": (F.hardtanh, {"min_val": -1.5, "max_val": 0.5}),
        "clamp": (ember.clamp, {"min": -1.5, "max": 0.5}),
        "hardsigmoid": (F.hardsigmoid, {}), "hardswish": (F.hardswish, {}),
        "silu": (F.silu, {}), "elu": (F.elu, {"alpha": 0.7}),
        "softplus": (F.softplus, {"beta": 2.0, "threshold": 3.0}),
        "log_sigmoid": (F.logsigmoid, {}), "hardshrink": (F.hardshrink, {"lambd": 0.5}),
        "softshrink": (F.softshrink, {"lambd": 0.5}), "mish": (F.mish, {})}


def _activation_case(name):
    @case("activation", name, FLOATS, ("contiguous", "strided", "backward"))
    def run(device, dtype, variant):
        rng = seeded("activation", name, dtype, variant)
        # a grid that crosses every kink (and never sits on one), then random values
        host = _r(np.concatenate([np.linspace(-5.1, 5.3, 24),
                                  rng.standard_normal(24) * 3]).reshape(6, 8), dtype)
        x = _leaf(host, dtype, device, strided=variant == "strided")
        fn, kwargs = _ACT[name]
        y = fn(x, **kwargs)
        value, slope = _np_act(name, host.astype(np.float64))
        check(y, _r(value, dtype), dtype, device, tolerance(dtype, 8), name)
        if variant == "backward":
            g = values(rng, host.shape, dtype)
            y.backward(to_device(g, dtype, device))
            tol = tolerance(dtype, 8)
            if name == "hardsigmoid":       # the composites' exact 1/6 passes too
                tol = max(tol[0], 1e-7), tol[1]
            check(x.grad, _r(g * slope, dtype), dtype, device, tol, f"{name} grad")
    return run


for _name in _ACT:
    _activation_case(_name)
