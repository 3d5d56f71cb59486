"""The check every collective makes before its payload moves: each rank contributes a small
signature (operation, dtype, shape, root, reduce op) and one all-reduce of it and its
negation (MAX) yields every entry's maximum and minimum.  Equal everywhere: the payload phase
starts.  Otherwise the ranks gather each other's signatures and all raise the same error,
instead of MPI hanging or mixing mismatched buffers."""
import numpy as np

from . import _mpi
from ._types import ReduceOp
from ._work import Phase

__all__ = []

_N = 16
_MAX_DIMS = 8
OPS = ("all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
       "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
       "all_to_all_single", "barrier", "p2p")
_DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
           "uint8", "bool", "complex64", "complex128")


def signature(op, tensor=None, root=None, reduce_op=None, count=None, dtype=None):
    """What must be equal on every rank for ``op`` to run: ``tensor``'s dtype and shape (or
    ``dtype`` alone), the root, the reduce op, a list's length.  Returns the int64 signature
    followed by its negation (cached: the same call recurs every training step)."""
    dtype = tensor.dtype if tensor is not None else dtype
    shape = tuple(tensor.shape) if tensor is not None else None
    key = (op, dtype, shape, root, None if reduce_op is None else int(reduce_op), count)
    both = _cache.get(key)
    if both is None:
        if len(_cache) > 4096:
            _cache.clear()
        both = _cache[key] = _signature(*key)
    return both


_cache = {}


def _signature(op, dtype, shape, root, reduce_op, count):
    s = np.full(_N, -1, dtype=np.int64)
    s[0] = OPS.index(op)
    if dtype is not None:
        name = dtype.name
        s[1] = _DTYPES.index(name) if name in _DTYPES else 100 + sum(map(ord, name))
    if shape is not None:
        s[2] = len(shape)
        if len(shape) <= _MAX_DIMS:
            s[3:3 + len(shape)] = shape
        else:
            s[3:3 + _MAX_DIMS - 1] = shape[:_MAX_DIMS - 1]
            s[3 + _MAX_DIMS - 1] = hash(shape) & ((1 << 62) - 1)
    if root is not None:
        s[11] = root
    if reduce_op is not None:
        s[12] = reduce_op
    if count is not None:
        s[13] = count
    both = np.concatenate([s, -s])
    both.flags.writeable = False
    return both


def describe_tensor(s):
    """The dtype and shape a signature records: ``float32[4, 3]``."""
    dtype = _DTYPES[s[1]] if s[1] < len(_DTYPES) else f"dtype#{s[1]}"
    nd = int(s[2])
    dims = [str(int(d)) for d in s[3:3 + min(nd, _MAX_DIMS)]]
    if nd > _MAX_DIMS:
        dims[-1] = "..."
    return f"{dtype}[{', '.join(dims)}]" if nd >= 0 else dtype


def describe(s):
    """A signature as PyTorch users read it: ``all_reduce(float32[4, 3], op=SUM)``."""
    parts = []
    if s[1] >= 0:
        parts.append(describe_tensor(s))
    if s[11] >= 0:
        parts.append(f"root={int(s[11])}")
    if s[12] >= 0:
        parts.append(f"op={ReduceOp.RedOpType(int(s[12])).name}")
    if s[13] >= 0:
        parts.append(f"{int(s[13])} tensors")
    return f"{OPS[s[0]]}({', '.join(parts)})"


def check_phase(pg, both):
    """The phase that compares a ``signature()`` across the ranks of ``pg``: one all-reduce
    (MAX) of it and its negation gives every entry's maximum and minimum."""
    extremes = np.empty_like(both)

    def start():
        MPI = _mpi.mpi()
        return [pg._meta.Iallreduce([both, MPI.INT64_T], [extremes, MPI.INT64_T], MPI.MAX)]

    def then():
        if extremes.tobytes() == both.tobytes():
            return None
        return [_mismatch_phase(pg, both[:_N])]

    return Phase(start, then)


def _mismatch_phase(pg, sig):
    every = np.empty((pg._size, _N), dtype=np.int64)

    def start():
        MPI = _mpi.mpi()
        return [pg._meta.Iallgather([sig, MPI.INT64_T], [every, MPI.INT64_T])]

    def then():
        me = pg._rank
        other = next(r for r in range(pg._size) if not np.array_equal(every[r], every[me]))
        raise RuntimeError(
            f"Detected mismatch between collectives on ranks. Rank {pg._ranks[me]} is running "
            f"collective: {describe(every[me])}, but Rank {pg._ranks[other]} is running "
            f"collective: {describe(every[other])}")

    return Phase(start, then)
