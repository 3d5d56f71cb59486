"""Cases of the optional `rnn` entry (ABI 6.2): whole LSTM layers, forward and backward,
through ``nn.LSTM`` on the device, against a NumPy LSTM written out step by step.  A device
without the entry runs the core's per-step ops and must give the same numbers."""
import numpy as np

import ember
from ember.testing.conformance._case import case
from ember.testing.conformance._data import FLOATS, check, seeded, to_device, tolerance, values

# variant -> (steps, batch, input, hidden, bidirectional)
_SHAPES = {"forward": (5, 3, 4, 6, False), "bidirectional": (4, 2, 3, 5, True),
           "one_step": (1, 4, 2, 3, False)}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_lstm(x, h0, c0, w_ih, w_hh, b, reverse):
    """(outputs [T,B,H], hn, cn, per-step caches) of one layer in one direction."""
    H = h0.shape[1]
    h, c, ys, cache = h0, c0, [None] * len(x), []
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        z = x[t] @ w_ih.T + b + h @ w_hh.T
        i, f, g, o = (_sigmoid(z[:, :H]), _sigmoid(z[:, H:2 * H]), np.tanh(z[:, 2 * H:3 * H]),
                      _sigmoid(z[:, 3 * H:]))
        cache.append((t, x[t], h, c, i, f, g, o))
        c = f * c + i * g
        h = o * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c, cache


def _np_lstm_backward(dy, cache, w_ih, w_hh):
    """(dx [T,B,In], dw_ih, dw_hh, db) of one layer given dy and no gradient at hn/cn."""
    dx = np.zeros((len(cache),) + cache[0][1].shape)
    dw_ih, dw_hh = np.zeros_like(w_ih), np.zeros_like(w_hh)
    db = np.zeros(w_ih.shape[0])
    dh_next, dc_next = 0.0, 0.0
    for t, x, h_prev, c_prev, i, f, g, o in reversed(cache):
        c = f * c_prev + i * g
        tc = np.tanh(c)
        dh = dy[t] + dh_next
        dc = dc_next + dh * o * (1 - tc * tc)
        dz = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                             dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
        dx[t] = dz @ w_ih
        dw_ih += dz.T @ x
        dw_hh += dz.T @ h_prev
        db += dz.sum(0)
        dh_next, dc_next = dz @ w_hh, dc * f
    return dx, dw_ih, dw_hh, db


def _lstm_case(backward):
    def run(device, dtype, variant):
        T, B, In, H, bidir = _SHAPES[variant]
        rng = seeded("rnn", "lstm", backward, dtype, variant)
        m = ember.nn.LSTM(In, H, bidirectional=bidir)
        weights = {k: values(rng, tuple(p.shape), dtype) * 0.5 for k, p in m.named_parameters()}
        m = m.to(device=device, dtype=getattr(ember, dtype))
        with ember.no_grad():
            for k, p in m.named_parameters():
                p.copy_(to_device(weights[k], dtype, device))
        hx = values(rng, (T, B, In), dtype)
        x = to_device(hx, dtype, device).requires_grad_()
        y, (hn, cn) = m(x)
        directions = [("", False)] + ([("_reverse", True)] if bidir else [])
        outs = []
        for suffix, reverse in directions:
            w_ih, w_hh = weights["weight_ih_l0" + suffix], weights["weight_hh_l0" + suffix]
            b = weights["bias_ih_l0" + suffix] + weights["bias_hh_l0" + suffix]
            zeros = np.zeros((B, H))
            outs.append((_np_lstm(hx, zeros, zeros, w_ih, w_hh, b, reverse), suffix))
        want_y = np.concatenate([o[0][0] for o in outs], axis=-1)
        tol = tolerance(dtype, 8)
        if not backward:
            check(y, want_y, dtype, device, tol, "lstm output")
            check(hn, np.stack([o[0][1] for o in outs]), dtype, device, tol, "lstm h_n")
            check(cn, np.stack([o[0][2] for o in outs]), dtype, device, tol, "lstm c_n")
            return
        hg = values(rng, (T, B, H * len(directions)), dtype)
        y.backward(to_device(hg, dtype, device))
        dx = np.zeros((T, B, In))
        for k, ((_, _, _, cache), suffix) in enumerate(outs):
            w_ih, w_hh = weights["weight_ih_l0" + suffix], weights["weight_hh_l0" + suffix]
            gx, gw_ih, gw_hh, gb = _np_lstm_backward(hg[..., k * H:(k + 1) * H], cache, w_ih,
                                                     w_hh)
            dx += gx
            grads = dict(m.named_parameters())
            tol = tolerance(dtype, 40)
            check(grads["weight_hh_l0" + suffix].grad, gw_hh, dtype, device, tol, "dW_hh")
            check(grads["weight_ih_l0" + suffix].grad, gw_ih, dtype, device, tol, "dW_ih")
            check(grads["bias_hh_l0" + suffix].grad, gb, dtype, device, tol, "db_hh")
        check(x.grad, dx, dtype, device, tolerance(dtype, 40), "lstm input grad")
    return run


case("rnn", "lstm", FLOATS, tuple(_SHAPES))(_lstm_case(False))
case("rnn", "lstm_backward", FLOATS, tuple(_SHAPES))(_lstm_case(True))
