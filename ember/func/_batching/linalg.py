"""Linear algebra inside vmap: the ``ember.linalg`` composites work on batches of matrices
(the leading dims), so one call on the physical tensors (every operand given the batch
dim) does every sample - no loop.  When a wrapper is differentiated at its own level (a
grad or jvp inside the vmap), the composite's differentiable form runs on the wrappers
instead: its autograd.Function records there, and its forward comes back here untracked."""
from ember.core import _autograd as _ag
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase
from ember.core.mode_keys import redispatch_below
from ember.func import _levels
from ember.func._batching import MODE_RULES, _level_of
from ember.func._batching._util import align, materialize, unwrap, wrap_all

__all__ = []

BATCH_LEADING = ("linalg_inv", "linalg_inv_ex", "inverse", "linalg_det", "linalg_slogdet",
                 "logdet", "linalg_solve", "linalg_solve_ex", "linalg_cholesky",
                 "linalg_cholesky_ex", "cholesky", "linalg_qr", "qr", "linalg_svd", "svd",
                 "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh", "linalg_pinv",
                 "pinverse", "linalg_matrix_rank", "linalg_solve_triangular",
                 "cholesky_solve", "cholesky_inverse", "linalg_matrix_power", "matrix_exp",
                 # LU: rules ready for core/linalg/factorizations.py's (and legacy.py's)
                 # functions once they are composites of these names; until then they read
                 # a wrapper on the host (BatchedDataAccess)
                 "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_lu", "lu")

# composites whose tensor operands broadcast their leading dims: the dims of each positional
# operand's core (a matrix 2, pivots 1), so that the samples' batch dims line up
CORES = {"linalg_lu_solve": (2, 1, 2), "lu_solve": (2, 2, 1), "lu_unpack": (2, 1)}


class _BatchLeading:
    """VmapMode kernel of a composite that treats leading dims as a batch."""

    __slots__ = ("op", "cores")

    def __init__(self, op):
        self.op = op
        self.cores = CORES.get(op.name)

    def __call__(self, *args, **kwargs):
        lv = _level_of(args, kwargs)
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, TensorBase)]
        if lv < 0 or any(_ag._tracked(t) for t in tensors if unwrap(t, lv)[1]):
            return redispatch_below(self.op, DispatchKey.VmapMode, args, kwargs,
                                    composite_too=False)
        v = _levels.info(lv)

        def phys(a, core=None):
            if not isinstance(a, TensorBase):
                return a
            x, b = unwrap(a, lv)
            x = materialize(x, b, v.size)
            return x if core is None else align(x, True, nb + core)
        nb = 0
        if self.cores is not None:          # the most batch dims of a sample's operands
            nb = max((a.dim() - c for a, c in zip(args, self.cores)
                      if isinstance(a, TensorBase)), default=0)
        cores = self.cores or ()
        with _levels.switch(v):
            pa = [phys(a, cores[i] if i < len(cores) else None) for i, a in enumerate(args)]
            pk = {k: phys(a) for k, a in kwargs.items()}
            # wrappers of an enclosing vmap inside: that level's turn next (the function's
            # body may read values on the host, as matrix_exp's scaling step does)
            r = (self if _level_of(pa, pk) >= 0 else self.op.entry)(*pa, **pk)
        return wrap_all(r, lv)


for _name in BATCH_LEADING + tuple(CORES):
    MODE_RULES[_name] = _BatchLeading
