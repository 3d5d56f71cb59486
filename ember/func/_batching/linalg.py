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
from ember.func._batching._util import materialize, unwrap, wrap_all

__all__ = []

BATCH_LEADING = ("linalg_inv", "linalg_inv_ex", "inverse", "linalg_det", "linalg_slogdet",
                 "logdet", "linalg_solve", "linalg_solve_ex", "linalg_cholesky",
                 "linalg_cholesky_ex", "cholesky", "linalg_qr", "qr", "linalg_svd", "svd",
                 "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh", "linalg_pinv",
                 "pinverse", "linalg_matrix_rank", "linalg_solve_triangular",
                 "cholesky_solve", "cholesky_inverse", "linalg_matrix_power")


class _BatchLeading:
    """VmapMode kernel of a composite that treats leading dims as a batch."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, *args, **kwargs):
        lv = _level_of(args, kwargs)
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, TensorBase)]
        if lv < 0 or any(_ag._tracked(t) for t in tensors if unwrap(t, lv)[1]):
            return redispatch_below(self.op, DispatchKey.VmapMode, args, kwargs,
                                    composite_too=False)
        v = _levels.info(lv)

        def phys(a):
            if not isinstance(a, TensorBase):
                return a
            x, b = unwrap(a, lv)
            return materialize(x, b, v.size)
        with _levels.switch(v):
            r = self.op.entry(*(phys(a) for a in args),
                              **{k: phys(a) for k, a in kwargs.items()})
        return wrap_all(r, lv)


for _name in BATCH_LEADING:
    MODE_RULES[_name] = _BatchLeading
