"""Linear systems and what is built from them: solve, inv, det, slogdet, triangular and
Cholesky solves, least squares, matrix powers.

Batched NumPy LAPACK does the common case; a batch holding a singular matrix is diagnosed
matrix by matrix (getrf's status) only when NumPy reports one, so the fast path stays fast."""

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core.linalg._common import (
    _back,
    _batch_shape,
    _blas,
    _broadcast,
    _derivatives,
    _flat,
    _guarded,
    _host,
    _lapack,
    _matrix,
    _numpy,
    _raise_on_info,
    _recording,
    _result,
    _same_dtype,
    _singular,
    with_out,
)

__all__ = ["cholesky_inverse", "cholesky_solve", "det", "inv", "inv_ex", "inverse", "logdet",
           "lstsq", "matrix_power", "slogdet", "solve", "solve_ex", "solve_triangular"]

_INT32, _INT64 = _dtype_by_name["int32"], _dtype_by_name["int64"]
_SOLVE_FAILED = "The solver failed because the input matrix is singular."
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@composite("linalg_solve_ex")
@with_out
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info): the solution X of ``A X = B`` (``X A = B`` when ``left=False``) and
    the LAPACK status of each matrix (0: solved; >0: ``A`` is singular)."""
    np = _numpy()
    op = "linalg.solve"
    _matrix(A, op, "A", square=True)
    _tensor_arg(B, op, "B", 1)
    _same_dtype(A, B, op)
    n = A.shape[-1]
    # B is a (batch of) vector(s) when it is 1-D or has exactly A's batch shape plus n
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b_shape = tuple(B.shape) + (1,) if vector else tuple(B.shape)
    if b_shape[-2 if left else -1] != n:     # torch: no vector B with left=False
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{b_shape[-2]}x{b_shape[-1]})")
    a, b = _host(A), _host(B).reshape(b_shape)
    if not left:                    # X A = B  <=>  A^T X^T = B^T
        a = np.swapaxes(a, -1, -2)
        b = b if vector else np.swapaxes(b, -1, -2)
    batch = _batch_shape(op, b.shape, a.shape)      # torch names B's size first
    x, info = _guarded(np.linalg.solve, _broadcast(a, batch), _broadcast(b, batch))
    x = x.reshape(batch + x.shape[-2:])
    x = x[..., 0] if vector else (x if left else np.swapaxes(x, -1, -2))
    # info describes A's matrices: its batch shape is A's, not the broadcast one
    info = info.reshape(batch)[(0,) * (len(batch) - (a.ndim - 2))]
    info = info[tuple(slice(0, 1) if k == 1 else slice(None) for k in a.shape[:-2])]
    if check_errors:
        _raise_on_info("torch.linalg.solve", info, lambda k: _SOLVE_FAILED)
    result = _back(x, A)
    if _recording(A, B) and not info.any():   # differentiable where every system solved
        result = _derivatives().solve(A, B, left)
    return _result("linalg_solve_ex", ["result", "info"], result, _back(info, A, _INT32))


@composite("linalg_solve")
@with_out
def solve(A, B, *, left=True, out=None):
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``); ``B`` may be a
    (batch of) vector(s).  Raises LinAlgError when ``A`` is singular."""
    if _recording(A, B):
        return _derivatives().solve(_tensor_arg(A, "linalg.solve", "A", 1),
                                    _tensor_arg(B, "linalg.solve", "B", 1), left)
    result, info = solve_ex(A, B, left=left)
    _raise_on_info("torch.linalg.solve", _host(info), lambda k: _SOLVE_FAILED)
    return result


@composite("linalg_inv_ex")
@with_out
def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): the inverse of each square matrix of ``A`` and its LAPACK status
    (0: inverted; k > 0: the k-th diagonal element of U is zero)."""
    np = _numpy()
    op = "linalg.inv"
    _matrix(A, op, "A", square=True)
    a = _host(A)
    x, info = _guarded(np.linalg.inv, _flat(a))
    info = info.reshape(a.shape[:-2])
    if check_errors:
        _raise_on_info(op, info, _singular)
    inverse = _back(x.reshape(a.shape), A)
    if _recording(A) and not info.any():      # differentiable where every matrix inverted
        inverse = _derivatives().inv(A)
    return _result("linalg_inv_ex", ["inverse", "info"], inverse, _back(info, A, _INT32))


@composite("linalg_inv")
@with_out
def inv(A, *, out=None):
    """The inverse of each square matrix of ``A``; LinAlgError when one is singular."""
    if _recording(A):
        return _derivatives().inv(A)
    return inv_ex(A, check_errors=True).inverse


@composite("inverse")
@with_out
def inverse(input, *, out=None):
    """torch.inverse: linalg.inv under its older name."""
    return inv(input)


@composite("linalg_det")
@with_out
def det(A, *, out=None):
    """The determinant of each square matrix of ``A``."""
    if _recording(A):
        return _derivatives().det(A)
    _matrix(A, "linalg.det", "A", square=True)
    return _back(_numpy().linalg.det(_host(A)), A)


def _slogdet(A, op):
    _matrix(A, op, "A", square=True)
    sign, logabsdet = _numpy().linalg.slogdet(_host(A))
    return sign, logabsdet


@composite("linalg_slogdet")
@with_out
def slogdet(A, *, out=None):
    """(sign, logabsdet): the sign and the log of the absolute value of each determinant."""
    if _recording(A):
        sign, logabsdet = _derivatives().slogdet(A)
        return _result("linalg_slogdet", ["sign", "logabsdet"], sign, logabsdet)
    sign, logabsdet = _slogdet(A, "linalg.slogdet")
    return _result("linalg_slogdet", ["sign", "logabsdet"], _back(sign, A), _back(logabsdet, A))


@composite("logdet")
def logdet(input):
    """The log of each determinant: -inf where it is zero, NaN where it is negative."""
    if _recording(input):
        sign, logabsdet = slogdet(input)
        return _T.where(sign < 0, float("nan"), logabsdet)
    np = _numpy()
    sign, logabsdet = _slogdet(input, "logdet")
    return _back(np.where(sign < 0, np.nan, logabsdet), input)


def _trsm(a, b, lower, trans, unit, left):
    """op(A) X = B (or X op(A) = B) for stacks of triangular ``a`` and matching ``b``, with
    BLAS trsm: a zero on the diagonal gives inf/NaN as in torch, not an error."""
    np = _numpy()
    x = np.zeros(b.shape, dtype=b.dtype)
    if not x.size or not a.shape[-1]:
        return x
    trsm = _blas("trsm", a[0], b[0])
    for i in range(a.shape[0]):
        x[i] = trsm(1.0, a[i], b[i], side=0 if left else 1, lower=int(lower),
                    trans_a=int(trans), diag=int(unit))
    return x


def _triangular_operands(A, B, op, left):
    """Host stacks of A and B broadcast to one batch, checked for ``A X = B`` (or ``X A``)."""
    _matrix(A, op, "A", square=True)
    _matrix(B, op, "B")
    n = A.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    dtype = _T.result_type(A, B)
    a, b = _host(A.to(dtype)), _host(B.to(dtype))
    batch = _batch_shape(op, a.shape, b.shape)
    return _broadcast(a, batch), _broadcast(b, batch), batch, dtype


@composite("linalg_solve_triangular")
@with_out
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``) for triangular ``A``
    (upper or lower as told; ones assumed on the diagonal when ``unitriangular``)."""
    if _recording(A, B):
        return _derivatives().solve_triangular(A, B, upper, left, unitriangular)
    a, b, batch, dtype = _triangular_operands(A, B, "linalg.solve_triangular", left)
    x = _trsm(a, b, not upper, False, unitriangular, left)
    return _back(x.reshape(batch + x.shape[-2:]), A, dtype)


@composite("cholesky_solve")
@with_out
def cholesky_solve(input, input2, upper=False, *, out=None):
    """The solution X of ``A X = B`` given B (``input``) and the Cholesky factor of A
    (``input2``: L with A = L L^T, or U with A = U^T U when ``upper``)."""
    if _recording(input, input2):          # two triangular solves, each differentiable
        lower = input2.transpose(-2, -1) if upper else input2
        y = solve_triangular(lower, input, upper=False)
        return solve_triangular(lower.transpose(-2, -1), y, upper=True)
    a, b, batch, dtype = _triangular_operands(input2, input, "cholesky_solve", True)
    y = _trsm(a, b, not upper, upper, False, True)        # L Y = B   (U^T Y = B)
    x = _trsm(a, y, not upper, not upper, False, True)    # L^T X = Y (U X = Y)
    return _back(x.reshape(batch + x.shape[-2:]), input2, dtype)


@composite("cholesky_inverse")
@with_out
def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of A from its Cholesky factor ``input`` (L, or U when ``upper``)."""
    _matrix(input, "cholesky_inverse", "A", square=True)
    n = input.shape[-1]
    eye = _T.zeros(n, n, dtype=input.dtype, device=input.device)
    eye.diagonal().fill_(1)
    return cholesky_solve(eye, input, upper)


def _lstsq_one(a, b, cond, driver):
    """One least-squares problem: (solution, residual sums of squares or None, rank, s)."""
    np = _numpy()
    m, n = a.shape
    if not (m and n):
        return (np.zeros((n, b.shape[1]), a.dtype), None, 0,
                np.zeros(min(m, n), a.dtype))
    if driver == "gels":             # QR, assumes full rank; B padded to max(m, n) rows
        rhs = np.zeros((max(m, n), b.shape[1]), a.dtype)
        rhs[:m] = b
        x = _lapack("gels", a, rhs)(a, rhs)[1]
        return x[:n], (np.square(x[n:]).sum(0) if m > n else None), n, None
    from scipy.linalg import lstsq as scipy_lstsq
    x, res, rank, s = scipy_lstsq(a, b, cond=cond, lapack_driver=driver, check_finite=False)
    return x, (res if np.size(res) else None), rank, s


@composite("linalg_lstsq")
def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values): the least-squares solution of
    ``A X = B``.  ``driver`` is 'gelsy' (default), 'gelsd', 'gelss' or 'gels'; residuals
    come only for tall full-rank problems (not with gelsy), rank not with gels, singular
    values only with gelsd/gelss — as in torch."""
    np = _numpy()
    op = "torch.linalg.lstsq"
    _tensor_arg(A, op, "A", 1)
    _tensor_arg(B, op, "B", 1)
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_scalar_name(A)} and other's dtype "
                           f"{_scalar_name(B)}")
    _matrix(A, "linalg.lstsq", "A")
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of "
                           f"({', '.join(_LSTSQ_DRIVERS)})")
    if B.dim() < 1 or A.dim() < B.dim() or A.dim() - B.dim() > 1:
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    vector = A.dim() == B.dim() + 1
    m, n = A.shape[-2:]
    a, b = _host(A), _host(B)
    b = b[..., None] if vector else b
    batch = _batch_shape(op, a.shape, b.shape)
    if b.shape[-2] != m:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
    a3, b3 = _broadcast(a, batch), _broadcast(b, batch)
    cond = np.finfo(a.dtype).eps * max(m, n) if rcond is None else rcond
    parts = [_lstsq_one(a3[i], b3[i], cond, driver) for i in range(a3.shape[0])]
    k = b3.shape[-1]
    x = np.stack([p[0] for p in parts]) if parts else np.zeros((0, n, k), a.dtype)
    x = x.reshape(batch + (n, k))
    res = [p[1] for p in parts]
    if driver != "gelsy" and m > n and all(r is not None for r in res):
        residuals = np.stack(res).reshape(batch + (k,)) if res else np.zeros(batch + (k,))
    else:
        residuals = np.zeros(0)
    rank = (np.array([p[2] for p in parts], np.int64).reshape(batch) if driver != "gels"
            else np.zeros(0, np.int64))
    if driver in ("gelsd", "gelss"):
        sv = np.array([p[3] for p in parts], a.dtype).reshape(batch + (min(m, n),))
    else:
        sv = np.zeros(0)
    if vector:                  # the solution drops B's added dim; residuals keep it (torch)
        x = x[..., 0]
    solution, res = _back(x, A), _back(residuals, A)
    if _recording(A, B):        # differentiable through the pseudo-inverse
        from ember.core.linalg.norms import pinv
        bm = B[..., None] if vector else B
        xm = pinv(A) @ bm
        solution = xm[..., 0] if vector else xm
        if residuals.size:      # the squared residual norms, recomputed from the solution
            res = (A @ xm - bm).abs().square().sum(-2)
    return _result("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"],
                   solution, res, _back(rank, A, _INT64), _back(sv, A))


@composite("linalg_matrix_power")
@with_out
def matrix_power(A, n, *, out=None):
    """``A`` multiplied by itself ``n`` times (the identity for 0, powers of the inverse for
    n < 0), by repeated squaring."""
    op = "linalg.matrix_power"
    _matrix(A, op, "A", square=True, floating=False)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{op}(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        A, n = inv(A), -n
    result = None
    square = A
    while n:
        if n & 1:
            result = square if result is None else _T.matmul(result, square)
        n >>= 1
        if n:
            square = _T.matmul(square, square)
    if result is None:
        result = _T.zeros_like(A)
        result.diagonal(0, -2, -1).fill_(1)
    elif result is A:
        result = A.clone()
    return result
