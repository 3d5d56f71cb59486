"""The top-level linear algebra names torch keeps beside torch.linalg (torch.svd, torch.qr,
torch.det, torch.lu and its solve/unpack, triangular_solve, geqrf/orgqr/ormqr, matrix_exp,
chain_matmul, ...), some with their older conventions (torch.svd returns V, not Vh), and the
four functions PyTorch removed in 1.9 (eig, symeig, lstsq, solve), which raise its guidance."""

import warnings

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core.linalg import factorizations as _fac
from ember.core.linalg._common import _result, with_out
from ember.core.linalg.decompositions import cholesky as _cholesky
from ember.core.linalg.decompositions import qr as _qr
from ember.core.linalg.decompositions import svd as _svd
from ember.core.linalg.decompositions import svdvals
from ember.core.linalg.matrix_functions import matrix_exp
from ember.core.linalg.norms import multi_dot, pinv
from ember.core.linalg.solvers import (
    cholesky_inverse,
    cholesky_solve,
    det,
    inverse,
    logdet,
    matrix_power,
    solve_triangular,
)
from ember.core.linalg.solvers import slogdet as _slogdet

__all__ = ["cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
           "matrix_power", "pinverse", "qr", "slogdet", "svd", "chain_matmul", "eig",
           "geqrf", "lstsq", "lu", "lu_solve", "lu_unpack", "matrix_exp", "orgqr",
           "ormqr", "solve", "symeig", "triangular_solve"]


@composite("svd")
@with_out
def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with ``input = U diag(S) V^T`` (V, not Vh as linalg.svd gives);
    ``some=True`` gives the reduced factors.  Without ``compute_uv``, U and V are zero
    matrices of the full sizes."""
    if not compute_uv:
        s = svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        zeros = [_T.zeros(batch + (k, k), dtype=input.dtype, device=input.device)
                 for k in (m, n)]
        return _result("svd", ["U", "S", "V"], zeros[0], s, zeros[1])
    u, s, vh = _svd(input, full_matrices=not some)
    return _result("svd", ["U", "S", "V"], u, s, vh.transpose(-2, -1).contiguous())


@composite("qr")
@with_out
def qr(input, some=True, *, out=None):
    """torch.qr: (Q, R) of linalg.qr, reduced when ``some`` else complete."""
    q, r = _qr(input, "reduced" if some else "complete")
    return _result("qr", ["Q", "R"], q, r)


@with_out
def slogdet(input, *, out=None):
    """torch.slogdet: (sign, logabsdet) of each determinant."""
    sign, logabsdet = _slogdet(input)
    return _result("slogdet", ["sign", "logabsdet"], sign, logabsdet)


@composite("cholesky")
@with_out
def cholesky(input, upper=False, *, out=None):
    """torch.cholesky (deprecated in torch for linalg.cholesky): the lower Cholesky factor,
    or the upper one when ``upper``."""
    return _cholesky(input, upper=upper)


@composite("pinverse")
def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with singular values below ``rcond`` times the largest
    counted as zero."""
    return pinv(input, rtol=rcond)


# -- torch.lu and its solve/unpack, triangular_solve, geqrf/orgqr/ormqr, matrix_exp,
# chain_matmul, and the functions PyTorch removed in 1.9 --------------------------------------


geqrf = _fac.geqrf
orgqr = _fac.orgqr
ormqr = _fac.ormqr
lu_unpack = _fac.lu_unpack

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_GUIDANCE = {
    "eig": "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
           "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
           "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
           "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
           "torch.linalg.eig(A)",
    "symeig": "The default behavior has changed from using the upper triangular portion of the "
              "matrix by default to using the lower triangular portion.\n\nL, _ = "
              "torch.symeig(A, upper=upper) should be replaced with:\nL = "
              "torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
              "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
              "torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
             "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
             "decomposition in the returned tuple (although it returns other information "
             "about the problem).\n\nTo get the QR decomposition consider using "
             "`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals "
             "of the solution in the last m - n columns of the returned value whenever m > n. "
             "In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned "
             "named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A)."
             "solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B)."
             "solution",
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
             "has its arguments reversed and does not return the LU factorization.\n\nTo get "
             "the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
             "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
             "torch.linalg.solve(A, B)",
}


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed in PyTorch 1.9: raises, pointing to torch.linalg.eig/eigvals."""
    raise RuntimeError(_REMOVED + _GUIDANCE["eig"])


def symeig(self, eigenvectors=False, upper=True, *, out=None):
    """Removed in PyTorch 1.9: raises, pointing to torch.linalg.eigh/eigvalsh."""
    raise RuntimeError(_REMOVED + _GUIDANCE["symeig"])


def lstsq(input, A, *, out=None):
    """Removed in PyTorch 1.9: raises, pointing to torch.linalg.lstsq."""
    raise RuntimeError(_REMOVED + _GUIDANCE["lstsq"])


def solve(input, A, *, out=None):
    """Removed in PyTorch 1.9: raises, pointing to torch.linalg.solve."""
    raise RuntimeError(_REMOVED + _GUIDANCE["solve"])


@composite("lu")
def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots[, infos]) of ``A`` (PyTorch deprecates it for linalg.lu_factor)."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                  "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release."
                  "\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, "
                  "pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                  "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, "
                  "pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)", UserWarning,
                  stacklevel=2)
    LU, pivots, info = _fac.lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


@composite("lu_solve")
@with_out
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """The solution of ``A x = b`` from A's LU factorization (linalg.lu_solve's old
    argument order)."""
    return _fac.lu_solve(LU_data, LU_pivots, b)


@with_out
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(solution, cloned_coefficient): X with ``op(A) X = b`` for triangular ``A`` (op the
    transpose when ``transpose``)."""
    if transpose:
        X = solve_triangular(A.transpose(-2, -1), b, upper=not upper,
                             unitriangular=unitriangular)
    else:
        X = solve_triangular(A, b, upper=upper, unitriangular=unitriangular)
    return _result("triangular_solve", ["solution", "cloned_coefficient"], X, A.clone())


def chain_matmul(*matrices, out=None):
    """The product of ``matrices`` in the cheapest order (linalg.multi_dot's old name)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        result = multi_dot(list(matrices))
    return result if out is None else _T._result_out(result, out, "chain_matmul")


def _tensor_lu(self, pivot=True, get_infos=False):
    """Tensor.lu: torch.lu of this tensor."""
    return lu(self, pivot, get_infos)


class LinalgMethods:
    """Tensor's linear-algebra methods: t.det(), t.inverse(), t.svd(), t.lu(), ... (a base of
    ember.Tensor)."""
    __slots__ = ()
    __module__ = "ember.core.tensor"
    cholesky = cholesky
    cholesky_inverse = cholesky_inverse
    cholesky_solve = cholesky_solve
    det = det
    inverse = inverse
    logdet = logdet
    matrix_power = matrix_power
    pinverse = pinverse
    qr = qr
    slogdet = slogdet
    svd = svd
    eig = eig
    geqrf = geqrf
    lstsq = lstsq
    lu = _tensor_lu
    lu_solve = lu_solve
    matrix_exp = matrix_exp
    orgqr = orgqr
    ormqr = ormqr
    solve = solve
    symeig = symeig
    triangular_solve = triangular_solve
