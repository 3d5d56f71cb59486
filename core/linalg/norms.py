"""Matrix norms, the pseudo-inverse and rank, and the products torch.linalg names: cross,
multi_dot, vecdot (plus its diagonal/matmul aliases).

What ember's own ops can do (sums, maxima, products) runs on the tensor's device; only the
singular and eigenvalues make the trip to the host."""

import math

from ember.core import _tensor as _T
from ember.core import products
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core.function import Function
from ember.core.linalg._common import (
    _back,
    _check_float,
    _host,
    _matrix,
    _numpy,
    _recording,
    _same_dtype,
    _type_name,
    host_svd,
    with_out,
)
from ember.core.linalg.decompositions import eigh, eigvalsh, svd, svdvals
from ember.core.norms import vector_norm

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_rank", "multi_dot", "norm",
           "pinv", "vecdot"]

_INT64 = _dtype_by_name["int64"]
_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_dims(A, dim, op):
    if not (isinstance(dim, (tuple, list)) and len(dim) == 2):
        got = " ".join(map(str, dim)) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {got}")
    d0, d1 = (_T._wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _drop(t, d0, d1, keepdim):
    """``t`` reduced over d0 and d1 with keepdim=True, those sizes dropped unless ``keepdim``."""
    return t if keepdim else t.squeeze(max(d0, d1)).squeeze(min(d0, d1))


@composite("linalg_matrix_norm")
@with_out
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ``ord`` norm of the matrices spanning dims ``dim`` of ``A``: 'fro', 'nuc',
    inf / -inf (max / min row sum), 1 / -1 (max / min column sum), 2 / -2 (largest /
    smallest singular value)."""
    op = "linalg.matrix_norm"
    _matrix(A, op, "A", floating=False)
    if dtype is not None:
        A = A.to(dtype)
    _check_float(A, op)
    if isinstance(ord, str) and ord not in ("fro", "nuc") or ord not in _MATRIX_ORDS:
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    d0, d1 = _matrix_dims(A, dim, op)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    kept = list(A.shape)
    kept[d0] = kept[d1] = 1
    if A.numel() == 0:               # no entries: every norm of an empty matrix is 0
        return _drop(_T.zeros(kept, dtype=A.dtype, device=A.device), d0, d1, keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(_T.movedim(A, (d0, d1), (-2, -1)))
        s = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        return s.reshape(kept) if keepdim else s
    summed, extreme = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = _T._abs(A).sum(summed, keepdim=True)
    r = sums.amax(extreme, keepdim=True) if ord > 0 else sums.amin(extreme, keepdim=True)
    return _drop(r, d0, d1, keepdim)


@composite("linalg_norm")
@with_out
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector or a matrix norm, as ``dim`` and ``ord`` say: over one dim (or all elements
    when both are None) a vector norm; over two dims (or a 2-D ``A`` given an ``ord``) a
    matrix norm."""
    op = "linalg.norm"
    _tensor_arg(A, op, "A", 1)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            for d in dims:          # torch checks the dims' range before A's rank here
                _T._wrap_dim(d, max(A.dim(), 1))
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError(f"{op}: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dims)}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() not in (1, 2):
        raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D "
                           f"or 2D. Got {A.dim()}D.")
    if isinstance(ord, str) or A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, ord, None, keepdim, dtype=dtype)


def _tolerance(np, smax, atol, rtol, m, n, dtype):
    """torch's cut-off max(atol, rtol * smax): rtol defaults to eps * max(m, n), or to 0
    where a positive atol is given."""
    def value(x):
        return _host(x) if isinstance(x, _T.TensorBase) else (0.0 if x is None else x)
    atol_v = np.asarray(value(atol), dtype=dtype)
    if rtol is None:
        default = np.finfo(dtype).eps * max(m, n)
        rtol_v = np.where(atol_v > 0, 0.0, default) if atol is not None else default
    else:
        rtol_v = np.asarray(value(rtol), dtype=dtype)
    return np.maximum(atol_v, rtol_v * smax)


def _tolerance_t(smax, atol, rtol, m, n):
    """_tolerance with ember ops: max(atol, rtol * smax), tensors of smax's shape."""
    from ember.core.typeinfo import finfo
    atol_t = atol.to(smax.dtype) if isinstance(atol, _T.TensorBase) else \
        _T.full_like(smax, 0.0 if atol is None else atol)
    if rtol is None:
        default = finfo(smax.dtype).eps * max(m, n)
        rtol_t = _T.where(atol_t > 0, 0.0, default) if atol is not None else default
    else:
        rtol_t = rtol.to(smax.dtype) if isinstance(rtol, _T.TensorBase) else rtol
    return _T.maximum(atol_t, rtol_t * smax)


def _spectrum(A, hermitian):
    """|eigenvalues| (hermitian) or singular values of each matrix, on the host."""
    np = _numpy()
    return np.abs(_host(eigvalsh(A))) if hermitian else _host(svdvals(A))


@composite("linalg_pinv")
@with_out
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse of each matrix of ``A``: singular values at or below
    max(atol, rtol * largest) count as zero (``rcond`` is the older name of ``rtol``);
    ``hermitian`` uses the symmetric eigendecomposition."""
    np = _numpy()
    _tensor_arg(A, "linalg.pinv", "A", 1)
    if A.dim() < 2 or not A.is_floating_point() or A.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.pinv({_type_name(A)}{{{list(A.shape)}}}): expected a "
                           f"tensor with 2 or more dimensions of float, double, cfloat or "
                           f"cdouble types")
    rtol = rcond if rtol is None else rtol
    m, n = A.shape[-2:]
    if min(m, n) == 0:
        return _T.zeros(tuple(A.shape[:-2]) + (n, m), dtype=A.dtype, device=A.device)
    if _recording(A):
        return _pinv_differentiable(A, hermitian, atol, rtol)
    a = _host(A)
    if hermitian:
        w, v = np.linalg.eigh(a)
        s, left, right = w, v, np.swapaxes(v, -1, -2)
    else:
        left, s, right = host_svd(a, full_matrices=False)
    smax = np.abs(s).max(-1) if s.shape[-1] else np.zeros(s.shape[:-1], a.dtype)
    keep = np.abs(s) > _tolerance(np, smax, atol, rtol, m, n, a.dtype)[..., None]
    s_inv = np.divide(1, s, out=np.zeros_like(s), where=keep)
    # A+ = V diag(1/s) U^T over the kept singular values
    out_arr = np.swapaxes(right, -1, -2) * s_inv[..., None, :] @ np.swapaxes(left, -1, -2)
    return _back(out_arr, A)


def _pinv_differentiable(A, hermitian, atol, rtol):
    return _Pinv.apply(A, hermitian, atol, rtol)


def _mT(x):
    return x.transpose(-2, -1)


class _Pinv(Function):
    """pinv with the derivative of the pseudo-inverse itself (Golub & Pereyra), which PyTorch
    uses for both ``hermitian`` modes: it reads A as given, so a non-symmetric leaf under
    hermitian=True, or a rank-deficient A, gets PyTorch's gradient (not the symmetrised one
    eigh's chain rule would give, nor svd's 1/(s_i^2 - s_j^2) blow-up)."""

    @staticmethod
    def forward(ctx, A, hermitian, atol, rtol):
        X = _pinv_composite(A, hermitian, atol, rtol)
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, g):
        """gA = -X^T g X^T + (I - A X) g^T X X^T + X^T X g^T (I - X A), with X = pinv(A)."""
        A, X = ctx.saved_tensors
        gt, Xt = _mT(g), _mT(X)
        left = gt @ (X @ Xt)                                  # g^T X X^T
        right = (Xt @ X) @ gt                                 # X^T X g^T
        gA = -(Xt @ g @ Xt) + left - A @ (X @ left) + right - (right @ X) @ A
        return gA, None, None, None

    @staticmethod
    def jvp(ctx, dA, *_):
        """dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X."""
        A, X = ctx.saved_tensors
        dAt, Xt = _mT(dA), _mT(X)
        left, right = X @ (Xt @ dAt), (dAt @ Xt) @ X
        return -(X @ dA @ X) + left - (left @ A) @ X + right - X @ (A @ right)


def _pinv_composite(A, hermitian, atol, rtol):
    """pinv from eigh / svd with ember ops; which singular values count as zero is decided
    on their (detached) values (no host round trip, so it also runs batched inside vmap)."""
    if hermitian:
        s, left = eigh(A)
        right = left.transpose(-2, -1)
    else:
        left, s, right = svd(A, full_matrices=False)
    m, n = A.shape[-2:]
    s_abs = s.detach().abs()
    smax = s_abs.amax(-1) if s_abs.shape[-1] else _T.zeros_like(s_abs.sum(-1))
    keep = s_abs > _tolerance_t(smax, atol, rtol, m, n)[..., None]
    s_inv = _T.where(keep, 1 / _T.where(keep, s, 1.0), 0.0)
    return right.transpose(-2, -1) * s_inv[..., None, :] @ left.transpose(-2, -1)


@composite("linalg_matrix_rank")
@with_out
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """How many singular values (|eigenvalues| when ``hermitian``) of each matrix exceed
    max(atol, rtol * largest); ``tol`` is the older name of ``atol``."""
    np = _numpy()
    _matrix(A, "linalg.matrix_rank", "A")
    atol = tol if atol is None else atol
    m, n = A.shape[-2:]
    s = _spectrum(A, hermitian)
    smax = s.max(-1) if s.shape[-1] else np.zeros(s.shape[:-1], s.dtype)
    tol_v = _tolerance(np, smax, atol, rtol, m, n, s.dtype)
    return _back((s > tol_v[..., None]).sum(-1), A, _INT64)


@with_out
def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (other dims broadcast)."""
    op = "linalg.cross"
    _tensor_arg(input, op, "input", 1)
    _tensor_arg(other, op, "other", 1)
    _same_dtype(input, other, op, ("input", "other"))
    if input.dim() != other.dim():
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions.")
    d = _T._wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return products.cross(input, other, dim=d)


def _chain_order(sizes):
    """Split points of the cheapest parenthesisation of a matrix chain (sizes p0..pn)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


@with_out
def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices, multiplied in the cheapest order; the first
    may be a row vector and the last a column vector (1-D)."""
    op = "multi_dot()"
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"{op}: expected at least 2 tensors but got {len(tensors)}")
    mats = []
    for i, t in enumerate(tensors):
        _tensor_arg(t, "multi_dot", "tensors", 1)
        end = "first" if i == 0 else ("last" if i == len(tensors) - 1 else None)
        if end and t.dim() not in (1, 2):
            raise RuntimeError(f"{op}: the {end} tensor must be 1D or 2D but got {t.dim()}D")
        if not end and t.dim() != 2:
            raise RuntimeError(f"{op}: tensor {i} must be 2D but got {t.dim()}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"{op}: all tensors must have be the same dtype but tensor 0 is "
                               f"{_type_name(tensors[0])} and tensor {i} is {_type_name(t)}")
        mats.append(t if t.dim() == 2 else (t.unsqueeze(0) if i == 0 else t.unsqueeze(1)))
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"{op}: tensors {i} and {i + 1} with shapes "
                               f"{list(mats[i].shape)} and {list(mats[i + 1].shape)} cannot "
                               f"be multiplied")
    split = _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]])
    r = _chain_product(mats, split, 0, len(mats) - 1)
    if tensors[-1].dim() == 1:
        r = r.squeeze(1)
    if tensors[0].dim() == 1:
        r = r.squeeze(0)
    return r


def _chain_product(mats, split, i, j):
    """mats[i] @ ... @ mats[j] in the order ``split`` chose (a module function: a nested one
    calling itself would be a reference cycle holding the matrices)."""
    if i == j:
        return mats[i]
    k = split[i][j]
    return _T.matmul(_chain_product(mats, split, i, k), _chain_product(mats, split, k + 1, j))


@composite("linalg_vecdot")
@with_out
def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of ``x`` and ``y`` along ``dim`` (other dims broadcast)."""
    op = "linalg.vecdot"
    _tensor_arg(x, op, "x", 1)
    _tensor_arg(y, op, "y", 1)
    _same_dtype(x, y, op, ("x", "y"))
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices of ``A`` (torch.diagonal over the last two dims)."""
    return _T.diagonal(_tensor_arg(A, "linalg.diagonal", "A", 1), offset, dim1, dim2)


@with_out
def matmul(input, other, *, out=None):
    """The matrix product of ``input`` and ``other`` (torch.matmul)."""
    return _T.matmul(input, other)
