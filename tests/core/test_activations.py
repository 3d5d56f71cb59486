"""core/activations.py (gelu, softplus, silu, mish, hardtanh, elu, leaky_relu, logit) and the
order-statistic composites mode, unique(dim=), unique_consecutive against PyTorch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ember.core import activations as A

import ember

CASES = [("gelu", {}), ("gelu", {"approximate": "tanh"}), ("softplus", {}),
         ("softplus", {"beta": 2, "threshold": 5}), ("silu", {}), ("mish", {}),
         ("hardtanh", {}), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("elu", {}),
         ("elu", {"alpha": 0.3}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2})]


def pair(shape, dtype, device, scale=4.0):
    data = np.random.default_rng(0).standard_normal(shape) * scale
    return (ember.tensor(data, device=device).to(dtype),
            torch.tensor(data).to(getattr(torch, dtype.name)))


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32,
                                   ember.float64])
@pytest.mark.parametrize("name,kw", CASES)
def test_activation(device, oracle, name, kw, dtype):
    a, t = pair((4, 6), dtype, device)
    oracle.assert_matches(getattr(A, name)(a, **kw), getattr(F, name)(t, **kw))
    oracle.assert_matches(getattr(A, name)(a.t(), **kw), getattr(F, name)(t.t(), **kw))
    e, te = pair((0, 3), dtype, device)
    oracle.assert_matches(getattr(A, name)(e, **kw), getattr(F, name)(te, **kw))


@pytest.mark.parametrize("name", ["silu", "mish", "hardtanh", "elu", "leaky_relu"])
def test_inplace(device, oracle, name):
    a, t = pair((3, 3), ember.float32, device)
    r = getattr(A, name)(a, inplace=True)
    assert r is a
    oracle.assert_matches(a, getattr(F, name)(t))


def test_activation_errors(device):
    i = ember.tensor([1, 2], device=device)
    for name in ("gelu", "softplus", "silu", "mish", "elu", "leaky_relu"):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            getattr(A, name)(i)
    with pytest.raises(RuntimeError, match="approximate argument"):
        A.gelu(i.float(), approximate="erf")
    with pytest.raises(ValueError, match="min_val cannot be greater"):
        A.hardtanh(i.float(), 2.0, 1.0)
    with pytest.raises(RuntimeError, match="Bool inputs"):
        A.hardtanh(i > 1)
    with pytest.raises(TypeError, match="must be Tensor"):
        A.gelu([1.0])


def test_hardtanh_integers(device, oracle):
    i = ember.tensor([-3, 0, 4], device=device)
    oracle.assert_matches(A.hardtanh(i), F.hardtanh(torch.tensor([-3, 0, 4])))


@pytest.mark.parametrize("eps", [None, 0.1])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64])
def test_logit(device, oracle, eps, dtype):
    data = [0.0, 0.05, 0.3, 0.5, 0.99, 1.0] if dtype.is_floating_point else [0, 1, 2]
    t = torch.tensor(data, dtype=getattr(torch, dtype.name))
    e = ember.tensor(data, dtype=dtype, device=device)
    oracle.assert_matches(ember.logit(e, eps), torch.logit(t, eps))
    oracle.assert_matches(e.logit(eps), t.logit(eps))


@pytest.mark.parametrize("eps", [None, 0.125])
def test_logit_gradient_matches_torch_at_the_ends(eps):
    """PyTorch's derivative: inf at 0 and 1, NaN outside [0, 1]; with eps the full slope
    at eps and 1 - eps (the clamp's tie had halved it) and 0 outside."""
    data = [0.0, 0.125, 0.3, 0.875, 1.0, 1.25, -0.5]
    grads = []
    for m in (ember, torch):
        x = m.tensor(data, dtype=m.float64, requires_grad=True)
        y = m.logit(x, eps)
        y.sum().backward()
        assert y.grad_fn.name() == "LogitBackward0"
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("dim,keepdim", [(-1, False), (0, True), (1, True), (0, False)])
def test_mode(device, oracle, dim, keepdim):
    data = [[1, 2, 2, 3, 3, 0], [5, 5, 5, 1, 1, 1], [4, 3, 2, 1, 0, 2]]
    e = ember.tensor(data, device=device)
    t = torch.tensor(data)
    got, want = ember.mode(e, dim, keepdim), torch.mode(t, dim, keepdim)
    oracle.assert_matches(got.values, want.values)
    oracle.assert_matches(got.indices, want.indices)
    got = e.float().t().mode(dim)
    want = t.float().t().mode(dim)
    oracle.assert_matches(got.values, want.values)
    oracle.assert_matches(got.indices, want.indices)


def test_mode_edges(device, oracle):
    s = ember.mode(ember.tensor(5.0, device=device))
    assert s.values.item() == 5.0 and s.indices.item() == 0 and s.values.shape == ()
    with pytest.raises(IndexError, match="non-zero size"):
        ember.mode(ember.ones(0, device=device))
    with pytest.raises(IndexError, match="out of range"):
        ember.mode(ember.ones(2, device=device), 1)
    e = ember.ones(0, 3, device=device)
    oracle.assert_matches(ember.mode(e, 1).values, torch.mode(torch.ones(0, 3), 1).values)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_dim_and_consecutive(device, oracle, dim):
    data = [[1, 2, 1], [1, 2, 1], [0, 5, 3], [1, 2, 1]]
    e, t = ember.tensor(data, device=device), torch.tensor(data)
    kw = {"return_inverse": True, "return_counts": True, "dim": dim}
    for name in ("unique", "unique_consecutive"):
        got, want = getattr(ember, name)(e, **kw), getattr(torch, name)(t, **kw)
        for g, w in zip(got, want):
            oracle.assert_matches(g, w)
        oracle.assert_matches(getattr(e, name)(dim=dim), getattr(t, name)(dim=dim))
    with pytest.raises(IndexError, match="out of range"):
        ember.unique(e, dim=2)


def test_unique_consecutive_float_and_empty(device, oracle):
    data = [1.5, 1.5, -2.0, 1.5, 1.5, 1.5]
    got = ember.unique_consecutive(ember.tensor(data, device=device), return_counts=True)
    want = torch.unique_consecutive(torch.tensor(data), return_counts=True)
    for g, w in zip(got, want):
        oracle.assert_matches(g, w)
    oracle.assert_matches(ember.unique_consecutive(ember.ones(0, device=device)),
                          torch.unique_consecutive(torch.ones(0)))


def test_silu(device, oracle):
    from ember.core.activations import silu
    a, ta = oracle.uniform_pair((4, 3), device, seed=1)
    oracle.assert_matches(silu(a), torch.nn.functional.silu(ta))
