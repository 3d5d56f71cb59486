"""``ember.lobpcg``: the k extreme eigenpairs of a symmetric (generalised) eigenproblem
A X = B X diag(E) by LOBPCG (Knyazev's locally optimal block preconditioned conjugate
gradient): each step a Rayleigh-Ritz projection onto [X, W, P] (W = iK R, the
preconditioned residuals, P the previous search directions), the basis B-orthonormalised
through its Gram matrix's eigendecomposition (dropping dependent directions).
Convergence is PyTorch's backward-stable test ``|r_i| < tol |x_i| (|A| + |e_i| |B|)``.

Gradients flow to A (and B) through the eigenvalues; a gradient reaching the returned
eigenvectors raises NotImplementedError."""
import ember

__all__ = ["lobpcg"]


def _matmul(M, x):
    return x if M is None else M @ x


def _b_orthonormal(S, B, eps):
    """An orthonormal basis (in the B inner product) of S's columns' span."""
    gram = S.mT @ _matmul(B, S)
    gram = (gram + gram.mT) / 2
    vals, vecs = ember.linalg.eigh(gram)
    keep = vals > eps * vals.abs().max()
    vals, vecs = vals[keep], vecs[:, keep]
    return S @ (vecs / vals.sqrt())


def _ritz(A, S, n, largest):
    """The n Ritz pairs of A on span(S) (S B-orthonormal), extreme first."""
    T = S.mT @ (A @ S)
    vals, vecs = ember.linalg.eigh((T + T.mT) / 2)
    order = ember.arange(vals.shape[0] - 1, -1, -1) if largest else ember.arange(vals.shape[0])
    vals, vecs = vals[order], vecs[:, order]
    return vals, vecs


def _run(A, B, X, iK, k, n, niter, tol, largest):
    eps = ember.finfo(A.dtype).eps * A.shape[-1]
    a_norm = ember.linalg.matrix_norm(A, 2)
    b_norm = 1.0 if B is None else ember.linalg.matrix_norm(B, 2)
    X = _b_orthonormal(X, B, eps)
    vals, vecs = _ritz(A, X, n, largest)
    X, E = X @ vecs[:, :n], vals[:n]
    P = None
    for _ in range(niter):
        R = A @ X - _matmul(B, X) * E
        rerr = ember.linalg.vector_norm(R, dim=0) / (
            ember.linalg.vector_norm(X, dim=0) * (a_norm + E.abs() * b_norm))
        if bool((rerr[:k] < tol).all()):
            break
        W = _matmul(iK, R)
        S = ember.cat([X, W] + ([] if P is None else [P]), dim=1)
        S = _b_orthonormal(S, B, eps)
        vals, vecs = _ritz(A, S, n, largest)
        X_new = S @ vecs[:, :n]
        # the new search directions: the part of the step outside span(X)
        P = X_new - X @ (X.mT @ _matmul(B, X_new))
        X, E = X_new, vals[:n]
    return E[:k], X[:, :k]


class _LOBPCG(ember.autograd.Function):
    @staticmethod
    def forward(ctx, A, B, X, iK, k, n, niter, tol, largest):
        E, V = _run(A, B, X, iK, k, n, niter, tol, largest)
        ctx.save_for_backward(V, E)
        ctx.has_B = B is not None
        ctx.mark_non_differentiable()
        return E, V

    @staticmethod
    def backward(ctx, gE, gV):
        if gV is not None and bool((gV != 0).any()):
            raise NotImplementedError("lobpcg: gradients through the eigenvectors are not "
                                      "implemented (the eigenvalues' are)")
        V, E = ctx.saved_tensors
        if gE is None:
            return (None,) * 9
        # d e_i = v_i^T (dA - e_i dB) v_i  for B-normalised v_i
        gA = (V * gE) @ V.mT
        gB = -(V * (gE * E)) @ V.mT if ctx.has_B else None
        return (gA + gA.mT) / 2, None if gB is None else (gB + gB.mT) / 2, None, None, \
            None, None, None, None, None


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (or smallest, ``largest=False``) eigenpairs (E, X) of the symmetric
    A (A X = B X diag(E) with a symmetric positive-definite B), searching an ``n``-column
    block (``X`` its start, random otherwise), preconditioned by ``iK``, for at most
    ``niter`` steps (1000; -1: until converged) to relative residual ``tol``.  Batched A
    runs each matrix in turn.  ``method``/``tracker``/``ortho_*`` are accepted for
    PyTorch's signature (one orthogonalisation is used)."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and tuple(A.shape) != tuple(B.shape):
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.is_floating_point() else ember.float32
    if tol is None:
        tol = {ember.float32: 1.2e-07, ember.float64: 2.23e-16}.get(dtype, 1.2e-07) ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows "
                         f"(={m}) is smaller than 3 x the number of requested eigenpairs "
                         f"(={n})")
    niter = 1000 if niter is None else (10 ** 9 if niter < 0 else niter)
    largest = True if largest is None else largest
    if A.dim() > 2:
        batch = A.shape[:-2]
        flat_a = A.reshape(-1, m, m)
        flat_b = None if B is None else B.reshape(-1, m, m)
        flat_x = None if X is None else X.reshape(-1, m, n)
        pairs = [lobpcg(flat_a[i], k, None if flat_b is None else flat_b[i],
                        None if flat_x is None else flat_x[i], n, iK, niter, tol, largest)
                 for i in range(flat_a.shape[0])]
        return (ember.stack([p[0] for p in pairs]).reshape(*batch, k),
                ember.stack([p[1] for p in pairs]).reshape(*batch, m, k))
    if X is None:
        X = ember.randn(m, n, dtype=dtype, device=A.device)
    elif tuple(X.shape) != (m, n):
        raise AssertionError(f"X shape mismatch: got {tuple(X.shape)}, expected {(m, n)}")
    return _LOBPCG.apply(A.to(dtype), None if B is None else B.to(dtype), X.to(dtype), iK,
                         k, n, niter, tol, largest)
