"""The CPU plugin's direct stride-1 convolution kernels (_conv_direct.h: forward, input
gradient, weight gradient) against PyTorch, over the shapes they take and the ones they
decline (stride, dilation, padding >= kernel, few or many channels), float32 and float64,
and the same bits for 1 and 2 threads."""
import numpy as np
import pytest
import torch

import ember

# (N, C, H, W, Cout, kernel, stride, padding, dilation, groups)
CASES = [
    (2, 16, 9, 11, 32, (3, 3), 1, 1, 1, 1),       # every direct path (Cout >= 32, K >= 12)
    (2, 8, 7, 6, 64, (3, 2), 1, (2, 0), 1, 2),    # groups of 32 outputs, uneven padding
    (3, 6, 8, 8, 10, (5, 5), 1, 4, 1, 1),         # input gradient declines padding >= k
    (2, 5, 6, 9, 36, (2, 3), 1, (0, 2), 1, 1),    # tile remainders (36 outputs, 30 taps)
    (2, 1, 10, 10, 16, (3, 3), 1, 1, 1, 1),       # a first layer: input grad with 1 channel
    (2, 4, 9, 9, 6, (3, 3), 1, 0, 1, 1),          # no padding
    (2, 4, 9, 9, 8, (3, 3), 2, 1, 1, 1),          # stride 2: declined
    (2, 4, 9, 9, 8, (3, 3), 1, 2, 2, 1),          # dilation 2: declined
    (1, 70, 5, 5, 70, (3, 3), 1, 1, 1, 1),        # more than 64 outputs: declined
]


@pytest.fixture
def threads():
    before = ember.get_num_threads()
    yield
    ember.set_num_threads(before)


def _grads(lib, x, w, b, go, args):
    X, W, B = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    y = lib.nn.functional.conv2d(X, W, B, *args)
    (y * lib.tensor(go)).sum().backward()
    return [np.asarray(t.detach().numpy()) for t in (y, X.grad, W.grad, B.grad)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_direct_conv_matches_torch(case, dtype):
    N, C, H, W, Co, k, *args = case
    g = np.random.default_rng(0)
    x = g.standard_normal((N, C, H, W)).astype(dtype)
    w = g.standard_normal((Co, C // args[3], *k)).astype(dtype)
    b = g.standard_normal(Co).astype(dtype)
    shape = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None, *args).shape
    go = g.standard_normal(tuple(shape)).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for e, t in zip(_grads(ember, x, w, b, go, args), _grads(torch, x, w, b, go, args)):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


def test_weight_grad_with_inf_input_matches_torch():
    # an inf that meets only real output pixels: no NaN from padded-column products
    x = np.ones((1, 16, 6, 6), np.float32)
    x[0, 3, 2, 5] = np.inf
    w = np.full((32, 16, 3, 3), 0.5, np.float32)
    b = np.zeros(32, np.float32)
    go = np.ones((1, 32, 6, 6), np.float32)
    e = _grads(ember, x, w, b, go, (1, 1))
    t = _grads(torch, x, w, b, go, (1, 1))
    for a, c in zip(e, t):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(c))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(c))


def test_direct_paths_same_bits_for_any_thread_count(threads):
    from ember_cpu import _kernels
    if not _kernels._openmp_enabled():
        pytest.skip("built without OpenMP")
    g = np.random.default_rng(1)
    x = g.standard_normal((9, 16, 12, 12)).astype(np.float32)
    w = g.standard_normal((32, 16, 3, 3)).astype(np.float32)
    b = g.standard_normal(32).astype(np.float32)
    go = g.standard_normal((9, 32, 12, 12)).astype(np.float32)
    ember.set_num_threads(1)
    one = _grads(ember, x, w, b, go, (1, 1))
    ember.set_num_threads(2)
    two = _grads(ember, x, w, b, go, (1, 1))
    for a, c in zip(one, two):
        np.testing.assert_array_equal(a, c)
