"""Derivatives of the host-side linear algebra ops (real inputs, batched): backward (vjp)
and forward (jvp) formulas.

Each op runs its LAPACK forward on the host; when autograd records (an input requires grad
and grad mode is on) the public function calls the autograd.Function here instead, whose
backward is written in ember ops (differentiable ops among them), so it runs on any device
and can be differentiated again.  The formulas are the standard matrix-calculus results
PyTorch's documentation also uses: they hold for invertible / well-conditioned inputs
(distinct eigenvalues and singular values for eigh and svd).

Ops that are compositions of these (svdvals, eigvalsh, pinv, lstsq's solution, logdet,
cholesky_solve, cholesky_inverse, matrix_power, the norms) take their derivative from the
composition: see `composite_*` below.  The jvps are the matching forward results
(dX = -X dA X for the inverse, Jacobi's formula for the determinant, the perturbation
formulas for eigh and svd); PyTorch's derivatives.yaml lists the same.  Each Function's
jvp reads what its forward saved."""

from ember.core import _tensor as _T
from ember.core.factories import eye
from ember.core.function import Function, differentiating_backward
from ember.core.linalg import decompositions as _dec
from ember.core.linalg import factorizations as _fac
from ember.core.linalg import solvers as _sol
from ember.core.linalg._common import _result
from ember.core.shapes import cat, diag_embed

__all__ = ["cholesky", "det", "eigh", "inv", "qr", "slogdet", "solve", "solve_triangular",
           "svd"]


def _mT(x):
    return x.transpose(-2, -1)


def _as_matrix(x):
    return x[..., None, None]


def _tri_solve(A, B, upper, left=True, unitriangular=False):
    return _sol.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


class _Inv(Function):
    @staticmethod
    def forward(ctx, A):
        X = _sol.inv(A)
        ctx.save_for_backward(X)
        return X

    @staticmethod
    def backward(ctx, g):
        X, = ctx.saved_tensors
        Xt = _mT(X)
        return -(Xt @ g @ Xt)

    @staticmethod
    def jvp(ctx, dA):
        X, = ctx.saved_tensors
        return -(X @ dA @ X)


class _Det(Function):
    @staticmethod
    def forward(ctx, A):
        d = _sol.det(A)
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors
        # a singular matrix gets a zero gradient, as PyTorch's (inv would raise)
        A_inv, info = _sol.inv_ex(A)
        return _T.where((info == 0)[..., None, None], _as_matrix(g * d) * _mT(A_inv), 0.0)

    @staticmethod
    def jvp(ctx, dA):
        A, d = ctx.saved_tensors
        return d * (_mT(inv(A)) * dA).sum((-2, -1))


class _Slogdet(Function):
    @staticmethod
    def forward(ctx, A):
        sign, logabsdet = _sol.slogdet(A)
        ctx.save_for_backward(A)
        ctx.mark_non_differentiable(sign)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, g_sign, g_logabsdet):
        A, = ctx.saved_tensors
        if differentiating_backward(A, g_logabsdet):
            return _as_matrix(g_logabsdet) * _mT(inv(A))   # raises if singular (PyTorch too)
        # PyTorch's A^-T g: a solve with the LU factors of A^T, so a singular matrix gives
        # the same inf/NaN entries (logabsdet is not differentiable there) instead of raising
        LU, pivots, _ = _fac.lu_factor_ex(_mT(A))
        return _fac.lu_solve(LU, pivots, diag_embed(g_logabsdet.unsqueeze(-1).expand(
            pivots.shape)))

    @staticmethod
    def jvp(ctx, dA):
        A, = ctx.saved_tensors
        return None, (_mT(inv(A)) * dA).sum((-2, -1))


class _Solve(Function):
    """X with A X = B (left) or X A = B; B may be a (batch of) vector(s)."""

    @staticmethod
    def forward(ctx, A, B, left, vector):
        X = _sol.solve(A, B, left=left)
        ctx.save_for_backward(A, X)
        ctx.left, ctx.vector = left, vector
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        if ctx.vector:
            g, X = g[..., None], X[..., None]
        gB = solve(_mT(A), g, left=ctx.left)
        gA = -(gB @ _mT(X)) if ctx.left else -(_mT(X) @ gB)
        return gA, (gB[..., 0] if ctx.vector else gB), None, None

    @staticmethod
    def jvp(ctx, dA, dB, _left, _vector):
        """A dX = dB - dA X (left), dX A = dB - X dA (right)."""
        A, X = ctx.saved_tensors
        if ctx.vector:
            dB, X = dB[..., None], X[..., None]
        rhs = dB - (dA @ X if ctx.left else X @ dA)
        dX = solve(A, rhs, left=ctx.left)
        return dX[..., 0] if ctx.vector else dX


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        X = _sol.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
        ctx.save_for_backward(A, X)
        ctx.opts = upper, left, unitriangular
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.opts
        gB = solve_triangular(_mT(A), g, not upper, left, unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
            # only the triangle A's values are read from gets a gradient
            diag = 1 if unit else 0
            gA = gA.triu(diag) if upper else gA.tril(-diag)
        return gA, gB, None, None, None

    @staticmethod
    def jvp(ctx, dA, dB, *_):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.opts
        diag = 1 if unit else 0
        dA = dA.triu(diag) if upper else dA.tril(-diag)     # the triangle A is read from
        return solve_triangular(A, dB - (dA @ X if left else X @ dA), upper, left, unit)


def _phi(X):
    """The lower triangle of X with its diagonal halved."""
    return X.tril() - 0.5 * X.tril().triu()


class _Cholesky(Function):
    """L (lower) with A = L L^T; the gradient is symmetric (A's lower triangle is read,
    torch returns the symmetrized gradient)."""

    @staticmethod
    def forward(ctx, A):
        L = _dec.cholesky(A)
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx, g):
        L, = ctx.saved_tensors
        P = _phi(_mT(L) @ g.tril())
        gA = _tri_solve(L, _tri_solve(_mT(L), P, True), False, left=False)  # L^-T P L^-1
        return 0.5 * (gA + _mT(gA))

    @staticmethod
    def jvp(ctx, dA):
        """dL = L phi(L^-1 dA L^-T)."""
        L, = ctx.saved_tensors
        inner = _tri_solve(_mT(L), _tri_solve(L, dA, False), True, left=False)
        return L @ _phi(inner)


def _copyltu(M):
    """The symmetric matrix with M's lower triangle."""
    return M.tril() + _mT(M.tril(-1))


def _qr_square_or_tall(Q, R, gQ, gR):
    """gA for A = Q R with A m x n, m >= n (R square, invertible)."""
    M = R @ _mT(gR) - _mT(gQ) @ Q
    return _tri_solve(_mT(R), gQ + Q @ _copyltu(M), False, left=False)    # (...) R^-T


class _Qr(Function):
    """Reduced QR (complete QR when m <= n is the same factorization)."""

    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _dec.qr(A, mode)
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if m >= n:
            return _qr_square_or_tall(Q, R, gQ, gR), None
        # wide: A = Q [U | V]; X = Q U is a square QR and Y = Q V follows it
        U, V = R[..., :m], R[..., m:]
        gU, gV = gR[..., :m], gR[..., m:]
        Y = Q @ V
        gX = _qr_square_or_tall(Q, U, gQ + Y @ _mT(gV), gU)
        return cat([gX, Q @ gV], -1), None

    @staticmethod
    def jvp(ctx, dA, _mode):
        """With dX = Q^T dA R^-1 = Omega + dR R^-1 (Omega skew, dR R^-1 upper): Omega from
        dX's strict lower triangle, dR = (dX - Omega) R, dQ = dA R^-1 - Q (dX - Omega)."""
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if m < n:
            raise NotImplementedError("Trying to use forward AD with linalg_qr that does not "
                                      "support it because it has not been implemented yet "
                                      "for inputs with more columns than rows.")
        dAR = _tri_solve(R, dA, True, left=False)                   # dA R^-1
        dX = _mT(Q) @ dAR
        low = dX.tril(-1)
        omega = low - _mT(low)
        dR = (dX - omega) @ R
        return dAR - Q @ (dX - omega), dR


class _Eigh(Function):
    @staticmethod
    def forward(ctx, A, UPLO):
        w, V = _dec.eigh(A, UPLO)
        ctx.save_for_backward(w, V)
        ctx.set_materialize_grads(False)      # eigenvalues alone: no 1/(w_j - w_i) term
        return w, V

    @staticmethod
    def backward(ctx, gw, gV):
        w, V = ctx.saved_tensors
        inner = diag_embed(gw) if gw is not None else _T.zeros_like(V)
        if gV is not None:      # repeated eigenvalues make this term inf, as PyTorch's
            diff = w[..., None, :] - w[..., :, None]         # w_j - w_i
            ident = eye(w.shape[-1], dtype=w.dtype, device=w.device)
            F = _T.where(ident == 1, 0.0, 1.0 / (diff + ident))
            # only V^T gV's skew part moves orthonormal V: the projection makes the gradient
            # symmetric (as PyTorch's), so a non-symmetric leaf gets the same one
            VgV = _mT(V) @ gV
            inner = inner + F * (0.5 * (VgV - _mT(VgV)))
        return V @ inner @ _mT(V), None

    @staticmethod
    def jvp(ctx, dA, _uplo):
        """dw = diag(V^T dA V), dV = V (F * (V^T dA V)), F_ij = 1 / (w_j - w_i)."""
        w, V = ctx.saved_tensors
        P = _mT(V) @ dA @ V
        diff = w[..., None, :] - w[..., :, None]
        ident = eye(w.shape[-1], dtype=w.dtype, device=w.device)
        F = _T.where(ident == 1, 0.0, 1.0 / (diff + ident))
        return P.diagonal(0, -2, -1), V @ (F * P)


class _Svd(Function):
    """Reduced SVD (full_matrices=True: the extra singular vectors get no gradient)."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = _dec.svd(A, full_matrices)
        ctx.save_for_backward(U, S, Vh)
        ctx.set_materialize_grads(False)      # singular values alone: no 1/(s_j^2 - s_i^2)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if gU is None and gVh is None:        # PyTorch's svdvals rule: U diag(gS) Vh
            return U[..., :k] @ diag_embed(gS) @ Vh[..., :k, :], None
        gS = _T.zeros_like(S) if gS is None else gS
        gU = _T.zeros_like(U) if gU is None else gU
        gVh = _T.zeros_like(Vh) if gVh is None else gVh
        U, Vh, gU, gVh = U[..., :k], Vh[..., :k, :], gU[..., :k], gVh[..., :k, :]
        V, gV = _mT(Vh), _mT(gVh)
        UgU, VgV = _mT(U) @ gU, _mT(V) @ gV
        S2 = S * S
        ident = eye(k, dtype=S.dtype, device=S.device)
        E = S2[..., None, :] - S2[..., :, None]              # S_j^2 - S_i^2
        E = _T.where(ident == 1, 1.0, E)
        J = ((UgU - _mT(UgU)) / E) * S[..., None, :] + S[..., :, None] * ((VgV - _mT(VgV)) / E)
        inner = _T.where(ident == 1, 0.0, J) + diag_embed(gS)
        gA = U @ inner @ Vh
        m, n = U.shape[-2], V.shape[-2]
        if m > k:           # U's columns do not span: the part of gU outside them
            gA = gA + ((gU - U @ UgU) / S[..., None, :]) @ Vh
        if n > k:
            gA = gA + U @ _mT((gV - V @ VgV) / S[..., None, :])
        return gA, None

    @staticmethod
    def jvp(ctx, dA, _full):
        """With dP = U^T dA V and F_ij = 1 / (s_j^2 - s_i^2): dS = diag(dP),
        dU = U (F * (dP S + S dP^T)) + (I - U U^T) dA V / S,
        dV = V (F * (S dP + dP^T S)) + (I - V V^T) dA^T U / S."""
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if U.shape[-1] != k or Vh.shape[-2] != k:
            raise NotImplementedError("Trying to use forward AD with linalg_svd that does not "
                                      "support it because it has not been implemented yet "
                                      "for full_matrices=True (use full_matrices=False).")
        V = _mT(Vh)
        dP = _mT(U) @ dA @ V
        S2 = S * S
        ident = eye(k, dtype=S.dtype, device=S.device)
        E = S2[..., None, :] - S2[..., :, None]
        F = _T.where(ident == 1, 0.0, 1.0 / _T.where(ident == 1, 1.0, E))
        Srow, Scol = S[..., None, :], S[..., :, None]
        dU = U @ (F * (dP * Srow + Scol * _mT(dP)))
        dU = dU + (dA @ V - U @ dP) / Srow
        dV = V @ (F * (Scol * dP + _mT(dP) * Srow))
        dV = dV + (_mT(dA) @ U - V @ _mT(dP)) / Srow
        return dU, dP.diagonal(0, -2, -1), _mT(dV)


# --- LU: A = P L U, L unit lower (m x k), U upper (k x n), k = min(m, n) ------------------
# For a square A, dA = P (dL U + L dU) splits X = L^-1 P^T dA U^-1 = L^-1 dL + dU U^-1 into
# its strictly lower part (L^-1 dL, as L's diagonal is fixed) and its upper part (dU U^-1).
# A wide A = P L [U1 U2] is that for P L U1 plus U2 = L^-1 P^T A2; a tall A = P [L1; L2] U
# is that for P L1 U plus L2 = P^T A2 U^-1.

def _lu_square_vjp(L, U, gL, gU):
    """P^T gA of a square LU from the grads of L and U: L^-T M U^-T, with M the strictly
    lower part of L^T gL plus the upper part of gU U^T."""
    M = (_mT(L) @ gL).tril(-1) + (gU @ _mT(U)).triu()
    return _tri_solve(_mT(U), _tri_solve(_mT(L), M, True, unitriangular=True), False,
                      left=False)


def _lu_vjp(P, L, U, gLU):
    """gA of lu_factor from the grad of its packed LU (L's part below the diagonal)."""
    m, n = gLU.shape[-2:]
    k = min(m, n)
    gL, gU = gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu()
    if m == n:
        return P @ _lu_square_vjp(L, U, gL, gU)
    if m < n:
        U1, U2 = U[..., :m], U[..., m:]
        gA2 = _tri_solve(_mT(L), gU[..., m:], True, unitriangular=True)      # L^-T gU2
        gA1 = _lu_square_vjp(L, U1, gL - gA2 @ _mT(U2), gU[..., :m])
        return P @ cat([gA1, gA2], -1)
    L1, L2 = L[..., :n, :], L[..., n:, :]
    gA2 = _tri_solve(_mT(U), gL[..., n:, :], False, left=False)              # gL2 U^-T
    gA1 = _lu_square_vjp(L1, U, gL[..., :n, :], gU - _mT(L2) @ gA2)
    return P @ cat([gA1, gA2], -2)


def _lu_square_jvp(L, U, dA):
    """(dL, dU) of a square LU from P^T dA."""
    X = _tri_solve(U, _tri_solve(L, dA, False, unitriangular=True), True, left=False)
    return L @ X.tril(-1), X.triu() @ U


def _lu_jvp(P, L, U, dA):
    """The tangent of the packed LU from A's tangent."""
    m, n = dA.shape[-2:]
    dA = _mT(P) @ dA
    if m <= n:
        dL, dU1 = _lu_square_jvp(L, U[..., :m], dA[..., :m])
        if m == n:
            return dL + dU1
        dU2 = _tri_solve(L, dA[..., m:] - dL @ U[..., m:], False, unitriangular=True)
        return cat([dL, _T.zeros_like(dU2)], -1) + cat([dU1, dU2], -1)
    L1, L2 = L[..., :n, :], L[..., n:, :]
    dL1, dU = _lu_square_jvp(L1, U, dA[..., :n, :])
    dL2 = _tri_solve(U, dA[..., n:, :] - L2 @ dU, True, left=False)
    return cat([dL1, dL2], -2) + cat([dU, _T.zeros_like(dL2)], -2)


class _LuFactor(Function):
    @staticmethod
    def forward(ctx, A):
        LU, pivots, info = _fac._lu_factor_host(A)
        ctx.save_for_backward(LU, pivots)
        ctx.mark_non_differentiable(pivots, info)
        return LU, pivots, info

    @staticmethod
    def backward(ctx, gLU, _gpivots, _ginfo):
        LU, pivots = ctx.saved_tensors
        return _lu_vjp(*_fac.lu_unpack(LU, pivots), gLU)

    @staticmethod
    def jvp(ctx, dA):
        LU, pivots = ctx.saved_tensors
        return _lu_jvp(*_fac.lu_unpack(LU, pivots), dA), None, None


class _LuSolve(Function):
    """X with op(A) X = B (``left``) or X op(A) = B, op(A) = A^T when ``adjoint``, from
    A's LU factors; the gradient reaches both B and the packed LU."""

    @staticmethod
    def forward(ctx, LU, pivots, B, left, adjoint):
        X = _fac._lu_solve_host(LU, pivots, B, left, adjoint)
        ctx.save_for_backward(LU, pivots, X)
        ctx.left, ctx.adjoint = left, adjoint
        return X

    @staticmethod
    def backward(ctx, g):
        LU, pivots, X = ctx.saved_tensors
        gB = lu_solve(LU, pivots, g, left=ctx.left, adjoint=not ctx.adjoint)
        gLU = None
        if ctx.needs_input_grad[0]:
            g_op = -(gB @ _mT(X)) if ctx.left else -(_mT(X) @ gB)
            gA = _mT(g_op) if ctx.adjoint else g_op
            P, L, U = _fac.lu_unpack(LU, pivots)
            PgA = _mT(P) @ gA               # dA = P (dL U + L dU), L's part strictly lower
            gLU = (PgA @ _mT(U)).tril(-1) + (_mT(L) @ PgA).triu()
        return gLU, None, gB if ctx.needs_input_grad[2] else None, None, None

    @staticmethod
    def jvp(ctx, dLU, _dpivots, dB, _left, _adjoint):
        LU, pivots, X = ctx.saved_tensors
        rhs = _T.zeros_like(X) if dB is None else dB
        if dLU is not None:
            P, L, U = _fac.lu_unpack(LU, pivots)
            dA = P @ (dLU.tril(-1) @ U + L @ dLU.triu())
            d_op = _mT(dA) if ctx.adjoint else dA
            rhs = rhs - (d_op @ X if ctx.left else X @ d_op)
        return lu_solve(LU, pivots, rhs, left=ctx.left, adjoint=ctx.adjoint)


# --- entry points the public functions call when autograd records -----------------------

def lu_factor_ex(A):
    return _LuFactor.apply(A)


def lu_solve(LU, pivots, B, left=True, adjoint=False):
    return _LuSolve.apply(LU, pivots, B, left, adjoint)


def inv(A):
    return _Inv.apply(A)


def det(A):
    return _Det.apply(A)


def slogdet(A):
    return _Slogdet.apply(A)


def solve(A, B, left=True):
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    return _Solve.apply(A, B, left, vector)


def solve_triangular(A, B, upper, left=True, unitriangular=False):
    return _SolveTriangular.apply(A, B, upper, left, unitriangular)


def cholesky(A, upper=False):
    L = _Cholesky.apply(A)
    return _mT(L) if upper else L


def qr(A, mode="reduced"):
    m, n = A.shape[-2:]
    if mode == "r" or (mode == "complete" and m > n):
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr." if mode == "r" else
                           "The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    return _result("linalg_qr", ["Q", "R"], *_Qr.apply(A, mode))


def eigh(A, UPLO="L"):
    return _result("linalg_eigh", ["eigenvalues", "eigenvectors"], *_Eigh.apply(A, UPLO))


def svd(A, full_matrices=True):
    return _result("linalg_svd", ["U", "S", "Vh"], *_Svd.apply(A, full_matrices))
