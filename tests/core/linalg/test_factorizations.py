"""LU, LDL^T, Householder, general eigen and the matrix functions against torch.linalg:
float32/float64, batches, rectangular and non-contiguous inputs, gradients, errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.linalg as LA

RNG = np.random.default_rng(0)


def _close(e, t, atol=1e-10):
    if isinstance(t, tuple):
        for a, b in zip(e, t, strict=True):
            _close(a, b, atol)
        return
    np.testing.assert_allclose(np.asarray(e.detach().numpy()), t.detach().numpy(), atol=atol,
                               rtol=1e-5)


def _mats(shape, dtype=np.float64, sym=False):
    a = RNG.standard_normal(shape)
    if sym:
        a = a + np.swapaxes(a, -1, -2)
    return a.astype(dtype)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 3), (3, 5), (0, 3, 3)])
@pytest.mark.parametrize("dtype,atol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_lu_family(shape, dtype, atol):
    a = _mats(shape, dtype)
    e_lu, t_lu = LA.lu_factor(ember.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    _close(e_lu.LU, t_lu.LU, atol)
    assert e_lu.pivots.dtype == ember.int32 and (e_lu.pivots.numpy() == t_lu.pivots.numpy()).all()
    _close(LA.lu(ember.tensor(a)), torch.linalg.lu(torch.tensor(a)), atol)
    _close(ember.lu_unpack(*e_lu), torch.lu_unpack(*t_lu), atol)
    info = LA.lu_factor_ex(ember.tensor(a)).info
    assert tuple(info.shape) == shape[:-2] and not info.numpy().any()


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False)])
def test_lu_solve_and_gradient(left, adjoint):
    a = _mats((2, 4, 4)) + 4 * np.eye(4)
    b = _mats((2, 4, 3) if left else (2, 3, 4))
    e_lu, t_lu = LA.lu_factor(ember.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    eb, tb = ember.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    e = LA.lu_solve(*e_lu, eb, left=left, adjoint=adjoint)
    t = torch.linalg.lu_solve(*t_lu, tb, left=left, adjoint=adjoint)
    _close(e, t)
    e.sum().backward()
    t.sum().backward()
    _close(eb.grad, tb.grad)
    _close(ember.lu_solve(ember.tensor(b[..., :1]) if left else ember.tensor(b[..., :1, :].swapaxes(-1, -2)), *e_lu),
           torch.lu_solve(torch.tensor(b[..., :1]) if left else torch.tensor(b[..., :1, :].swapaxes(-1, -2)), *t_lu))


def test_lu_errors():
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        LA.lu_factor(ember.zeros(3, 3))
    lu, piv = LA.lu_factor(ember.eye(3))
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type"):
        LA.lu_solve(lu, piv.long(), ember.ones(3, 1))
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, pivots, infos = ember.lu(ember.eye(3), get_infos=True)


def test_ldl():
    a = _mats((3, 4, 4), sym=True)
    b = _mats((3, 4, 2))
    e, t = LA.ldl_factor(ember.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
    _close(e.LD, t.LD)
    assert (e.pivots.numpy() == t.pivots.numpy()).all()
    _close(LA.ldl_solve(*e, ember.tensor(b)), torch.linalg.ldl_solve(*t, torch.tensor(b)))
    assert int(LA.ldl_factor_ex(ember.zeros(3, 3)).info) == 1


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 4), (4, 2)])
def test_householder(shape):
    a = _mats(shape)
    eg, tg = ember.geqrf(ember.tensor(a)), torch.geqrf(torch.tensor(a))
    _close(eg, tg)
    ea = ember.tensor(eg.a.numpy(), requires_grad=True)
    ta = torch.tensor(tg.a.numpy(), requires_grad=True)
    e, t = LA.householder_product(ea, eg.tau), torch.linalg.householder_product(ta, tg.tau)
    _close(e, t)
    e.sum().backward()
    t.sum().backward()
    _close(ea.grad, ta.grad, 1e-9)
    _close(ember.orgqr(eg.a, eg.tau), torch.orgqr(tg.a, tg.tau))
    m = shape[-2]
    for left, transpose in [(True, False), (True, True), (False, False), (False, True)]:
        c = _mats(shape[:-2] + ((m, 2) if left else (2, m)))
        _close(ember.ormqr(eg.a, eg.tau, ember.tensor(c), left, transpose),
               torch.ormqr(tg.a, tg.tau, torch.tensor(c), left, transpose))


def test_eig():
    a = _mats((2, 4, 4))
    e, t = LA.eig(ember.tensor(a)), torch.linalg.eig(torch.tensor(a))
    assert e.eigenvalues.dtype == ember.complex128
    _close(e.eigenvalues, t.eigenvalues)

    def phase_free(v):      # eigenvectors are unique up to a unit factor: fix its phase
        v = v.numpy()
        big = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
        return v * (np.abs(big) / big)
    np.testing.assert_allclose(phase_free(e.eigenvectors), phase_free(t.eigenvectors),
                               atol=1e-10)
    _close(LA.eigvals(ember.tensor(a.astype(np.float32))),
           torch.linalg.eigvals(torch.tensor(a.astype(np.float32))), 1e-4)
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        LA.eig(ember.tensor([[float("nan"), 1.0], [1.0, 1.0]]))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        LA.eig(ember.zeros(3, 4))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_matrix_exp_and_gradient(shape):
    a = _mats(shape) * 0.5
    ea, ta = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    e, t = LA.matrix_exp(ea), torch.linalg.matrix_exp(ta)
    _close(e, t)
    w = RNG.standard_normal(shape)
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    _close(ea.grad, ta.grad, 1e-9)
    _close(ember.matrix_exp(ember.tensor(a)), torch.matrix_exp(torch.tensor(a)))
    _close(ember.tensor(a).matrix_exp(), torch.tensor(a).matrix_exp())
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        LA.matrix_exp(ember.zeros(2, 3))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, "fro", "nuc", float("inf")])
def test_cond(p):
    a = _mats((2, 4, 4))
    ea, ta = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    e, t = LA.cond(ea, p), torch.linalg.cond(ta, p)
    _close(e, t, 1e-8)
    if p in (None, 2):
        e.sum().backward()
        t.sum().backward()
        _close(ea.grad, ta.grad, 1e-6)
    assert float(LA.cond(ember.zeros(3, 3), 1)) == float("inf")


def test_tensorinv_tensorsolve_vander():
    a = _mats((4, 6, 8, 3))
    _close(LA.tensorinv(ember.tensor(a)), torch.linalg.tensorinv(torch.tensor(a)), 1e-8)
    with pytest.raises(RuntimeError, match="strictly positive integer for 'ind'"):
        LA.tensorinv(ember.tensor(a), ind=0)
    A, B = _mats((2, 3, 6)), _mats((2, 3))
    _close(LA.tensorsolve(ember.tensor(A), ember.tensor(B)),
           torch.linalg.tensorsolve(torch.tensor(A), torch.tensor(B)), 1e-8)
    A = _mats((6, 2, 3))
    _close(LA.tensorsolve(ember.tensor(A), ember.tensor(B), dims=(0,)),
           torch.linalg.tensorsolve(torch.tensor(A), torch.tensor(B), dims=(0,)), 1e-8)
    x = np.array([1, 2, 3], dtype=np.int8)
    ev, tv = LA.vander(ember.tensor(x)), torch.linalg.vander(torch.tensor(x))
    assert ev.dtype == ember.int64 and ev.tolist() == tv.tolist()
    xf = RNG.standard_normal((2, 3))
    ex, tx = ember.tensor(xf, requires_grad=True), torch.tensor(xf, requires_grad=True)
    LA.vander(ex, N=4).sum().backward()
    torch.linalg.vander(tx, N=4).sum().backward()
    _close(ex.grad, tx.grad)
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        LA.vander(ember.tensor([1.0]), N=1)


def test_legacy_names():
    a = _mats((3, 3)) + 3 * np.eye(3)
    b = _mats((3, 2))
    upper = np.triu(a)
    _close(ember.triangular_solve(ember.tensor(b), ember.tensor(upper)),
           torch.triangular_solve(torch.tensor(b), torch.tensor(upper)))
    _close(ember.triangular_solve(ember.tensor(b), ember.tensor(upper), transpose=True),
           torch.triangular_solve(torch.tensor(b), torch.tensor(upper), transpose=True))
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        out = ember.chain_matmul(ember.tensor(a), ember.tensor(a), ember.tensor(b))
    _close(out, torch.tensor(a @ a @ b))
    for name in ("eig", "symeig"):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            getattr(ember.tensor(a), name)()
    for name in ("lstsq", "solve"):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            getattr(ember, name)(ember.tensor(b), ember.tensor(a))


def _lu_grads(lib, fn, a, b=None):
    """The value and the gradients of sum(out * cos(...)) over fn's differentiable outputs."""
    leaves = [lib.tensor(x, requires_grad=True) for x in ((a,) if b is None else (a, b))]
    out = fn(lib, *leaves)
    outs = out if isinstance(out, tuple) else (out,)
    loss = 0
    for i, o in enumerate(outs):
        if o.requires_grad:
            w = np.cos(np.arange(o.numel()) + i).reshape(tuple(o.shape))
            loss = loss + (o * lib.tensor(w)).sum()
    loss.backward()
    return [o.detach().numpy() for o in outs] + [x.grad.numpy() for x in leaves]


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 3, 2, 4)])
@pytest.mark.parametrize("name,fn", [
    ("lu_factor", lambda L, A: L.linalg.lu_factor(A).LU),
    ("lu_factor_ex", lambda L, A: L.linalg.lu_factor_ex(A).LU),
    ("lu", lambda L, A: tuple(L.linalg.lu(A))),
    ("torch.lu", lambda L, A: L.lu(A)[0]),
    ("lu_unpack", lambda L, A: tuple(L.lu_unpack(*L.linalg.lu_factor(A))[1:])),
])
def test_lu_factorizations_are_differentiable(shape, name, fn):
    a = _mats(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # torch.lu's deprecation
        for e, t in zip(_lu_grads(ember, fn, a), _lu_grads(torch, fn, a), strict=True):
            np.testing.assert_allclose(e, t, atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 3)),
                                             ((4, 4), (2, 4, 1))])
@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_lu_solve_gradient_reaches_the_factors(a_shape, b_shape, left, adjoint):
    a = _mats(a_shape) + 2 * np.eye(a_shape[-1])
    b = _mats(b_shape) if left else np.swapaxes(_mats(b_shape), -1, -2).copy()

    def fn(L, A, B):
        return L.linalg.lu_solve(*L.linalg.lu_factor(A), B, left=left, adjoint=adjoint)
    for e, t in zip(_lu_grads(ember, fn, a, b), _lu_grads(torch, fn, a, b), strict=True):
        np.testing.assert_allclose(e, t, atol=1e-9, rtol=1e-7)


def test_lu_gradcheck_and_forward_ad():
    from ember.autograd import gradcheck, gradgradcheck
    for shape in [(3, 3), (3, 4), (4, 3)]:
        A = ember.tensor(_mats(shape), requires_grad=True)
        assert gradcheck(lambda x: ember.linalg.lu_factor(x).LU, (A,), check_forward_ad=True)
        assert gradgradcheck(lambda x: ember.linalg.lu_factor(x).LU, (A,))
    A = ember.tensor(_mats((3, 3)) + 3 * np.eye(3), requires_grad=True)
    B = ember.tensor(_mats((3, 2)), requires_grad=True)
    for left, adjoint in [(True, False), (False, True)]:
        def f(x, y):
            y = y if left else y.mT
            return ember.linalg.lu_solve(*ember.linalg.lu_factor(x), y, left=left,
                                         adjoint=adjoint)
        assert gradcheck(f, (A, B), check_forward_ad=True)
        assert gradgradcheck(f, (A, B))
