"""Norm and loss benchmarks: forward + backward of layer_norm (4096x256), batch_norm in
training mode (64, 32, 14, 14) and cross_entropy (512x1000), ember (fused CPU kernels)
vs PyTorch, with NumPy doing the same math by hand, at 1 and 2 threads, ratios from one
run (bench_foundation's harness).  Not a test: python benchmarks/bench_norms.py
"""
import ember.nn.functional as F
import numpy as np
import torch
import torch.nn.functional as TF
from bench_foundation import compare

import ember


def leaves(arrays):
    return ([ember.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def step(fn, params):
    def run():
        for p in params:
            p.grad = None
        fn(*params).sum().backward()
    return run


def layer_norm_np(x, w, b):
    mean = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    xhat = (x - mean) * rstd
    _ = xhat * w + b
    h = w * np.ones_like(x)                                  # grad of sum() is ones
    gx = rstd * (h - h.mean(1, keepdims=True) - xhat * (h * xhat).mean(1, keepdims=True))
    return gx, xhat.sum(0), x.shape[0]


def batch_norm_np(x, w, b):
    mean = x.mean((0, 2, 3), keepdims=True)
    rstd = 1 / np.sqrt(x.var((0, 2, 3), keepdims=True) + 1e-5)
    xhat = (x - mean) * rstd
    _ = xhat * w[:, None, None] + b[:, None, None]
    h = w[:, None, None] * np.ones_like(x)
    gx = rstd * (h - h.mean((0, 2, 3), keepdims=True)
                 - xhat * (h * xhat).mean((0, 2, 3), keepdims=True))
    return gx, xhat.sum((0, 2, 3))


def cross_entropy_np(x, t):
    m = x.max(1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(1, keepdims=True)
    _ = -(x[np.arange(len(t)), t] - (m + np.log(s))[:, 0]).mean()
    g = e / s
    g[np.arange(len(t)), t] -= 1
    return g / len(t)


def cases():
    g = np.random.default_rng(0)
    f32 = np.float32
    x = g.standard_normal((4096, 256)).astype(f32)
    w, b = g.standard_normal(256).astype(f32), g.standard_normal(256).astype(f32)
    (xe, we, be), (xt, wt, bt) = leaves([x, w, b])
    xb = g.standard_normal((64, 32, 14, 14)).astype(f32)
    wb, bb = g.standard_normal(32).astype(f32), g.standard_normal(32).astype(f32)
    (xbe, wbe, bbe), (xbt, wbt, bbt) = leaves([xb, wb, bb])
    rm_e, rv_e = ember.zeros(32), ember.ones(32)
    rm_t, rv_t = torch.zeros(32), torch.ones(32)
    xc = g.standard_normal((512, 1000)).astype(f32)
    tc = g.integers(0, 1000, 512)
    (xce,), (xct,) = leaves([xc])
    tce, tct = ember.tensor(tc), torch.tensor(tc)
    return [
        ("layer_norm fwd+bwd", 20,
         step(lambda x, w, b: F.layer_norm(x, (256,), w, b), [xe, we, be]),
         lambda: layer_norm_np(x, w, b),
         step(lambda x, w, b: TF.layer_norm(x, (256,), w, b), [xt, wt, bt])),
        ("batch_norm train fwd+bwd", 20,
         step(lambda x, w, b: F.batch_norm(x, rm_e, rv_e, w, b, True), [xbe, wbe, bbe]),
         lambda: batch_norm_np(xb, wb, bb),
         step(lambda x, w, b: TF.batch_norm(x, rm_t, rv_t, w, b, True), [xbt, wbt, bbt])),
        ("cross_entropy fwd+bwd", 20,
         step(lambda x: F.cross_entropy(x, tce), [xce]),
         lambda: cross_entropy_np(xc, tc),
         step(lambda x: TF.cross_entropy(x, tct), [xct])),
    ]


if __name__ == "__main__":
    compare(cases())
