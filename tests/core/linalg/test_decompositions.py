"""cholesky/qr/svd/svdvals/eigh/eigvalsh against torch.linalg: reconstructions and invariants
where the factors' signs are free, raw values where they are not; errors as torch."""
import numpy as np
import pytest
import torch

import ember
import ember.linalg as LA

pytestmark = pytest.mark.filterwarnings("ignore:torch.(qr|cholesky|svd) is deprecated")
SHAPES = [(4, 3), (3, 4), (3, 3), (2, 5, 3), (2, 1, 3, 5), (0, 3, 2), (3, 0), (0, 0)]


def pair(shape, device, dtype, seed=0, transpose=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    if transpose:
        e, t = e.transpose(-1, -2), t.transpose(-1, -2)
    return e, t


def tol(dtype):
    return 1e-4 if dtype == "float32" else 1e-10


def close(got, want, dtype):
    want = want.numpy(force=True) if isinstance(want, torch.Tensor) else want
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    np.testing.assert_allclose(got.numpy(force=True), want, rtol=tol(dtype), atol=tol(dtype))


def orthonormal_columns(q, dtype):
    q = q.numpy(force=True)
    k = q.shape[-1]
    close(ember.tensor(np.swapaxes(q, -1, -2) @ q), np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), dtype)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qr_reconstructs_and_matches_torch_shapes(shape, mode, dtype, device):
    a, ta = pair(shape, device, dtype, transpose=len(shape) == 3)
    q, r = LA.qr(a, mode=mode)
    tq, tr = torch.linalg.qr(ta, mode=mode)
    assert q.dtype == r.dtype == a.dtype and type(LA.qr(a)).__name__ == "linalg_qr"
    assert tuple(q.shape) == tuple(tq.shape) and tuple(r.shape) == tuple(tr.shape)
    close(ember.tensor(np.abs(r.numpy(force=True))), np.abs(tr.numpy(force=True)), dtype)   # R is unique up to signs
    assert np.array_equal(np.triu(r.numpy(force=True)), r.numpy(force=True))
    if mode != "r":
        close(ember.tensor(q.numpy(force=True) @ r.numpy(force=True)), ta, dtype)
        orthonormal_columns(q, dtype)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_reconstructs_and_matches_torch(shape, full, dtype, device):
    a, ta = pair(shape, device, dtype, seed=1, transpose=len(shape) == 3)
    u, s, vh = LA.svd(a, full_matrices=full)
    tu, ts, tvh = torch.linalg.svd(ta, full_matrices=full)
    assert type(LA.svd(a)).__name__ == "linalg_svd" and s.dtype == a.dtype
    assert (tuple(u.shape), tuple(vh.shape)) == (tuple(tu.shape), tuple(tvh.shape))
    close(s, ts, dtype)
    close(LA.svdvals(a), torch.linalg.svdvals(ta), dtype)
    k = s.shape[-1]
    us = u.numpy(force=True)[..., :k] * s.numpy(force=True)[..., None, :]
    close(ember.tensor(us @ vh.numpy(force=True)[..., :k, :]), ta, dtype)
    orthonormal_columns(u, dtype)
    orthonormal_columns(vh.transpose(-1, -2), dtype)


@pytest.mark.parametrize("some", [True, False])
@pytest.mark.parametrize("compute_uv", [True, False])
def test_torch_svd_returns_v(some, compute_uv, device):
    a, ta = pair((2, 5, 3), device, "float64", seed=2)
    u, s, v = ember.svd(a, some=some, compute_uv=compute_uv)
    tu, ts, tv = torch.svd(ta, some=some, compute_uv=compute_uv)
    assert type(a.svd()).__name__ == "svd"
    assert (tuple(u.shape), tuple(v.shape)) == (tuple(tu.shape), tuple(tv.shape))
    close(s, ts, "float64")
    if compute_uv:
        close(ember.tensor(u.numpy(force=True)[..., :3] * s.numpy(force=True)[..., None, :] @ np.swapaxes(
            v.numpy(force=True)[..., :3], -1, -2)), ta, "float64")
    else:
        assert not u.numpy(force=True).any() and not v.numpy(force=True).any()


def test_torch_qr_and_tensor_methods(device):
    a, ta = pair((5, 3), device, "float64", seed=3)
    for some in (True, False):
        q, r = ember.qr(a, some)
        tq, tr = torch.qr(ta, some)
        assert tuple(q.shape) == tuple(tq.shape) and type(a.qr()).__name__ == "qr"
        close(ember.tensor(q.numpy(force=True) @ r.numpy(force=True)), ta, "float64")


def spd(shape, device, dtype, seed=4):
    a = np.random.default_rng(seed).standard_normal(shape)
    a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return ember.tensor(a.astype(dtype), device=device), torch.tensor(a.astype(dtype))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 3, 3), (0, 0)])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cholesky_matches_torch(shape, upper, dtype, device):
    a, ta = spd(shape, device, dtype)
    close(LA.cholesky(a, upper=upper), torch.linalg.cholesky(ta, upper=upper), dtype)
    close(ember.cholesky(a, upper), torch.cholesky(ta, upper), dtype)
    close(a.cholesky(upper), ta.cholesky(upper), dtype)
    factor, info = LA.cholesky_ex(a, upper=upper)
    assert info.dtype == ember.int32 and not info.numpy(force=True).any()
    # only the lower triangle is read
    junk = LA.cholesky(ember.tensor(np.tril(a.numpy(force=True)) + np.triu(np.ones(shape), 1)), upper=upper)
    close(junk, torch.linalg.cholesky(ta, upper=upper), dtype)


def test_cholesky_of_non_positive_definite_raises(device):
    good = ember.eye(3, dtype=ember.float64, device=device)
    bad = ember.stack([good, -good])
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky: \(Batch element 1\): The "
                       r"factorization could not be completed because the input is not "
                       r"positive-definite \(the leading minor of order 1 is not "
                       r"positive-definite\).$"):
        LA.cholesky(bad)
    m = np.eye(3)
    m[2, 2] = -1.0
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky: The factorization .* order 3 "):
        LA.cholesky(ember.tensor(m, device=device))
    factor, info = LA.cholesky_ex(bad)
    assert info.tolist() == [0, 1] and factor[0].tolist() == good.tolist()
    with pytest.raises(RuntimeError):
        LA.cholesky_ex(bad, check_errors=True)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (0, 3, 3), (0, 0)])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eigh_matches_torch(shape, uplo, dtype, device):
    a, ta = pair(shape, device, dtype, seed=5)
    w, v = LA.eigh(a, UPLO=uplo)
    tw, tv = torch.linalg.eigh(ta, UPLO=uplo)
    assert type(LA.eigh(a)).__name__ == "linalg_eigh"
    close(w, tw, dtype)
    close(LA.eigvalsh(a, UPLO=uplo), torch.linalg.eigvalsh(ta, UPLO=uplo), dtype)
    sym = (np.tril(ta.numpy(force=True)) + np.tril(ta.numpy(force=True), -1).swapaxes(-1, -2) if uplo == "L"
           else np.triu(ta.numpy(force=True)) + np.triu(ta.numpy(force=True), 1).swapaxes(-1, -2))
    vn = v.numpy(force=True)
    close(ember.tensor(vn * w.numpy(force=True)[..., None, :] @ np.swapaxes(vn, -1, -2)), sym, dtype)
    orthonormal_columns(v, dtype)


@pytest.mark.parametrize("call,err,msg", [
    ("L.cholesky(ember.ones(3, 4))", RuntimeError,
     "linalg.cholesky: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.cholesky(ember.ones(3, 3, dtype=ember.int64))", RuntimeError,
     "linalg.cholesky: Expected a floating point or complex tensor as input. Got Long"),
    ("L.qr(ember.ones(3, 3, dtype=ember.int64))", RuntimeError,
     "linalg.qr: Expected a floating point or complex tensor as input. Got Long"),
    ("L.qr(ember.ones(3))", RuntimeError,
     "linalg.qr: The input tensor A must have at least 2 dimensions."),
    ("L.qr(ember.ones(3, 3), mode='x')", RuntimeError,
     "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or "
     "'complete'"),
    ("L.svd(ember.ones(3, 3, dtype=ember.int64))", RuntimeError,
     "linalg.svd: Expected a floating point or complex tensor as input. Got Long"),
    ("L.svd(ember.ones(3))", RuntimeError,
     "linalg.svd: The input tensor A must have at least 2 dimensions."),
    ("ember.svd(ember.ones(3, 3, dtype=ember.int64))", RuntimeError,
     "linalg.svd: Expected a floating point or complex tensor as input. Got Long"),
    ("L.eigh(ember.ones(3, 4))", RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.eigh(ember.ones(3, 3), UPLO='X')", RuntimeError,
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    ("L.eigh(ember.ones(3, 3, dtype=ember.int64))", NotImplementedError,
     "\"linalg_eigh_cpu\" not implemented for 'Long'"),
    ("L.eigvalsh(ember.ones(3, 4))", RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices"),
])
def test_errors_match_torch(call, err, msg):
    with pytest.raises(err) as got:
        eval(call, {"L": LA, "ember": ember})
    torch_call = call.replace("ember.", "torch.").replace("L.", "torch.linalg.")
    with pytest.raises(err) as want:
        eval(torch_call, {"torch": torch})
    assert str(want.value) == msg
    assert msg.replace("linalg.eigh", "linalg.eigvalsh") == str(got.value) or \
        str(got.value) == msg


@pytest.mark.parametrize("fn", [
    lambda L, A: L.linalg.eigvalsh(A).sum(), lambda L, A: L.linalg.svdvals(A).sum(),
    lambda L, A: L.linalg.matrix_norm(A, "nuc"), lambda L, A: L.linalg.matrix_norm(A, 2),
    lambda L, A: L.linalg.det(A * 0),
    lambda L, A: L.linalg.det(A @ A.new_tensor([[1., 2., 0.], [2., 4., 0.], [0., 0., 1.]]))])
def test_gradients_at_repeated_values_and_singular_matrices_as_torch(fn):
    """Eigenvalues or singular values alone have PyTorch's gradient also where they repeat
    (the identity), and a singular matrix's determinant has a zero gradient."""
    grads = []
    for L in (ember, torch):
        A = L.eye(3, dtype=L.float64).requires_grad_()
        fn(L, A).backward()
        grads.append(A.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)
