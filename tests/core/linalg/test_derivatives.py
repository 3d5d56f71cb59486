"""ember.linalg gradients against PyTorch 2.13 (batched float64, well-conditioned inputs),
plus gradcheck and, for the main ops, gradgradcheck."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
SQUARE = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
RHS = RNG.standard_normal((2, 3, 2))
GEN = RNG.standard_normal((2, 3, 3))
TALL = RNG.standard_normal((2, 4, 3))
WIDE = RNG.standard_normal((2, 3, 5))


def _signed(U, Vh=None):
    """Singular/eigen vectors with a sign convention (first row >= 0), so the loss does not
    depend on the LAPACK's choice."""
    s = U[..., :1, :].sign()
    return (U * s,) if Vh is None else (U * s, Vh * s.transpose(-2, -1))


def _svd(m, a):
    r = m.linalg.svd(a, full_matrices=False)
    return _signed(r.U, r.Vh) + (r.S,)


def _spd(m, a):
    return a @ a.transpose(-2, -1) + 3 * m.eye(3, dtype=a.dtype)


CASES = {
    "inv": (lambda m, a: m.linalg.inv(a), (SQUARE,), True),
    "inv_ex": (lambda m, a: m.linalg.inv_ex(a).inverse, (SQUARE,), False),
    "solve_ex": (lambda m, a, b: m.linalg.solve_ex(a, b).result, (SQUARE, RHS), False),
    "cholesky_ex": (lambda m, a: m.linalg.cholesky_ex(_spd(m, a)).L, (GEN,), False),
    "det": (lambda m, a: m.linalg.det(a), (SQUARE,), True),
    "legacy_det": (lambda m, a: a.det(), (SQUARE,), False),
    "slogdet": (lambda m, a: m.linalg.slogdet(a).logabsdet, (SQUARE,), True),
    "logdet": (lambda m, a: m.logdet(_spd(m, a)), (GEN,), False),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), (SQUARE, RHS), True),
    "solve_vector": (lambda m, a, b: m.linalg.solve(a, b), (SQUARE, RHS[0, :, 0]), False),
    "solve_right": (lambda m, a, b: m.linalg.solve(a, b, left=False),
                    (SQUARE, RHS.transpose(0, 2, 1)), False),
    "solve_triangular": (lambda m, a, b: m.linalg.solve_triangular(a.triu(), b, upper=True),
                         (SQUARE, RHS), True),
    "solve_triangular_right_unit": (
        lambda m, a, b: m.linalg.solve_triangular(a.tril(), b, upper=False, left=False,
                                                  unitriangular=True),
        (SQUARE, RHS.transpose(0, 2, 1)), False),
    "cholesky": (lambda m, a: m.linalg.cholesky(_spd(m, a)), (GEN,), True),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True), (GEN,), False),
    "cholesky_solve": (lambda m, a, b: m.cholesky_solve(b, a.tril() + 3 * m.eye(3,
                       dtype=a.dtype)), (GEN, RHS), False),
    "cholesky_inverse": (lambda m, a: m.cholesky_inverse(a.tril() + 3 * m.eye(3,
                         dtype=a.dtype)), (GEN,), False),
    "qr": (lambda m, a: tuple(m.linalg.qr(a)), (TALL,), True),
    "qr_wide": (lambda m, a: tuple(m.linalg.qr(a)), (WIDE,), False),
    "eigh": (lambda m, a: (lambda r: (r.eigenvalues,) + _signed(r.eigenvectors))(
        m.linalg.eigh(a + a.transpose(-2, -1))), (GEN,), False),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a + a.transpose(-2, -1)), (GEN,), True),
    "svd_tall": (_svd, (TALL,), False),
    "svd_wide": (_svd, (WIDE,), False),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), (TALL,), True),
    "legacy_svd": (lambda m, a: m.svd(a).S, (TALL,), False),
    "pinv": (lambda m, a: m.linalg.pinv(a), (TALL,), False),
    "pinv_hermitian": (lambda m, a: m.linalg.pinv(_spd(m, a), hermitian=True), (GEN,), False),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, (TALL, RNG.standard_normal(
        (2, 4, 2))), False),
    "matrix_norm_nuc": (lambda m, a: m.linalg.matrix_norm(a, "nuc"), (TALL,), False),
    "matrix_norm_2": (lambda m, a: m.linalg.matrix_norm(a, 2), (TALL,), False),
    "matrix_norm_fro": (lambda m, a: m.linalg.matrix_norm(a), (TALL,), False),
    "matrix_power_neg": (lambda m, a: m.linalg.matrix_power(a, -2), (SQUARE,), False),
}


def _outputs(r):
    return r if isinstance(r, tuple) else (r,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_grad_matches_torch(name):
    fn, arrays, second = CASES[name]
    es = [ember.tensor(a, dtype=ember.float64, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_e, out_t = _outputs(fn(ember, *es)), _outputs(fn(torch, *ts))
    loss_e = loss_t = 0
    for oe, ot in zip(out_e, out_t):
        np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=1e-10)
        w = RNG.standard_normal(tuple(ot.shape))
        loss_e = loss_e + (oe * ember.tensor(w)).sum()
        loss_t = loss_t + (ot * torch.tensor(w)).sum()
    loss_e.backward()
    loss_t.backward()
    for e, t in zip(es, ts):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-9, rtol=1e-7)
    leaves = tuple(ember.tensor(a, dtype=ember.float64, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *x: fn(ember, *x), leaves)
    if second:
        assert gradgradcheck(lambda *x: fn(ember, *x), leaves)


def test_linalg_results_need_no_grad_without_recording():
    a = ember.tensor(SQUARE, dtype=ember.float64, requires_grad=True)
    with ember.no_grad():
        assert not ember.linalg.inv(a).requires_grad
    sign, logabsdet = ember.linalg.slogdet(a)
    assert logabsdet.requires_grad and not sign.requires_grad
    assert ember.linalg.matrix_rank(a).dtype == ember.int64


def test_qr_modes_without_derivative_refuse():
    a = ember.tensor(TALL, dtype=ember.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        ember.linalg.qr(a, "r")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        ember.linalg.qr(a, "complete")


def _leaf_grads(lib, fn, a, w):
    A = lib.tensor(a, requires_grad=True)
    (fn(lib, A) * lib.tensor(w)).sum().backward()
    return A.grad.numpy()


@pytest.mark.parametrize("name,fn", [
    ("eigenvectors", lambda m, A: _signed(m.linalg.eigh(A).eigenvectors)[0]),
    ("eigenvectors_upper", lambda m, A: _signed(m.linalg.eigh(A, UPLO="U").eigenvectors)[0]),
    ("pinv_hermitian", lambda m, A: m.linalg.pinv(A, hermitian=True)),
])
@pytest.mark.parametrize("symmetric", [True, False])
def test_symmetric_decompositions_grad_of_a_leaf_matches_torch(name, fn, symmetric):
    # eigh's backward keeps only V^T gV's skew part (a symmetric gradient); pinv uses the
    # pseudo-inverse's own derivative in both modes, on A as given
    a = GEN + 3 * np.eye(3)
    a = a + np.swapaxes(a, -1, -2) if symmetric else a
    w = RNG.standard_normal(a.shape)
    np.testing.assert_allclose(_leaf_grads(ember, fn, a, w), _leaf_grads(torch, fn, a, w),
                               atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("hermitian", [True, False])
def test_pinv_grad_of_a_rank_deficient_leaf_matches_torch(hermitian):
    # the pseudo-inverse's derivative: finite where svd's 1/(s_i^2 - s_j^2) is not
    v = RNG.standard_normal((2, 3, 1))
    a = v @ np.swapaxes(v, -1, -2)                      # symmetric, rank 1
    w = RNG.standard_normal(a.shape)
    fn = lambda m, A: m.linalg.pinv(A, hermitian=hermitian)     # noqa: E731
    np.testing.assert_allclose(_leaf_grads(ember, fn, a, w), _leaf_grads(torch, fn, a, w),
                               atol=1e-9, rtol=1e-7)
