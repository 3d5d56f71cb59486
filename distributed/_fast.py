"""The blocking all_reduce and broadcast of a small contiguous CPU tensor, the calls a
training loop repeats (metrics, DistributedDataParallel's buffers, SyncBatchNorm).

They run the general path's protocol (one exchange of a slot per rank carrying the signature
and the payload, see _signature), prepared once per (collective, dtype, shape, reduce op or
root) and group: the signature already in the group's slot, every rank's row as typed NumPy
views.  A repeated call then copies its tensor into the slot, starts one MPI all-gather,
checks the signatures and reduces the rows straight into the tensor's memory: a few
microseconds of Python instead of a Work and its phases.  A payload too large to ride in
the slot runs the general path's two steps the same way: the slot (signature only), then
MPI's in-place all-reduce on the tensor's memory.  Anything else (async_op, a busy group,
another device, a strided, half or empty tensor) takes the general path.

Where it builds (_native.py), both run in C (_fast_mpi.c) from the copy into the slot to the
combined rows or the root's row, or to MPI's all-reduce or broadcast past the slot: the same
protocol, bytes and rounding, without the Python between MPI's calls.  A wait past a few
polls, a mismatch or a (dtype, op) it does not combine come back here."""
import numpy as np

from . import _mpi, _native
from ._buffers import average, check_reduce, combine_rows, local_ufunc, reduce_array
from ._launch import _SPINS, wait_inline
from ._signature import HEADER, signature, verify
from ._types import ReduceOp

__all__ = []

_AVG = ReduceOp.AVG
_HALF = ("float16", "bfloat16")


class _Plan:
    """One prepared collective on one group (see the module docstring)."""

    __slots__ = ("sig", "nbytes", "dtype", "np_dtype", "ufunc", "op", "table", "headers",
                 "expected", "payload", "root", "root_row", "ptr", "memory", "out", "native",
                 "native_args")

    def __init__(self, pg, sig, tensor, op=None, root=None):
        self.sig = sig
        self.nbytes = n = tensor.numel() * tensor.element_size()
        self.dtype = tensor.dtype
        self.np_dtype = tensor.dtype.np_dtype
        self.op = op
        self.ufunc = None if op is None else local_ufunc(tensor.dtype, op)
        rows = pg._fast_rows
        self.headers = rows[:, :HEADER]
        self.expected = sig.tobytes() * pg._size
        self.root = root
        self.payload = self.table = self.root_row = None
        if n <= pg._fuse_bytes:         # the payload rides in the slot
            self.table = rows[:, HEADER:HEADER + n].view(self.np_dtype)
            self.payload = memoryview(pg._fast_slot)[HEADER:HEADER + n]
            if root is not None:
                self.root_row = memoryview(rows[root, HEADER:HEADER + n])
        self.ptr = None                 # the tensor memory last seen, and its views
        self.memory = self.out = None
        # the C path's call and its fixed arguments
        self.native = self.native_args = None
        module = _native.get()
        if module is not None:
            slot, rows = pg._fast_slot, pg._fast_rows
            args = (pg._meta.py2f(), slot.ctypes.data, rows.ctypes.data, slot.nbytes, HEADER,
                    sig.view(np.uint8).tobytes(), pg._size, _SPINS)
            if root is not None and self.payload is not None:
                self.native = module.broadcast
                self.native_args = args + (n, root, pg._rank == root)
            elif root is not None:
                self.native = module.broadcast_large
                self.native_args = args + (pg._data.py2f(), n, root)
            elif self.payload is not None:
                self.native = module.all_reduce
                self.native_args = args + (n, _native_kind(tensor.dtype, op))
            else:
                (_, mpi_type), mpi_op = reduce_array(np.empty(0, self.np_dtype), tensor.dtype,
                                                     op)
                self.native = module.all_reduce_large
                self.native_args = args + (pg._data.py2f(), tensor.numel(), mpi_type.py2f(),
                                           mpi_op.py2f())

    def target(self, tensor):
        """The plan's tensor's memory, as an MPI buffer (``self.memory``) and as a NumPy
        array (``self.out``), made again only when the tensor's address changes (a loop
        reducing one metric tensor keeps it; equal address, shape and dtype are the same
        memory)."""
        ptr = tensor.data_ptr()
        if ptr != self.ptr:
            self.memory = _mpi.mpi().buffer.fromaddress(ptr, self.nbytes)
            self.out = np.frombuffer(self.memory, self.np_dtype)
            self.ptr = ptr


def _plan(pg, key, tensor, make):
    """The group's plan for ``key``, made by ``make()`` the first time, with the group's slot
    carrying its signature; None when the fast path cannot take ``tensor`` now (a busy
    group, another device, a strided, empty or half tensor, a group that rides nothing in
    its slot)."""
    if pg._queue or not tensor.is_cpu or not tensor.is_contiguous():
        return None
    plans = pg._fast_plans
    plan = plans.get(key)
    if plan is None:
        if not tensor.numel() or not pg._fuse_bytes or tensor.dtype.name in _HALF:
            return None
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
    plan.target(tensor)
    return plan


def _wait(pg, fn, seq, request, then, plan):
    """Wait for ``request`` of operation ``seq``, then ``then(pg, plan)``; a wait past a few
    polls goes to wait_inline (the group's timeout, blame), which returns once it is done."""
    spins = 0
    while not request.Test():
        spins += 1
        if spins == _SPINS:
            wait_inline(pg, fn, seq, [request], lambda: then(pg, plan))
            return
    then(pg, plan)


def _exchange(pg, fn, plan):
    """The slot's all-gather (the signatures, and the payload that rides along), checked;
    returns the operation's sequence number."""
    seq = pg._next_seq()
    _wait(pg, fn, seq, pg._meta.Iallgather(pg._fast_slot, pg._fast_rows), _check, plan)
    return seq


def _check(pg, plan):
    if plan.headers.tobytes() != plan.expected:
        verify(pg, plan.sig, pg._fast_rows)


def _average(pg, plan):
    if plan.op == _AVG:
        average(plan.out, len(plan.headers))


# the C path's answers (_fast_mpi.c); a request still pending comes back as (phase, handle)
_DONE, _GATHERED, _MISMATCH = 0, 1, 2
# the (dtype, op) pairs the C path combines itself: kind = dtype * 4 + op
_NATIVE_DTYPES = {"float32": 0, "float64": 1, "int32": 2, "int64": 3}
_NATIVE_OPS = {ReduceOp.SUM: 0, ReduceOp.MAX: 1, ReduceOp.MIN: 2, ReduceOp.AVG: 3}


def _native_kind(dtype, op):
    d, o = _NATIVE_DTYPES.get(dtype.name), _NATIVE_OPS.get(op)
    if d is None or o is None or (o == 3 and d >= 2):     # integer AVG truncates: NumPy's
        return -1
    return d * 4 + o


def _combine(pg, plan):
    combine_rows(plan.ufunc, plan.table, plan.out)
    _average(pg, plan)


def _reduce_in_place(pg, seq, plan):
    """The second step past the slot: MPI's in-place all-reduce on the tensor's memory."""
    buf, mpi_op = reduce_array(plan.out, plan.dtype, plan.op)
    _wait(pg, "all_reduce", seq, pg._data.Iallreduce(_mpi.mpi().IN_PLACE, buf, mpi_op),
          _average, plan)


def _checked(pg, plan, finish):
    """The slot's rows checked, then ``finish`` (None: a Work takes no further phases)."""
    _check(pg, plan)
    finish(pg, plan)


def _run_native(pg, fn, plan, finish, second_step):
    """Run ``plan`` through the C path (_fast_mpi.c); what it hands back finishes here as on
    the Python path: ``finish(pg, plan)`` once the data is in (the rows combined, the root's
    row copied, the average taken), ``second_step(pg, seq, plan)`` past the slot."""
    seq = pg._next_seq()
    answer = plan.native(*plan.native_args, plan.ptr)
    if answer == _DONE:
        if plan.payload is None:
            finish(pg, plan)
    elif answer == _GATHERED:
        finish(pg, plan)
    elif answer == _MISMATCH:
        verify(pg, plan.sig, pg._fast_rows)
    else:                                # still pending: the group's timeout and blame apply
        phase, handle = answer
        request = [_mpi.mpi().Request.f2py(handle)]
        if plan.payload is not None:
            wait_inline(pg, fn, seq, request, lambda: _checked(pg, plan, finish))
        elif phase == 0:
            wait_inline(pg, fn, seq, request, lambda: _check(pg, plan))
            second_step(pg, seq, plan)
        else:
            wait_inline(pg, fn, seq, request, lambda: finish(pg, plan))


def all_reduce(pg, tensor, op):
    """all_reduce of ``tensor`` on ``pg`` if the fast path takes it (True), else False.
    The reduction's dtype check runs when the plan is made: a plan exists only for a
    (dtype, op) that passed it."""
    def make():
        check_reduce(tensor.dtype, op, "all_reduce")
        return _Plan(pg, signature("all_reduce", tensor, reduce_op=op), tensor, op)

    plan = _plan(pg, ("all_reduce", tensor.dtype, tensor.shape, op), tensor, make)
    if plan is None:
        return False
    if plan.native is not None:
        _run_native(pg, "all_reduce", plan, _average if plan.payload is None else _combine,
                _reduce_in_place)
        return True
    if plan.payload is not None:
        plan.payload[:] = plan.memory
    seq = _exchange(pg, "all_reduce", plan)
    if plan.payload is not None:
        _combine(pg, plan)
    else:
        _reduce_in_place(pg, seq, plan)
    return True


def _copy_root_row(pg, plan):
    if pg._rank != plan.root:
        plan.memory[:] = plan.root_row


def _nothing(pg, plan):
    pass


def broadcast(pg, tensor, root):
    """broadcast of ``tensor`` from group rank ``root`` if the fast path takes it."""
    plan = _plan(pg, ("broadcast", tensor.dtype, tensor.shape, root), tensor,
                 lambda: _Plan(pg, signature("broadcast", tensor, root=pg._ranks[root]),
                               tensor, root=root))
    if plan is None:
        return False
    if plan.native is not None:
        _run_native(pg, "broadcast", plan, _nothing if plan.payload is None else _copy_root_row,
                _broadcast_in_place)
        return True
    if plan.payload is not None and pg._rank == root:
        plan.payload[:] = plan.memory
    seq = _exchange(pg, "broadcast", plan)
    if plan.payload is not None:
        _copy_root_row(pg, plan)
    else:
        _broadcast_in_place(pg, seq, plan)
    return True


def _broadcast_in_place(pg, seq, plan):
    """The second step past the slot: MPI's broadcast on the tensor's memory."""
    raw = [plan.out.view(np.uint8), _mpi.mpi().BYTE]
    _wait(pg, "broadcast", seq, pg._data.Ibcast(raw, plan.root), _nothing, plan)
