"""Optimizer step benchmark: one Adam (and SGD-momentum) step over an MLP-sized parameter
list (64x128, 128, 128x128, 128, 128x10, 10), and an SGD-momentum step and the hand-written
SGD loop (``p.data.add_(p.grad, alpha=-lr)``, as PyTorch's word language model example
runs it) over the LSTM language model's parameters (1.3M: embedding 3000x200, two layers,
decoder bias), ember vs PyTorch (NumPy with the update written out by hand), at 1 and 2
threads, ratios from one run (bench_foundation's harness).
Not a test: python benchmarks/bench_optim.py
"""
import functools

import numpy as np
import torch
from bench_foundation import compare

import ember

SHAPES = [(64, 128), (128,), (128, 128), (128,), (128, 10), (10,)]
LSTM_LM = [(3000, 200), (800, 200), (800, 200), (800,), (800,), (800, 200), (800, 200),
           (800,), (800,), (3000,)]


def _np_adam(params, grads, m, v, step, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    step[0] += 1
    bc1, bc2 = 1 - b1 ** step[0], (1 - b2 ** step[0]) ** 0.5
    for p, g, a, s in zip(params, grads, m, v):
        a += (1 - b1) * (g - a)
        s *= b2
        s += (1 - b2) * g * g
        p -= (lr / bc1) * a / (np.sqrt(s) / bc2 + eps)


def _np_sgd(params, grads, bufs, lr=1e-2, mom=0.9):
    for p, g, b in zip(params, grads, bufs):
        b *= mom
        b += g
        p -= lr * b


def _params(lib, values, grads):
    """Leaf tensors of ``lib`` holding ``values``, their ``.grad`` set to ``grads``."""
    params = [lib.tensor(a.copy(), requires_grad=True) for a in values]
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g)
    return params


def cases():
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    out = []
    for name, e_cls, t_cls, kw in (("Adam step, MLP params", ember.optim.Adam, torch.optim.Adam,
                                    {"lr": 1e-3}),
                                   ("SGD momentum step", ember.optim.SGD, torch.optim.SGD,
                                    {"lr": 1e-2, "momentum": 0.9})):
        e_p, t_p = _params(ember, init, grads), _params(torch, init, grads)
        e_opt, t_opt = e_cls(e_p, **kw), t_cls(t_p, **kw)
        n_p = [a.copy() for a in init]
        if e_cls is ember.optim.Adam:
            state = ([np.zeros_like(a) for a in init], [np.zeros_like(a) for a in init], [0])
            np_fn = functools.partial(_np_adam, n_p, grads, *state)
        else:
            bufs = [np.zeros_like(a) for a in init]
            np_fn = functools.partial(_np_sgd, n_p, grads, bufs)
        out.append((name, 500, e_opt.step, np_fn, t_opt.step))
    big = [rng.standard_normal(s).astype(np.float32) for s in LSTM_LM]
    big_g = [rng.standard_normal(s).astype(np.float32) for s in LSTM_LM]
    e_p, t_p = _params(ember, big, big_g), _params(torch, big, big_g)
    e_opt = ember.optim.SGD(e_p, lr=1e-2, momentum=0.9, weight_decay=1e-4)
    t_opt = torch.optim.SGD(t_p, lr=1e-2, momentum=0.9, weight_decay=1e-4)
    n_p, bufs = [a.copy() for a in big], [np.zeros_like(a) for a in big]
    out.append(("SGD momentum+wd step, LSTM LM", 50, e_opt.step,
                functools.partial(_np_sgd, n_p, big_g, bufs), t_opt.step))

    def manual(params):
        def step():
            for p in params:
                p.data.add_(p.grad, alpha=-1e-6)
        return step

    def np_manual():
        for p, g in zip(n_p, big_g):
            p -= 1e-6 * g
    out.append(("p.data.add_(p.grad, alpha=-lr) loop, LSTM LM", 50, manual(e_p), np_manual,
                manual(t_p)))
    return out


if __name__ == "__main__":
    print("ember vs PyTorch (single-tensor path: torch's default on CPU), "
          f"{sum(int(np.prod(s)) for s in SHAPES)} parameters in {len(SHAPES)} tensors")
    compare(cases())
