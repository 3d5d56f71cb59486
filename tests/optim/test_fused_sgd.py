"""The fused SGD step (abi.h's optional `sgd` entry, ABI 6.3): the same bits as the
per-tensor update, PyTorch's values, every option; a parameter the kernel does not take
(float16, a non-contiguous one) gets the per-tensor update; add_/sub_ with alpha runs
through the same entry with the multiply-then-add's bits."""
import importlib

import numpy as np
import pytest
import torch

import ember

ember_sgd = importlib.import_module("ember.optim.sgd")

OPTIONS = {
    "plain": dict(),
    "weight_decay": dict(weight_decay=0.1),
    "momentum": dict(momentum=0.9),
    "dampening": dict(momentum=0.9, dampening=0.3, weight_decay=0.01),
    "nesterov": dict(momentum=0.8, nesterov=True, weight_decay=0.05),
    "maximize": dict(momentum=0.5, maximize=True),
}
SHAPES = [(5, 3), (7,), (2, 3, 4)]


def _run(lib, opts, dtype, steps=4, transposed_grad=False):
    rng = np.random.default_rng(0)
    ps = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype))) for s in SHAPES]
    opt = lib.optim.SGD(ps, lr=0.1, **opts)
    for k in range(steps):
        for i, p in enumerate(ps):
            g = rng.standard_normal(p.shape).astype(dtype)
            if i == 1 and k == 0:
                continue                         # no gradient: a buffer made a step later
            p.grad = lib.tensor(g)
            if transposed_grad and p.dim() == 2:
                p.grad = lib.tensor(np.ascontiguousarray(g.T)).t()
        opt.step()
        for p in ps:
            p.grad = None
    return [p.detach().numpy() for p in ps], opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_fused_step_has_the_per_tensor_bits_and_torch_values(name, dtype, monkeypatch):
    fused, opt = _run(ember, OPTIONS[name], dtype, transposed_grad=True)
    assert all(s is None or s.get("momentum_buffer") is None or
               s["momentum_buffer"].is_contiguous() for s in opt.state.values())
    monkeypatch.setattr(ember_sgd, "_fused_sgd", lambda *a: False)
    per_tensor, _ = _run(ember, OPTIONS[name], dtype, transposed_grad=True)
    for a, b in zip(fused, per_tensor):
        np.testing.assert_array_equal(a, b)
    want, _ = _run(torch, OPTIONS[name], dtype, transposed_grad=True)
    tol = 1e-6 if dtype == "float32" else 1e-14
    for a, b in zip(fused, want):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_the_fused_step_runs_through_the_backend_entry(monkeypatch):
    calls = []
    real = ember_sgd._fused_sgd
    monkeypatch.setattr(ember_sgd, "_fused_sgd", lambda *a: calls.append(a[9]) or real(*a))
    _run(ember, OPTIONS["momentum"], "float32", steps=2)
    # step 1: the buffers of the parameters with a gradient are made; step 2: the third
    # one's buffer is made while the others update theirs
    assert calls == [True, False, True]


def test_parameters_the_kernel_does_not_take_get_the_per_tensor_update():
    half = ember.nn.Parameter(ember.ones(4, dtype=ember.float16))
    strided = ember.nn.Parameter(ember.ones(4, 6)[:, ::2])
    plain = ember.nn.Parameter(ember.ones(4))
    opt = ember.optim.SGD([half, strided, plain], lr=0.5, momentum=0.9)
    for _ in range(2):
        for p in (half, strided, plain):
            p.grad = ember.ones_like(p)
        opt.step()
    # step 1: 1 - 0.5; step 2: buf = 0.9 + 1 = 1.9, p = 0.5 - 0.95
    for p in (half, strided, plain):
        np.testing.assert_allclose(p.detach().float().numpy(), -0.45,
                                   atol=1e-3 if p.dtype == ember.float16 else 1e-7)


@pytest.mark.parametrize("device", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_add_with_alpha_in_one_pass_has_the_multiply_then_add_bits(device, dtype):
    rng = np.random.default_rng(1)
    a = ember.tensor(rng.standard_normal((33, 65)).astype(dtype)).to(device)
    b = ember.tensor(rng.standard_normal((33, 65)).astype(dtype)).to(device)
    for alpha in (-0.1, 3, 1e-3):
        want = (a + b * alpha).cpu().numpy()
        got = a.clone()
        v = got._version
        got.add_(b, alpha=alpha)
        assert got._version == v + 1
        np.testing.assert_array_equal(got.cpu().numpy(), want)
        got = a.clone().sub_(b, alpha=alpha)
        np.testing.assert_array_equal(got.cpu().numpy(), (a - b * alpha).cpu().numpy())
    x = a.clone()
    x.add_(x, alpha=2.0)                            # the very same elements: allowed
    np.testing.assert_array_equal(x.cpu().numpy(), (a + a * 2.0).cpu().numpy())
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        y = a.clone().reshape(-1)
        y[1:].add_(y[:-1], alpha=2.0)
