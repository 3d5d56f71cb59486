"""Matrix functions and tensor-shaped systems: matrix_exp (scaling and squaring on the host,
its derivative through the exponential of a block matrix), cond, tensorinv, tensorsolve and
vander (composites of ember ops, so they differentiate)."""
import math

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core.function import Function
from ember.core.linalg._common import _back, _host, _matrix, _recording, with_out

__all__ = ["cond", "matrix_exp", "tensorinv", "tensorsolve", "vander"]


def _expm_host(A):
    from scipy.linalg import expm
    a = _host(A)
    if a.size == 0:
        return _back(a.copy(), A)
    return _back(expm(a), A)


def _frechet(A, E):
    """The derivative of exp at A in the direction E: the top-right block of
    exp([[A, E], [0, A]])."""
    n = A.shape[-1]
    top = _T._cat([A, E], -1)
    bottom = _T._cat([_T.zeros_like(A), A], -1)
    return matrix_exp(_T._cat([top, bottom], -2))[..., :n, n:]


class _MatrixExp(Function):
    """Forward mode: d exp(A)[E]; its adjoint (backward) is d exp(A^H)[G]."""

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return matrix_exp(A)        # untracked here: inside vmap, one batched call

    @staticmethod
    def backward(ctx, g):
        A, = ctx.saved_tensors
        At = A.transpose(-2, -1).conj() if A.is_complex() else A.transpose(-2, -1)
        return _frechet(At, g)

    @staticmethod
    def jvp(ctx, E):
        A, = ctx.saved_tensors
        return _frechet(A, E)


@composite("matrix_exp")    # inside vmap: one call on the batch (func/_batching/linalg.py)
@with_out
def matrix_exp(A, *, out=None):
    """The matrix exponential sum_k A^k / k! of each square matrix of ``A``."""
    _matrix(A, "linalg.matrix_exp", "A", square=True, floating=False)
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor "
                           f"as input. Got {_scalar_name(A)}")
    if _recording(A):
        return _MatrixExp.apply(A)
    return _expm_host(A)


_COND_ORDS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def cond(A, p=None, *, out=None):
    """The condition number of ``A`` in the matrix norm ``p``: the ratio of extreme singular
    values for p in (None, 2, -2) (any shape), else norm(A, p) * norm(A^-1, p) (square;
    inf for a singular matrix)."""
    from ember.core.linalg import inv_ex, matrix_norm, svdvals
    _tensor_arg(A, "linalg.cond", "A", 1)
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    square = f"linalg.cond(ord={p})"
    if isinstance(p, str):                  # PyTorch checks these shapes before the order
        _matrix(A, square, "A", square=True)
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.numel() == 0:                      # NumPy leaves it undefined: PyTorch gives 0
        real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
        result = _T.zeros(A.shape[:-2], dtype=real, device=A.device)
    elif p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        result = small / big if p == -2 else big / small
    elif p == "nuc":
        # from the singular values, as PyTorch: a singular matrix's inverse has no nuclear
        # norm to take (a zero matrix gives 0 * inf, NaN, as PyTorch)
        s = svdvals(A)
        result = s.sum(-1) * s.reciprocal().sum(-1)
    else:
        _matrix(A, square, "A", square=True)
        inverse, info = inv_ex(A)
        result = matrix_norm(A, p) * matrix_norm(inverse, p)
        # singular, or 0 * inf: inf (PyTorch's nan_to_num of the product)
        result = _T.where((info != 0) | (result != result), math.inf, result)
    return result if out is None else _T._result_out(result, out, "cond")


def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` viewed as a linear map from its first ``ind`` dims to the rest:
    shape A.shape[ind:] + A.shape[:ind]."""
    from ember.core.linalg import inv
    _tensor_arg(A, "linalg.tensorinv", "A", 1)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
                           f"{cols} != {rows}")
    result = inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))
    return result if out is None else _T._result_out(result, out, "tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.dim()) == B: ``A`` reshaped to a square matrix of B's size
    by the size of its remaining dims (``dims`` of A moved to the end first)."""
    from ember.core.linalg import solve
    _tensor_arg(A, "linalg.tensorsolve", "A", 1)
    _tensor_arg(B, "linalg.tensorsolve", "B", 2)
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        order = [d for d in range(A.dim()) if d not in dims] + dims
        A = A.permute(*order)
    rest = tuple(A.shape[B.dim():])
    rows, cols = B.numel(), math.prod(rest)
    if rows != cols or math.prod(A.shape[:B.dim()]) != rows:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {cols} != {rows}")
    result = solve(A.reshape(rows, cols), B.reshape(rows)).reshape(rest)
    return result if out is None else _T._result_out(result, out, "tensorsolve")


def vander(x, N=None):
    """The Vandermonde matrix of ``x`` (*, n): columns x^0, x^1, ..., x^(N-1) (N defaults to
    n), shape (*, n, N)."""
    _tensor_arg(x, "linalg.vander", "x", 1)
    if x.dim() < 1:
        raise RuntimeError("N must be greater than 1.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype.name == "bool":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)      # integers: int64
    return _T._cat([_T.ones_like(powers[..., :1]), powers], -1)
