"""Optimizer step benchmark: one Adam (and SGD-momentum) step over an MLP-sized parameter
list (64x128, 128, 128x128, 128, 128x10, 10), ember vs PyTorch (NumPy with the update written
out by hand), at 1 and 2 threads, ratios from one run (bench_foundation's harness).
Not a test: python benchmarks/bench_optim.py
"""
import functools

import numpy as np
import torch
from bench_foundation import compare

import ember

SHAPES = [(64, 128), (128,), (128, 128), (128,), (128, 10), (10,)]


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


def cases():
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    out = []
    for name, e_cls, t_cls, kw in (("Adam step, MLP params", ember.optim.Adam, torch.optim.Adam,
                                    {"lr": 1e-3}),
                                   ("SGD momentum step", ember.optim.SGD, torch.optim.SGD,
                                    {"lr": 1e-2, "momentum": 0.9})):
        e_p = [ember.tensor(a.copy(), requires_grad=True) for a in init]
        t_p = [torch.tensor(a.copy(), requires_grad=True) for a in init]
        for p, g in zip(e_p, grads):
            p.grad = ember.tensor(g)
        for p, g in zip(t_p, grads):
            p.grad = torch.tensor(g)
        e_opt, t_opt = e_cls(e_p, **kw), t_cls(t_p, **kw)
        n_p = [a.copy() for a in init]
        if e_cls is ember.optim.Adam:
            state = ([np.zeros_like(a) for a in init], [np.zeros_like(a) for a in init], [0])
            np_fn = functools.partial(_np_adam, n_p, grads, *state)
        else:
            bufs = [np.zeros_like(a) for a in init]
            np_fn = functools.partial(_np_sgd, n_p, grads, bufs)
        out.append((name, 500, e_opt.step, np_fn, t_opt.step))
    return out


if __name__ == "__main__":
    print("ember vs PyTorch (single-tensor path: torch's default on CPU), "
          f"{sum(int(np.prod(s)) for s in SHAPES)} parameters in {len(SHAPES)} tensors")
    compare(cases())
