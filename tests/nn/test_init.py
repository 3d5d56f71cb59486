"""nn.init: gains and fans equal torch's; every initialiser's samples have the expected
bounds/mean/std, honour generator=, run under no_grad and reject bad input."""
import inspect
import math

import numpy as np
import pytest
import torch
from ember.nn import init

import ember
from ember import nn


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",),
                                  ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                                  ("leaky_relu", 3), ("selu",)])
def test_calculate_gain(args):
    assert init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))


def test_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(3, 4), (8, 3, 5, 5), (2, 6, 7)])
def test_fans(shape):
    assert init._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(ember.empty(3, 3), mode="fan_avg")


def _stats(t):
    a = t.detach().numpy().astype(np.float64)
    return a.min(), a.max(), a.mean(), a.std()


SHAPE = (256, 128, 3)                 # fan_in = 384, fan_out = 768


def _check(fn, low, high, expect_mean, expect_std, shape=SHAPE, **kwargs):
    t = nn.Parameter(ember.empty(*shape))
    out = fn(t, **kwargs)
    assert out is t and t.requires_grad and t.grad_fn is None
    lo, hi, m, s = _stats(t)
    assert lo >= low - 1e-6 and hi <= high + 1e-6
    assert abs(m - expect_mean) < 0.01 * expect_std and abs(s - expect_std) < 0.01 * expect_std


def test_uniform_normal_constant():
    _check(init.uniform_, -2, 3, 0.5, 5 / math.sqrt(12), a=-2.0, b=3.0)
    _check(init.normal_, -np.inf, np.inf, 1.0, 0.5, mean=1.0, std=0.5)
    t = ember.empty(3, 3)
    assert ember.equal(init.constant_(t, 0.25), ember.full((3, 3), 0.25))
    assert init.ones_(t).sum().item() == 9 and init.zeros_(t).sum().item() == 0


def test_xavier_and_kaiming():
    fan_in, fan_out = 384, 768
    a = math.sqrt(6 / (fan_in + fan_out))
    _check(init.xavier_uniform_, -a, a, 0, a / math.sqrt(3))
    _check(init.xavier_normal_, -np.inf, np.inf, 0, 2 * math.sqrt(2 / (fan_in + fan_out)),
           gain=2.0)
    bound = math.sqrt(2) * math.sqrt(3 / fan_in)
    _check(init.kaiming_uniform_, -bound, bound, 0, bound / math.sqrt(3),
           nonlinearity="relu")
    std = init.calculate_gain("leaky_relu", 0.1) / math.sqrt(fan_out)
    _check(init.kaiming_normal_, -np.inf, np.inf, 0, std, a=0.1, mode="fan_out")
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(ember.empty(0, 3))


def test_trunc_normal_matches_torch_moments():
    for mean, std, a, b in [(0, 1, -2, 2), (1, 0.5, 1.5, 3.0), (0, 0.02, -0.04, 0.04)]:
        t = ember.empty(300, 300)
        init.trunc_normal_(t, mean, std, a, b)
        r = torch.nn.init.trunc_normal_(torch.empty(300, 300), mean, std, a, b)
        lo, hi, m, s = _stats(t)
        assert lo >= a and hi <= b
        assert abs(m - r.mean().item()) < 0.02 * std and abs(s - r.std().item()) < 0.02 * std


def test_eye_dirac_orthogonal_sparse():
    assert ember.equal(init.eye_(ember.empty(3, 5)), ember.eye(3, 5))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(ember.empty(2, 2, 2))
    w = init.dirac_(ember.empty(6, 2, 3, 3), groups=2)
    np.testing.assert_array_equal(w.numpy(), torch.nn.init.dirac_(torch.empty(6, 2, 3, 3),
                                                                  groups=2).numpy())
    for shape in [(20, 50), (50, 20), (8, 3, 2, 2)]:
        q = init.orthogonal_(ember.empty(*shape), gain=2.0).reshape(shape[0], -1).numpy()
        gram = q @ q.T if shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(gram, 4 * np.eye(gram.shape[0]), atol=1e-4)
    s = init.sparse_(ember.empty(10, 4), 0.3)
    assert all((s[:, c] == 0).sum().item() >= 3 for c in range(4))


def test_generator_reproducible():
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.trunc_normal_, init.orthogonal_):
        a, b = ember.empty(5, 4), ember.empty(5, 4)
        fn(a, generator=ember.Generator().manual_seed(3))
        fn(b, generator=ember.Generator().manual_seed(3))
        assert ember.equal(a, b), fn.__name__


def test_no_grad_helpers_match_torch_signatures():
    # PyTorch's private helpers, which some code calls directly
    names = ["_no_grad_trunc_normal_", "_no_grad_normal_", "_no_grad_uniform_",
             "_no_grad_fill_", "_no_grad_zero_"]
    for name in names:
        assert list(inspect.signature(getattr(init, name)).parameters) == \
            list(inspect.signature(getattr(torch.nn.init, name)).parameters), name
    w = nn.Parameter(ember.empty(40, 50))
    assert init._no_grad_trunc_normal_(w, 0.0, 0.02, -0.03, 0.03) is w
    assert w.abs().max().item() <= 0.03 and w.grad_fn is None
    g = ember.Generator().manual_seed(4)
    init._no_grad_uniform_(w, -0.5, 0.5, generator=g)
    assert 0.4 < w.max().item() <= 0.5 and -0.5 <= w.min().item() < -0.4
    init._no_grad_normal_(w, 3.0, 0.1)
    assert abs(w.mean().item() - 3.0) < 0.01
    assert init._no_grad_fill_(w, 0.25).eq(0.25).all() and init._no_grad_zero_(w).eq(0).all()


@pytest.mark.parametrize("a,b", [(9.0, 10.0), (-10.0, -9.0), (8.0, 12.0)])
def test_trunc_normal_far_in_a_tail(a, b):
    # an inverse CDF in double loses the interval when both bounds are far out: every value
    # used to collapse onto one bound
    t = init.trunc_normal_(ember.empty(20000, dtype=ember.float64), 0.0, 1.0, a, b,
                           generator=ember.Generator().manual_seed(5))
    r = torch.nn.init.trunc_normal_(torch.empty(20000, dtype=torch.float64), 0.0, 1.0, a, b,
                                    generator=torch.Generator().manual_seed(5))
    lo, hi, m, s = _stats(t)
    assert a <= lo and hi <= b and s > 0.05
    assert abs(m - r.mean().item()) < 0.01 and abs(s - r.std().item()) < 0.01


def test_trunc_normal_rejects_non_floating_tensors():
    for dtype in ("int64", "bool"):
        with pytest.raises(NotImplementedError):
            torch.nn.init.trunc_normal_(torch.empty(3, dtype=getattr(torch, dtype)))
        with pytest.raises(NotImplementedError):
            init.trunc_normal_(ember.empty(3, dtype=getattr(ember, dtype)))


def test_orthogonal_on_meta_is_a_no_op():
    w = ember.empty(4, 6, device="meta")
    assert init.orthogonal_(w) is w and w.is_meta
    assert torch.nn.init.orthogonal_(torch.empty(4, 6, device="meta")).is_meta
