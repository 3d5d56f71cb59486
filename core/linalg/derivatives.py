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
            inner = inner + F * (_mT(V) @ gV)
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


# --- entry points the public functions call when autograd records -----------------------

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
