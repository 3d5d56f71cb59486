"""ember.linalg's implementation: LAPACK (through NumPy and SciPy, imported on first use) on
host copies of the tensors, results moved back to the input's device.

_common holds the checks and host round trips, solvers the linear systems, decompositions
the factorizations, norms the norms and products, legacy the top-level torch.* names."""

from ember.core.linalg._common import LinAlgError
from ember.core.linalg.decompositions import (
    cholesky,
    cholesky_ex,
    eigh,
    eigvalsh,
    qr,
    svd,
    svdvals,
)
from ember.core.linalg.factorizations import (
    eig,
    eigvals,
    householder_product,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
)
from ember.core.linalg.matrix_functions import cond, matrix_exp, tensorinv, tensorsolve, vander
from ember.core.linalg.norms import (
    cross,
    diagonal,
    matmul,
    matrix_norm,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    vecdot,
)
from ember.core.linalg.solvers import (
    det,
    inv,
    inv_ex,
    lstsq,
    matrix_power,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
)
from ember.core.norms import vector_norm

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex",
           "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm"]
