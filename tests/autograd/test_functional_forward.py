"""autograd.functional through forward mode and vmap: jvp (forward AD), hvp (forward-over-
reverse), jacobian(vectorize=True, strategy=...) and hessian(vectorize=True, outer
strategies) against torch.autograd.functional, and PyTorch's errors."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TAF

import ember
import ember.autograd.functional as AF

RNG = np.random.default_rng(2)


def _f_e(x, y):
    return (x.sin() * y.exp()).sum(0), x * y.sum()


def _f_t(x, y):
    return (x.sin() * y.exp()).sum(0), x * y.sum()


def _scalar_e(x):
    return (x.tanh() * x.cos()).sum() + (x ** 3).sum()


def _scalar_t(x):
    return (x.tanh() * x.cos()).sum() + (x ** 3).sum()


def _close(e, t):
    if isinstance(e, tuple):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b)
        return
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-11)


def _pair():
    x, y = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    return (ember.tensor(x), ember.tensor(y)), (torch.tensor(x), torch.tensor(y))


def test_jvp_is_forward_mode():
    (ex, ey), (tx, ty) = _pair()
    (vx, vy), (ux, uy) = _pair()
    _close(AF.jvp(_f_e, (ex, ey), (vx, vy)), TAF.jvp(_f_t, (tx, ty), (ux, uy)))
    with pytest.raises(RuntimeError, match="v has invalid size"):
        AF.jvp(_f_e, (ex, ey), (vx, vx[:1]))


def test_hvp_is_forward_over_reverse():
    x = RNG.standard_normal(4)
    v = RNG.standard_normal(4)
    _close(AF.hvp(_scalar_e, ember.tensor(x), ember.tensor(v)),
           TAF.hvp(_scalar_t, torch.tensor(x), torch.tensor(v)))
    _close(AF.vhp(_scalar_e, ember.tensor(x), ember.tensor(v))[1],
           TAF.hvp(_scalar_t, torch.tensor(x), torch.tensor(v))[1])


@pytest.mark.parametrize("strategy", ["forward-mode", "reverse-mode"])
def test_vectorized_jacobian(strategy):
    (ex, ey), (tx, ty) = _pair()
    _close(AF.jacobian(_f_e, (ex, ey), vectorize=True, strategy=strategy),
           TAF.jacobian(_f_t, (tx, ty), vectorize=True, strategy=strategy))
    _close(AF.jacobian(lambda a: a.exp() @ a.t(), ex, vectorize=True, strategy=strategy),
           TAF.jacobian(lambda a: a.exp() @ a.t(), tx, vectorize=True, strategy=strategy))


@pytest.mark.parametrize("outer", ["forward-mode", "reverse-mode"])
def test_vectorized_hessian(outer):
    x = RNG.standard_normal(4)
    _close(AF.hessian(_scalar_e, ember.tensor(x), vectorize=True,
                      outer_jacobian_strategy=outer),
           TAF.hessian(_scalar_t, torch.tensor(x), vectorize=True,
                       outer_jacobian_strategy=outer))


def test_errors_match_pytorch():
    x = ember.ones(2)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(ember.sin, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="are not supported together"):
        AF.jacobian(ember.sin, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode"'):
        AF.jacobian(ember.sin, x, strategy="sideways")
    with pytest.raises(RuntimeError, match="independent of input 0"):
        AF.jvp(lambda a: ember.ones(2), x, ember.ones(2), strict=True)


@pytest.mark.parametrize("call", [
    lambda L: L.autograd.functional.hessian(lambda x: x.sum(), L.ones(2)),
    lambda L: L.autograd.functional.jacobian(lambda x: L.ones(2), L.ones(3)),
    lambda L: L.autograd.functional.vjp(lambda x: L.ones(2).sum(), L.ones(2)),
    lambda L: L.autograd.functional.vjp(lambda x: (L.ones(2).sum(), (x * 2).sum()),
                                        L.ones(2), (L.tensor(1.), L.tensor(1.))),
])
def test_outputs_independent_of_the_inputs_give_zeros(call):
    def flat(r):
        return [flat(x) for x in r] if isinstance(r, tuple) else r.tolist()
    assert flat(call(ember)) == flat(call(torch))
    with pytest.raises(RuntimeError, match="does not require gradients"):
        ember.autograd.functional.jacobian(lambda x: ember.ones(2), ember.ones(3), strict=True)
