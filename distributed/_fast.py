"""The blocking all_reduce and broadcast of a small contiguous CPU tensor, the calls a
training loop repeats (metrics, DistributedDataParallel's buffers, SyncBatchNorm).

They run the general path's protocol (one exchange of a slot per rank carrying the signature
and the payload, see _signature), prepared once per (collective, dtype, shape, reduce op or
root) and group: the signature already in the group's slot, every rank's row as typed NumPy
views.  A repeated call then copies its tensor into the slot, starts one MPI all-gather,
checks the signatures and reduces the rows straight into the tensor's memory: a few
microseconds of Python instead of a Work and its phases.  Anything else (async_op, a busy
group, another device, a strided, half or empty tensor, a payload too large to ride in the
slot) takes the general path."""
import numpy as np

from . import _mpi
from ._buffers import _LOCAL, _LOCAL_BOOL, average
from ._launch import wait_inline
from ._signature import HEADER, signature, verify
from ._types import ReduceOp

__all__ = []

_AVG = ReduceOp.AVG
_HALF = ("float16", "bfloat16")


class _Plan:
    """One prepared collective on one group (see the module docstring)."""

    __slots__ = ("sig", "nbytes", "np_dtype", "ufunc", "views", "table", "headers",
                 "expected", "payload", "root_row")

    def __init__(self, pg, sig, tensor, ufunc=None, root=None):
        self.sig = sig
        self.nbytes = tensor.numel() * tensor.element_size()
        self.np_dtype = tensor.dtype.np_dtype
        self.ufunc = ufunc
        rows = pg._fast_rows
        n = self.nbytes
        self.table = rows[:, HEADER:HEADER + n].view(self.np_dtype)
        self.views = list(self.table)
        self.headers = rows[:, :HEADER]
        self.expected = sig.tobytes() * pg._size
        self.payload = memoryview(pg._fast_slot)[HEADER:HEADER + n]
        self.root_row = None if root is None else memoryview(rows[root, HEADER:HEADER + n])


def _usable(pg, tensor):
    """Whether the fast path can take ``tensor`` on ``pg`` now."""
    if pg._queue or not tensor.is_cpu or not tensor.is_contiguous():
        return False
    n = tensor.numel()
    return 0 < n * tensor.element_size() <= pg._fuse_bytes and \
        tensor.dtype.name not in _HALF


def _plan(pg, key, make):
    plans = pg._fast_plans
    plan = plans.get(key)
    if plan is None:
        if pg._fast_slot is None:
            size = HEADER + pg._fuse_bytes
            pg._fast_slot = np.empty(size, dtype=np.uint8)
            pg._fast_rows = np.empty((pg._size, size), dtype=np.uint8)
        if len(plans) > 256:
            plans.clear()
        plan = plans[key] = make()
    if pg._fast_owner is not plan:          # the slot's signature is another plan's
        pg._fast_slot[:HEADER] = plan.sig.view(np.uint8)
        pg._fast_owner = plan
    return plan


def _memory(tensor, nbytes):
    return _mpi.mpi().buffer.fromaddress(tensor.data_ptr(), nbytes)


def _exchange(pg, fn, plan, then):
    seq = pg._next_seq()
    request = pg._meta.Iallgather(pg._fast_slot, pg._fast_rows)

    def checked():
        if plan.headers.tobytes() != plan.expected:
            verify(pg, plan.sig, pg._fast_rows)
        then()
    wait_inline(pg, fn, seq, [request], checked)


def all_reduce(pg, tensor, op):
    """all_reduce of ``tensor`` on ``pg`` if the fast path takes it (True), else False."""
    if not _usable(pg, tensor):
        return False
    bool_ = tensor.dtype.name == "bool"

    def make():
        table = _LOCAL_BOOL if bool_ else _LOCAL
        return _Plan(pg, signature("all_reduce", tensor, reduce_op=op), tensor, table[op])

    plan = _plan(pg, ("all_reduce", tensor.dtype, tensor.shape, op), make)
    memory = _memory(tensor, plan.nbytes)
    plan.payload[:] = memory

    def then():
        out = np.frombuffer(memory, plan.np_dtype)
        views = plan.views
        if len(views) == 2:
            plan.ufunc(views[0], views[1], out=out)
        else:
            plan.ufunc.reduce(plan.table, axis=0, out=out)
        if op == _AVG:
            average(out, len(views))

    _exchange(pg, "all_reduce", plan, then)
    return True


def broadcast(pg, tensor, root):
    """broadcast of ``tensor`` from group rank ``root`` if the fast path takes it."""
    if not _usable(pg, tensor):
        return False
    here = pg._rank == root
    plan = _plan(pg, ("broadcast", tensor.dtype, tensor.shape, root),
                 lambda: _Plan(pg, signature("broadcast", tensor, root=pg._ranks[root]),
                               tensor, root=root))
    memory = _memory(tensor, plan.nbytes)
    if here:
        plan.payload[:] = memory

    def then():
        if not here:
            memory[:] = plan.root_row

    _exchange(pg, "broadcast", plan, then)
    return True
