"""lobpcg against torch and NumPy: extreme eigenpairs (standard and generalised, largest
and smallest, batched, float32), the eigenvalues' gradient, the errors."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(4)


def _spd(m, shift=1.0):
    a = RNG.standard_normal((m, m))
    return a @ a.T + shift * np.eye(m)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3])
def test_standard_problem(largest, k):
    A = _spd(24)
    E, X = ember.lobpcg(ember.tensor(A), k=k, largest=largest)
    tE, _ = torch.lobpcg(torch.tensor(A), k=k, largest=largest)
    np.testing.assert_allclose(E.numpy(), tE.numpy(), rtol=1e-6)
    ref = np.linalg.eigvalsh(A)
    np.testing.assert_allclose(E.numpy(), ref[::-1][:k] if largest else ref[:k], rtol=1e-6)
    x = X.numpy()
    np.testing.assert_allclose(A @ x, x * E.numpy(), atol=1e-4)
    np.testing.assert_allclose(x.T @ x, np.eye(k), atol=1e-8)


def _gen_eigvals(A, B):
    L = np.linalg.cholesky(B)
    Li = np.linalg.inv(L)
    return np.linalg.eigvalsh(Li @ A @ Li.T)[::-1]


def test_generalised_problem_and_gradient():
    A, B = _spd(21), _spd(21, shift=21.0)
    ea, eb = ember.tensor(A, requires_grad=True), ember.tensor(B, requires_grad=True)
    E, X = ember.lobpcg(ea, k=2, B=eb)
    tE, _ = torch.lobpcg(torch.tensor(A), k=2, B=torch.tensor(B))
    np.testing.assert_allclose(E.detach().numpy(), tE.numpy(), rtol=1e-6)
    x = X.detach().numpy()
    np.testing.assert_allclose(A @ x, B @ x * E.detach().numpy(), atol=1e-4)
    w = np.array([1.0, -2.0])
    (E * ember.tensor(w)).sum().backward()
    # torch has no gradient with B: central differences along a symmetric direction
    D = RNG.standard_normal((21, 21))
    D = D + D.T
    h = 1e-5
    for grad, plus, minus in [
            (ea.grad, lambda: _gen_eigvals(A + h * D, B), lambda: _gen_eigvals(A - h * D, B)),
            (eb.grad, lambda: _gen_eigvals(A, B + h * D), lambda: _gen_eigvals(A, B - h * D))]:
        fd = ((plus()[:2] - minus()[:2]) @ w) / (2 * h)
        np.testing.assert_allclose((grad.numpy() * D).sum(), fd, rtol=1e-5)


def test_gradient_matches_torch():
    A = _spd(18)
    ea, ta = ember.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    ember.lobpcg(ea, k=2)[0].sum().backward()
    torch.lobpcg(ta, k=2)[0].sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), atol=1e-7)


def test_eigenvector_gradient_is_refused():
    a = ember.tensor(_spd(12), requires_grad=True)
    _, X = ember.lobpcg(a, k=1)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        X.abs().sum().backward()


def test_batched_float32_and_start_block():
    A = np.stack([_spd(15), _spd(15)]).astype(np.float32)
    E, X = ember.lobpcg(ember.tensor(A), k=2)
    assert tuple(E.shape) == (2, 2) and tuple(X.shape) == (2, 15, 2) and E.dtype == ember.float32
    for i in range(2):
        np.testing.assert_allclose(E[i].numpy(), np.linalg.eigvalsh(A[i])[::-1][:2], rtol=1e-4)
    X0 = ember.tensor(RNG.standard_normal((15, 3)))
    E, X = ember.lobpcg(ember.tensor(A[0].astype(np.float64)), X=X0)
    assert tuple(E.shape) == (3,)


def test_errors():
    with pytest.raises(ValueError, match="3 x the number"):
        ember.lobpcg(ember.tensor(_spd(5)), k=2)
    with pytest.raises(AssertionError, match="square"):
        ember.lobpcg(ember.ones(6, 5))
    with pytest.raises(AssertionError, match="same shape"):
        ember.lobpcg(ember.tensor(_spd(9)), B=ember.eye(8))
