"""Convolution and pooling benchmarks: forward + backward of conv2d (N=64, 1 -> 16 -> 32
channels, 3x3 kernels, padding 1, on 8x8 and 28x28 inputs) and of max_pool2d, ember vs
PyTorch at 1 and 2 threads, ratios from one run (bench_foundation's harness).  The NumPy
column is a forward pass only (sliding windows + tensordot), for scale.
Not a test: python benchmarks/bench_conv.py
"""
import numpy as np
import torch
from bench_foundation import compare
from numpy.lib.stride_tricks import sliding_window_view

import ember


def _np_conv(x, w):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(2, 3))          # N, C, H, W, 3, 3
    return np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)


def conv_case(size):
    g = np.random.default_rng(0)
    x_n = g.standard_normal((64, 1, size, size)).astype(np.float32)
    w1_n = g.standard_normal((16, 1, 3, 3)).astype(np.float32) * 0.3
    w2_n = g.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1
    b1_n, b2_n = np.zeros(16, np.float32), np.zeros(32, np.float32)
    xe, xt = ember.tensor(x_n), torch.tensor(x_n)
    pe = [ember.tensor(a, requires_grad=True) for a in (w1_n, b1_n, w2_n, b2_n)]
    pt = [torch.tensor(a, requires_grad=True) for a in (w1_n, b1_n, w2_n, b2_n)]

    def step(lib, x, p):
        for t in p:
            t.grad = None
        h = lib.conv2d(x, p[0], p[1], padding=1).relu()
        lib.conv2d(h, p[2], p[3], padding=1).sum().backward()

    def numpy_fwd():
        _np_conv(np.maximum(_np_conv(x_n, w1_n), 0), w2_n)

    return (f"conv2d fwd+bwd {size}x{size}", 20 if size == 8 else 5,
            lambda: step(ember, xe, pe), numpy_fwd, lambda: step(torch.nn.functional, xt, pt))


def pool_case():
    g = np.random.default_rng(0)
    x_n = g.standard_normal((64, 16, 28, 28)).astype(np.float32)
    xe = ember.tensor(x_n, requires_grad=True)
    xt = torch.tensor(x_n, requires_grad=True)

    def step(lib, x):
        x.grad = None
        lib.max_pool2d(x, 2).sum().backward()

    def numpy_fwd():
        x_n.reshape(64, 16, 14, 2, 14, 2).max(axis=(3, 5))

    return ("max_pool2d fwd+bwd 28x28", 20, lambda: step(ember, xe), numpy_fwd,
            lambda: step(torch.nn.functional, xt))


def main():
    compare([conv_case(8), conv_case(28), pool_case()])


if __name__ == "__main__":
    main()
