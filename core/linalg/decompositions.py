"""Matrix decompositions: Cholesky, QR, SVD and the symmetric eigendecomposition, batched
through NumPy's LAPACK wrappers in the input's precision."""

from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core.linalg._common import (
    _back,
    _derivatives,
    _flat,
    _guarded,
    _host,
    _matrix,
    _numpy,
    _raise_on_info,
    _recording,
    _result,
    _type_name,
    host_svd,
    with_out,
)

__all__ = ["cholesky", "cholesky_ex", "eigh", "eigvalsh", "qr", "svd", "svdvals"]

_INT32 = _dtype_by_name["int32"]
_QR_MODES = ("reduced", "complete", "r")


def _not_positive_definite(k):
    return (f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


@composite("linalg_cholesky_ex")
@with_out
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): the Cholesky factor of each symmetric positive-definite matrix of ``A``
    (lower, or upper U = L^T when ``upper``; the lower triangle of ``A`` is read) and
    potrf's status (k > 0: the leading minor of order k is not positive-definite)."""
    np = _numpy()
    op = "linalg.cholesky"
    _matrix(A, op, "A", square=True)
    a = _host(A)
    stack = _flat(a)
    factor, info = _guarded(np.linalg.cholesky, stack, routine="potrf", lower=1)
    factor = factor.reshape(a.shape)
    info = info.reshape(a.shape[:-2])
    if check_errors:
        _raise_on_info(op, info, _not_positive_definite)
    if upper:
        factor = np.swapaxes(factor, -1, -2)
    L = _back(factor, A)
    if _recording(A) and not info.any():      # differentiable where every matrix factored
        L = _derivatives().cholesky(A, upper)
    return _result("linalg_cholesky_ex", ["L", "info"], L, _back(info, A, _INT32))


@composite("linalg_cholesky")
@with_out
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor of each symmetric positive-definite matrix of ``A`` (lower, or
    upper when ``upper``); LinAlgError when one is not positive-definite."""
    if _recording(A):
        return _derivatives().cholesky(A, upper)
    return cholesky_ex(A, upper=upper, check_errors=True).L


def _eye_stack(np, batch, n, dtype):
    return np.broadcast_to(np.eye(n, dtype=dtype), tuple(batch) + (n, n))


@composite("linalg_qr")
@with_out
def qr(A, mode="reduced", *, out=None):
    """(Q, R) with Q orthonormal and R upper triangular, ``A = Q R``.  ``mode``: 'reduced'
    (Q is m x k, R k x n with k = min(m, n)), 'complete' (Q m x m, R m x n) or 'r' (R only,
    Q empty)."""
    np = _numpy()
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _matrix(A, "linalg.qr", "A")
    if _recording(A):
        return _derivatives().qr(A, mode)
    a = _host(A)
    m, n = a.shape[-2:]
    if min(m, n) == 0:                 # LAPACK has nothing to do: Q is (part of) the identity
        complete = mode == "complete"
        q = _eye_stack(np, a.shape[:-2], m, a.dtype)[..., :m if complete else 0]
        r = np.zeros(a.shape[:-2] + (m if complete else 0, n), a.dtype)
    elif mode == "r":
        r = np.linalg.qr(a, mode="r")
    else:
        q, r = np.linalg.qr(a, mode=mode)
    r = np.triu(r)
    q = np.zeros(0, a.dtype) if mode == "r" else q
    return _result("linalg_qr", ["Q", "R"], _back(q, A), _back(r, A))


def _svd_host(A, full_matrices, compute_uv, op):
    """U, S, Vh (or S alone) of the host copy of ``A``, empty matrices included."""
    np = _numpy()
    _matrix(A, op, "A")
    a = _host(A)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    if min(m, n) == 0:
        s = np.zeros(batch + (0,), a.dtype)
        if not compute_uv:
            return s
        u = _eye_stack(np, batch, m, a.dtype)[..., :m if full_matrices else 0]
        vh = _eye_stack(np, batch, n, a.dtype)[..., :n if full_matrices else 0, :]
        return u, s, vh
    return host_svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


@composite("linalg_svd")
@with_out
def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with ``A = U diag(S) Vh``, S descending.  ``full_matrices=False`` gives the
    reduced factors (U m x k, Vh k x n, k = min(m, n)).  ``driver`` picks a cuSOLVER routine
    in torch and is ignored on the host."""
    if _recording(A):
        return _derivatives().svd(A, full_matrices)
    u, s, vh = _svd_host(A, full_matrices, True, "linalg.svd")
    return _result("linalg_svd", ["U", "S", "Vh"], _back(u, A), _back(s, A), _back(vh, A))


@composite("linalg_svdvals")
@with_out
def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix of ``A``, in descending order."""
    if _recording(A):
        return svd(A, full_matrices=False).S
    return _back(_svd_host(A, False, False, "linalg.svdvals"), A)


def _symmetric(A, UPLO, op, host=True):
    """A checked (square, floating, UPLO), and its values on the host (when ``host``)."""
    _tensor_arg(A, op, "A", 1)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _matrix(A, op, "A", square=True, floating=False)
    if not A.is_floating_point() or A.dtype.itemsize < 4:
        raise NotImplementedError(f'"linalg_eigh_cpu" not implemented for \'{_type_name(A)}\'')
    return _host(A) if host else None


@composite("linalg_eigh")
@with_out
def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues, eigenvectors) of each symmetric matrix of ``A``, eigenvalues ascending;
    only the ``UPLO`` ('L' or 'U') triangle is read."""
    if _recording(A):
        _symmetric(A, UPLO, "linalg.eigh", host=False)
        return _derivatives().eigh(A, UPLO)
    w, v = _numpy().linalg.eigh(_symmetric(A, UPLO, "linalg.eigh"), UPLO=UPLO)
    return _result("linalg_eigh", ["eigenvalues", "eigenvectors"], _back(w, A), _back(v, A))


@composite("linalg_eigvalsh")
@with_out
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of each symmetric matrix of ``A``, ascending."""
    if _recording(A):
        return eigh(A, UPLO).eigenvalues
    return _back(_numpy().linalg.eigvalsh(_symmetric(A, UPLO, "linalg.eigvalsh"), UPLO=UPLO), A)
