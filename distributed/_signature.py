"""The check every collective makes before its payload moves: each rank contributes a small
signature (operation, dtype, shape, root, reduce op) in a slot of the group's fixed size, and
one all-gather of the slots gives every rank every signature.  Equal everywhere: the payload
phase starts.  Otherwise every rank raises the same error, naming both calls, instead of MPI
hanging or mixing mismatched buffers.

The slot is the same size for every collective of a group (a rank may be at another
collective than its peers: the exchange itself must match), so a small payload (at most
``ProcessGroup._fuse_bytes``) rides in it: a small all_reduce, broadcast or all-gather is then
one exchange, not two, with the reduction done on every rank in rank order."""
import numpy as np

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
    ``dtype`` alone), the root, the reduce op, a list's length: a read-only int64 array of 16
    (cached: the same call recurs every training step)."""
    if tensor is not None:
        dtype = tensor.dtype
        key = (op, dtype, tensor.shape, root, reduce_op, count)
    else:
        key = (op, dtype, None, root, reduce_op, count)
    sig = _cache.get(key)
    if sig is None:
        if len(_cache) > 4096:
            _cache.clear()
        sig = _cache[key] = _signature(*key)
    return sig


_cache = {}
HEADER = _N * 8                      # the signature's bytes at the start of a slot


def _signature(op, dtype, shape, root, reduce_op, count):
    s = np.full(_N, -1, dtype=np.int64)
    s[0] = OPS.index(op)
    if dtype is not None:
        name = dtype.name
        s[1] = _DTYPES.index(name) if name in _DTYPES else 100 + sum(map(ord, name))
    if shape is not None:
        shape = tuple(shape)
        s[2] = len(shape)
        if len(shape) <= _MAX_DIMS:
            s[3:3 + len(shape)] = shape
        else:
            s[3:3 + _MAX_DIMS - 1] = shape[:_MAX_DIMS - 1]
            s[3 + _MAX_DIMS - 1] = hash(shape) & ((1 << 62) - 1)
    if root is not None:
        s[11] = root
    if reduce_op is not None:
        s[12] = int(reduce_op)
    if count is not None:
        s[13] = count
    s.flags.writeable = False
    return s


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


def fits(pg, nbytes):
    """Whether a payload of ``nbytes`` rides in the signature's slot on ``pg``."""
    return nbytes <= pg._fuse_bytes


def exchange(pg, sig, payload=None):
    """Start the slot exchange: (request, rows), ``rows`` one slot per rank (uint8); the
    payload (uint8, at most ``pg._fuse_bytes``) follows the signature in this rank's."""
    size = HEADER + pg._fuse_bytes
    slot = np.empty(size, dtype=np.uint8)
    slot[:HEADER] = sig.view(np.uint8)
    if payload is not None:
        slot[HEADER:HEADER + len(payload)] = payload
    rows = np.empty((pg._size, size), dtype=np.uint8)
    return pg._meta.Iallgather(slot, rows), rows


def verify(pg, sig, rows):
    """Raise the mismatch error unless every rank's slot carries ``sig``."""
    mine = sig.tobytes()
    if rows[:, :HEADER].tobytes() != mine * pg._size:
        every = rows[:, :HEADER].copy().view(np.int64)
        other = next(r for r in range(pg._size) if every[r].tobytes() != mine)
        raise RuntimeError(
            f"Detected mismatch between collectives on ranks. Rank {pg._ranks[pg._rank]} is "
            f"running collective: {describe(sig)}, but Rank {pg._ranks[other]} is running "
            f"collective: {describe(every[other])}")


def check_phase(pg, sig, payload=None, finish=None):
    """The phase that compares a ``signature()`` across the ranks of ``pg``; with a
    ``payload`` (uint8, it ``fits``), ``finish(rows)`` then receives every rank's payload
    (a (world_size, nbytes) uint8 array) and the collective is complete."""
    rows = None

    def start():
        nonlocal rows
        request, rows = exchange(pg, sig, payload)
        return [request]

    def then():
        verify(pg, sig, rows)
        if finish is not None:
            finish(rows[:, HEADER:HEADER + len(payload)])

    return Phase(start, then)
