"""Autograd benchmarks: forward + backward of a tiny graph and of a 3-layer MLP, ember vs
PyTorch (and NumPy with the gradients written out by hand), at 1 and 2 threads, ratios
from one run (bench_foundation's harness); plus the 10-element a+b again, now that every
op passes the Autograd key.  Not a test: python benchmarks/bench_autograd.py
"""
import numpy as np
import torch
from bench_foundation import compare

import ember


def cases():
    g = np.random.default_rng(0)
    a_n, b_n = g.standard_normal(10).astype(np.float32), g.standard_normal(10).astype(np.float32)
    a_e = ember.tensor(a_n, requires_grad=True)
    b_e = ember.tensor(b_n, requires_grad=True)
    a_t = torch.tensor(a_n, requires_grad=True)
    b_t = torch.tensor(b_n, requires_grad=True)
    p_e, q_e = ember.tensor(a_n), ember.tensor(b_n)
    p_t, q_t = torch.tensor(a_n), torch.tensor(b_n)

    def tiny(a, b):
        a.grad = b.grad = None
        (a * b).sum().backward()

    def tiny_np():
        _ = (a_n * b_n).sum()
        return b_n * 1.0, a_n * 1.0

    x_n = g.standard_normal((64, 64)).astype(np.float32)
    ws_n = [g.standard_normal((64, 64)).astype(np.float32) * 0.1 for _ in range(3)]
    x_e, x_t = ember.tensor(x_n), torch.tensor(x_n)
    ws_e = [ember.tensor(w, requires_grad=True) for w in ws_n]
    ws_t = [torch.tensor(w, requires_grad=True) for w in ws_n]

    def mlp(x, ws):
        for w in ws:
            w.grad = None
        h = (x @ ws[0]).relu()
        h = (h @ ws[1]).relu()
        (h @ ws[2]).square().mean().backward()

    def mlp_np():
        h1 = np.maximum(x_n @ ws_n[0], 0)
        h2 = np.maximum(h1 @ ws_n[1], 0)
        out = h2 @ ws_n[2]
        d = 2 * out / out.size
        g2 = h2.T @ d
        d2 = (d @ ws_n[2].T) * (h2 > 0)
        g1 = h1.T @ d2
        d1 = (d2 @ ws_n[1].T) * (h1 > 0)
        return x_n.T @ d1, g1, g2

    return [
        ("(a*b).sum().backward() 10", 2000, lambda: tiny(a_e, b_e), tiny_np,
         lambda: tiny(a_t, b_t)),
        ("3-layer MLP 64x64 fwd+bwd", 200, lambda: mlp(x_e, ws_e), mlp_np,
         lambda: mlp(x_t, ws_t)),
        ("a+b 10 (no grad)", 20000, lambda: p_e + q_e, lambda: a_n + b_n, lambda: p_t + q_t),
    ]


if __name__ == "__main__":
    print(f"ember {ember.__version__}, NumPy {np.__version__}, PyTorch {torch.__version__}")
    compare(cases())
