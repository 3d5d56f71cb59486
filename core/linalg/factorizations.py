"""LU, LDL^T and Householder (QR) factorizations and the general eigendecomposition:
getrf/getrs, sytrf/sytrs, geqrf and geev through NumPy/SciPy on the host; the products of
Householder reflectors (householder_product, ormqr) are composites, so they differentiate.

Gradients: lu_factor (so lu and lu_unpack's L and U) and lu_solve through their
autograd Functions in derivatives.py; householder_product/ormqr through their ops;
ldl_factor and eig refuse to record (NotImplementedError) rather than return a result
without a derivative."""

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core.linalg._common import (
    _back,
    _batch_shape,
    _broadcast,
    _derivatives,
    _flat,
    _host,
    _lapack,
    _matrix,
    _numpy,
    _raise_on_info,
    _recording,
    _result,
    _same_dtype,
    with_out,
)

__all__ = ["eig", "eigvals", "geqrf", "householder_product", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "lu_unpack", "orgqr",
           "ormqr"]

_INT32 = _dtype_by_name["int32"]


def _no_derivative(op, *tensors):
    if _recording(*tensors):
        raise NotImplementedError(f"ember: the derivative of {op} is not implemented "
                                  f"(call it on detached tensors or under no_grad)")


def _lu_singular(k):
    return (f"U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. "
            f"If you still want to perform the factorization, consider calling "
            f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


# -- LU ---------------------------------------------------------------------------------------

@composite("linalg_lu_factor_ex")
@with_out
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): P A = L U packed in one matrix (L's unit diagonal implied),
    LAPACK's 1-based int32 row swaps, and getrf's status (k > 0: U[k-1, k-1] is zero)."""
    op = "torch.linalg.lu_factor_ex"
    _matrix(A, "linalg.lu_factor", "A")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    LU, pivots, info = _derivatives().lu_factor_ex(A) if _recording(A) else \
        _lu_factor_host(A)
    if check_errors:
        _raise_on_info(op, _host(info), lambda k: _lu_singular(k))
    return _result("linalg_lu_factor_ex", ["LU", "pivots", "info"], LU, pivots, info)


def _lu_factor_host(A):
    """getrf on each matrix of ``A``: (LU, pivots, info) tensors."""
    np = _numpy()
    a = _host(A)
    stack = _flat(a)
    m, n = a.shape[-2:]
    lu = np.empty_like(stack)
    piv = np.empty((stack.shape[0], min(m, n)), dtype=np.int32)
    info = np.zeros(stack.shape[0], dtype=np.int32)
    if stack.shape[0] and min(m, n):
        getrf = _lapack("getrf", stack[0])
        for i, mat in enumerate(stack):
            lu[i], p, info[i] = getrf(mat)
            piv[i] = p + 1
    return (_back(lu.reshape(a.shape), A),
            _back(piv.reshape(a.shape[:-2] + (min(m, n),)), A, _INT32),
            _back(info.reshape(a.shape[:-2]), A, _INT32))


@composite("linalg_lu_factor")
@with_out
def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of ``A`` (see lu_factor_ex); LinAlgError when a U is singular."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _raise_on_info("torch.linalg.lu_factor", _host(info), _lu_singular)
    return _result("linalg_lu_factor", ["LU", "pivots"], LU, pivots)


def _permutation(np, piv, m):
    """The permutation matrix P with A = P L U from LAPACK's 1-based row swaps."""
    perm = np.arange(m)
    for i, p in enumerate(piv):
        j = int(p) - 1
        perm[i], perm[j] = perm[j], perm[i]
    P = np.zeros((m, m))
    P[perm, np.arange(m)] = 1
    return P


@composite("lu_unpack")
@with_out
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's packed result: A = P L U (empty tensors for the parts not
    asked for)."""
    np = _numpy()
    _tensor_arg(LU_data, "lu_unpack", "LU_data", 1)
    _tensor_arg(LU_pivots, "lu_unpack", "LU_pivots", 2)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = _T.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    L = U = P = empty
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + _eye_like(LU_data, m, k)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        piv = _host(LU_pivots).reshape(-1, LU_pivots.shape[-1])
        mats = np.stack([_permutation(np, p, m) for p in piv]) if piv.shape[0] else \
            np.zeros((0, m, m))
        P = _back(mats.reshape(tuple(LU_data.shape[:-2]) + (m, m)), LU_data)
    return _result("lu_unpack", ["P", "L", "U"], P, L, U)


def _eye_like(t, m, k):
    eye = _T.zeros(m, k, dtype=t.dtype, device=t.device)
    eye.diagonal().fill_(1)
    return eye


@composite("linalg_lu")
@with_out
def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: L unit lower triangular (m x k), U upper (k x n)."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    P, L, U = lu_unpack(LU, pivots)
    return _result("linalg_lu", ["P", "L", "U"], P, L, U)


def _getrs(np, lu, piv, b, trans):
    getrs = _lapack("getrs", lu[0], b[0])
    out = np.empty_like(b)
    for i in range(b.shape[0]):
        out[i], info = getrs(lu[i], piv[i] - 1, b[i], trans=trans)
    return out


def _lu_solve_host(LU, pivots, B, left, adjoint):
    np = _numpy()
    op = "linalg.lu_solve"
    _matrix(LU, op, "LU", square=True)
    _tensor_arg(B, op, "B", 3)
    _same_dtype(LU, B, op, ("LU", "B"))
    if pivots.dtype != _INT32:
        raise RuntimeError(f"{op}: pivots should be a Tensor of scalar type torch.int32")
    lu_h, b_h = _host(LU), _host(B)
    piv = _host(pivots)
    if not left:                    # X A = B  <=>  A^T X^T = B^T
        b_h = np.swapaxes(b_h, -1, -2)
        adjoint = not adjoint
    if lu_h.shape[-1] != b_h.shape[-2]:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({lu_h.shape[-2]}x"
                           f"{lu_h.shape[-1]} and {b_h.shape[-2]}x{b_h.shape[-1]})")
    batch = _batch_shape(op, b_h.shape, lu_h.shape)
    lu_s = _broadcast(lu_h, batch)
    b_s = _broadcast(b_h, batch)
    piv_s = np.ascontiguousarray(np.broadcast_to(piv, tuple(batch) + piv.shape[-1:])).reshape(
        -1, piv.shape[-1])
    x = _getrs(np, lu_s, piv_s, b_s, 1 if adjoint else 0) if b_s.size else b_s.copy()
    x = x.reshape(tuple(batch) + b_h.shape[-2:])
    if not left:
        x = np.swapaxes(x, -1, -2)
    return _back(np.ascontiguousarray(x), B)


@composite("linalg_lu_solve")
@with_out
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``; A^H when ``adjoint``)
    from A's LU factorization (``lu_factor``'s LU and pivots)."""
    if _recording(LU, B):
        return _derivatives().lu_solve(LU, pivots, B, left, adjoint)
    return _lu_solve_host(LU, pivots, B, left, adjoint)


# -- LDL^T ------------------------------------------------------------------------------------

@with_out
def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): Bunch-Kaufman A = L D L^T of symmetric ``A`` (its lower triangle
    read) in sytrf's compact form (L below the diagonal, D's blocks on it), LAPACK's pivots
    (negative for 2x2 blocks) and sytrf's status."""
    np = _numpy()
    op = "torch.linalg.ldl_factor_ex"
    _matrix(A, "linalg.ldl_factor_ex", "A", square=True)
    _no_derivative("linalg.ldl_factor", A)
    a = _host(A)
    stack = _flat(a)
    n = a.shape[-1]
    ld = np.empty_like(stack)
    piv = np.empty((stack.shape[0], n), dtype=np.int32)
    info = np.zeros(stack.shape[0], dtype=np.int32)
    if stack.shape[0] and n:
        sytrf = _lapack("sytrf", stack[0])
        for i, mat in enumerate(stack):
            ldu, p, info[i] = sytrf(mat, lower=1)
            ld[i] = np.tril(ldu)
            piv[i] = p
    info = info.reshape(a.shape[:-2])
    if check_errors:
        _raise_on_info(op, info, lambda k: f"The factorization could not be completed "
                       f"because the input is singular (D[{k}, {k}] is zero).")
    return _result("linalg_ldl_factor_ex", ["LD", "pivots", "info"],
                   _back(ld.reshape(a.shape), A), _back(piv.reshape(a.shape[:-2] + (n,)), A,
                                                        _INT32), _back(info, A, _INT32))


@with_out
def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of symmetric ``A`` (see ldl_factor_ex); LinAlgError when singular."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_on_info("torch.linalg.ldl_factor", _host(info),
                   lambda k: f"The factorization could not be completed because the input is "
                             f"singular (D[{k}, {k}] is zero).")
    return _result("linalg_ldl_factor", ["LD", "pivots"], LD, pivots)


@with_out
def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """The solution X of ``A X = B`` from ldl_factor's LD and pivots."""
    np = _numpy()
    op = "torch.linalg.ldl_solve"
    _matrix(LD, op, "LD", square=True)
    _same_dtype(LD, B, op, ("LD", "B"))
    _no_derivative("linalg.ldl_solve", LD, B)
    ld, b, piv = _host(LD), _host(B), _host(pivots)
    batch = _batch_shape(op, b.shape, ld.shape)
    ld_s, b_s = _broadcast(ld, batch), _broadcast(b, batch)
    piv_s = np.ascontiguousarray(np.broadcast_to(piv, tuple(batch) + piv.shape[-1:])).reshape(
        -1, piv.shape[-1])
    x = np.empty_like(b_s)
    if b_s.size:
        sytrs = _lapack("sytrs", ld_s[0], b_s[0])
        for i in range(b_s.shape[0]):
            x[i], _ = sytrs(ld_s[i], piv_s[i], b_s[i], lower=1)
    return _back(x.reshape(tuple(batch) + b.shape[-2:]), B)


# -- Householder reflectors -----------------------------------------------------------------

@with_out
def geqrf(input, *, out=None):
    """(a, tau): LAPACK's geqrf QR, R on and above the diagonal of ``a``, the Householder
    vectors below it, their scales in ``tau``."""
    np = _numpy()
    _matrix(input, "geqrf", "input")
    _no_derivative("geqrf", input)
    a = _host(input)
    stack = _flat(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    out_a = np.empty_like(stack)
    tau = np.empty((stack.shape[0], k), dtype=stack.dtype)
    if stack.shape[0] and k:
        fn = _lapack("geqrf", stack[0])
        for i, mat in enumerate(stack):
            out_a[i], tau[i], _, _ = fn(mat)
    else:
        out_a[...] = stack
    return _result("geqrf", ["a", "tau"], _back(out_a.reshape(a.shape), input),
                   _back(tau.reshape(a.shape[:-2] + (k,)), input))


def _reflectors(A, tau, op):
    _matrix(A, op, "A" if op.startswith("linalg") else "input")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if k > n:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tuple(A.shape[:-2]) != tuple(tau.shape[:-1]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {tuple(tau.shape[:-1])}")
    unit = _eye_like(A, m, n)
    below = A.tril(-1) + unit            # column i: the reflector v_i (1 at row i)
    return [below[..., :, i:i + 1] for i in range(k)], [tau[..., i:i + 1, None]
                                                         for i in range(k)]


def _apply(vs, taus, C, reverse, adjoint):
    """H_1 ... H_k C (``reverse``: H_k ... H_1 C) with H_i = I - tau_i v_i v_i^H."""
    order = range(len(vs)) if reverse else range(len(vs) - 1, -1, -1)
    for i in order:
        v, t = vs[i], taus[i]
        w = v.transpose(-2, -1) @ C
        C = C - (t.conj() if adjoint else t) * (v @ w)
    return C


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H with v_i the i-th
    column of ``A`` below the diagonal (1 on it): LAPACK's orgqr."""
    vs, taus = _reflectors(A, tau, "torch.linalg.householder_product")
    result = _apply(vs, taus, _eye_like(A, A.shape[-2], A.shape[-1]).expand(A.shape), False,
                    False)
    return result if out is None else _T._result_out(result, out, "householder_product")


def orgqr(input, tau):
    """householder_product under its LAPACK name."""
    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q @ other (``other @ Q`` when not ``left``; Q^H when ``transpose``) with Q the m x m
    product of the Householder reflectors in ``input``/``tau`` (geqrf's output)."""
    _matrix(input, "ormqr", "input")
    vs, taus = _reflectors(input, tau, "ormqr") if input.shape[-2] >= input.shape[-1] else \
        (None, None)
    if vs is None:
        raise RuntimeError("torch.ormqr: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if left:
        result = _apply(vs, taus, other, transpose, transpose)
    else:               # other @ Q = (Q^H other^H)^H
        result = _apply(vs, taus, other.transpose(-2, -1), not transpose,
                        not transpose).transpose(-2, -1)
    return result if out is None else _T._result_out(result, out, "ormqr")


# -- general eigendecomposition ---------------------------------------------------------------

def _eig_host(A, op, vectors):
    np = _numpy()
    _matrix(A, op, "A", square=True)
    _no_derivative(op, A)
    a = _host(A)
    if not np.isfinite(a).all():
        raise RuntimeError(f"torch.{op}: input tensor should not contain infs or NaNs.")
    cdtype = A.dtype.to_complex() if not A.is_complex() else A.dtype
    w, v = np.linalg.eig(a) if vectors else (np.linalg.eigvals(a), None)
    np_c = np.complex64 if cdtype.name == "complex64" else np.complex128
    w = _back(np.ascontiguousarray(w.astype(np_c)), A, cdtype)
    if v is not None:
        v = _back(np.ascontiguousarray(v.astype(np_c)), A, cdtype)
    return w, v


@with_out
def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of each square matrix of ``A`` (complex, unnormalized
    order as LAPACK's geev returns them; eigenvectors of unit norm)."""
    w, v = _eig_host(A, "linalg.eig", True)
    return _result("linalg_eig", ["eigenvalues", "eigenvectors"], w, v)


@with_out
def eigvals(A, *, out=None):
    """The (complex) eigenvalues of each square matrix of ``A``."""
    return _eig_host(A, "linalg.eigvals", False)[0]
