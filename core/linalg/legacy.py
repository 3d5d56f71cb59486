"""The top-level linear algebra names torch keeps beside torch.linalg (torch.svd, torch.qr,
torch.det, ...), some with their older conventions: torch.svd returns V, not Vh."""

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core.linalg._common import _result, with_out
from ember.core.linalg.decompositions import cholesky as _cholesky
from ember.core.linalg.decompositions import qr as _qr
from ember.core.linalg.decompositions import svd as _svd
from ember.core.linalg.decompositions import svdvals
from ember.core.linalg.norms import pinv
from ember.core.linalg.solvers import (
    cholesky_inverse,
    cholesky_solve,
    det,
    inverse,
    logdet,
    matrix_power,
)
from ember.core.linalg.solvers import slogdet as _slogdet

__all__ = ["cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
           "matrix_power", "pinverse", "qr", "slogdet", "svd"]


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


# Tensor methods: t.det(), t.inverse(), t.svd(), ... (attached by ember.core.tensor)
TENSOR_METHODS = {name: globals()[name] for name in __all__}
