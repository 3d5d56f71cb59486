"""Collectives over a process group, PyTorch's signatures, on MPI's non-blocking calls.

Each checks its arguments, queues a signature check (see _signature) and then its payload
phase (a small all_reduce, reduce, broadcast or all-gather rides in the check itself);
``async_op=True`` returns the Work, else it waits (against the group's timeout) and returns
None.  Ranks are global ranks (``src``/``dst``) or ranks in the group
(``group_src``/``group_dst``), as in PyTorch."""
import numpy as np

from . import _fast, _mpi
from ._buffers import (
    Host,
    average,
    check_reduce,
    host_dtype,
    reduce_buffer,
    reduce_rows,
    write_into,
)
from ._launch import check_count, check_like, check_tensor, check_tensor_list, collective, group_of
from ._process_group import peer_rank
from ._signature import fits, signature
from ._types import ReduceOp, _red_op_type
from ._work import Phase

__all__ = ["all_gather", "all_gather_into_tensor", "all_reduce", "barrier", "broadcast",
           "gather", "monitored_barrier", "reduce", "reduce_scatter", "reduce_scatter_tensor",
           "scatter"]

_AVG = ReduceOp.AVG


def _finish_reduce(host, op, pg, here=True):
    def then():
        if here:
            if op == _AVG:
                average(host.array, pg._size)
            host.commit()
    return then


def _reduce_rows(host, dtype, op, pg, here=True):
    """``finish`` of a reduction that rode in the signature exchange."""
    def finish(rows):
        if here:
            reduce_rows(host, dtype, op, rows)
            _finish_reduce(host, op, pg)()
    return finish


def _bytes(host):
    return host.array.view(np.uint8)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over every rank of ``group`` with ``op``; every rank receives the
    result in ``tensor``."""
    check_tensor(tensor, "tensor")
    op = _red_op_type(op, "all_reduce")
    pg = group_of(group, "all_reduce")
    if pg is None:
        return None
    if not async_op and _fast.all_reduce(pg, tensor, op):     # checks the op on its first call
        return None
    check_reduce(tensor.dtype, op, "all_reduce")
    return _all_reduce(tensor, op, pg, async_op)


def _all_reduce(tensor, op, pg, async_op, checked=True):
    host = Host(tensor, reduce=True)
    sig = signature("all_reduce", tensor, reduce_op=op)
    if checked and fits(pg, host.array.nbytes):
        return collective(pg, "all_reduce", sig, (), async_op, [tensor], payload=_bytes(host),
                          finish=_reduce_rows(host, tensor.dtype, op, pg))

    def start():
        buf, mpi_op = reduce_buffer(host, tensor.dtype, op)
        return [pg._data.Iallreduce(_mpi.mpi().IN_PLACE, buf, mpi_op)]

    return collective(pg, "all_reduce", sig, [Phase(start, _finish_reduce(host, op, pg))],
                      async_op, [tensor], checked)


def _all_reduce_unchecked(tensor, group):
    """An async SUM all_reduce without the signature check, for callers whose ranks hold
    tensors of one shape by construction (DistributedDataParallel's buckets)."""
    return _all_reduce(tensor, ReduceOp.SUM, group_of(group, "all_reduce"), True, False)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the ranks of ``group``; only rank ``dst`` receives the result."""
    check_tensor(tensor, "tensor")
    op = _red_op_type(op, "reduce")
    pg = group_of(group, "reduce")
    if pg is None:
        return None
    root = peer_rank(pg, dst, group_dst, "reduce", "dst")
    check_reduce(tensor.dtype, op, "reduce")
    here = pg._rank == root
    host = Host(tensor, reduce=True)
    sig = signature("reduce", tensor, root=pg._ranks[root], reduce_op=op)
    if fits(pg, host.array.nbytes):
        return collective(pg, "reduce", sig, (), async_op, [tensor], payload=_bytes(host),
                          finish=_reduce_rows(host, tensor.dtype, op, pg, here))

    def start():
        MPI = _mpi.mpi()
        buf, mpi_op = reduce_buffer(host, tensor.dtype, op)
        if here:
            return [pg._data.Ireduce(MPI.IN_PLACE, buf, mpi_op, root)]
        return [pg._data.Ireduce(buf, None, mpi_op, root)]

    return collective(pg, "reduce", sig, [Phase(start, _finish_reduce(host, op, pg, here))],
                      async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank of ``group``."""
    check_tensor(tensor, "tensor")
    pg = group_of(group, "broadcast")
    if pg is None:
        return None
    root = peer_rank(pg, src, group_src, "broadcast", "src")
    if not async_op and _fast.broadcast(pg, tensor, root):
        return None
    here = pg._rank == root
    host = Host(tensor, load=here)
    sig = signature("broadcast", tensor, root=pg._ranks[root])
    if fits(pg, host.array.nbytes):
        def finish(rows):
            if not here:
                _bytes(host)[:] = rows[root]
                host.commit()
        return collective(pg, "broadcast", sig, (), async_op, [tensor], payload=_bytes(host),
                          finish=finish)
    then = None if here else host.commit
    return collective(pg, "broadcast", sig,
                      [Phase(lambda: [pg._data.Ibcast(host.raw(), root)], then)],
                      async_op, [tensor])


def _gathered(n, like):
    """A host buffer for ``n`` tensors like ``like``, and its rows (one per rank)."""
    rows = np.empty((n, like.numel()), dtype=host_dtype(like.dtype))
    return rows, rows.view(np.uint8).reshape(-1)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank of ``group``."""
    check_tensor_list(tensor_list, "tensor_list")
    check_tensor(tensor, "tensor")
    pg = group_of(group, "all_gather")
    if pg is None:
        return None
    check_count("all_gather", "tensor_list", tensor_list, pg)
    check_like("all_gather", "tensor_list", tensor_list, tensor)
    src = Host(tensor)
    sig = signature("all_gather", tensor)
    like = host_dtype(tensor.dtype)

    def finish(rows):
        for t, row in zip(tensor_list, rows):
            write_into(t, row.view(like))

    if fits(pg, src.array.nbytes):
        return collective(pg, "all_gather", sig, (), async_op, tensor_list,
                          payload=_bytes(src), finish=finish)
    rows, raw = _gathered(pg._size, tensor)

    def start():
        MPI = _mpi.mpi()
        return [pg._data.Iallgather(src.raw(), [raw, MPI.BYTE])]

    return collective(pg, "all_gather", sig, [Phase(start, lambda: finish(rows))], async_op,
                      tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor``, concatenated in rank order, into ``output_tensor``
    (of ``world_size`` times its size)."""
    check_tensor(output_tensor, "output_tensor")
    check_tensor(input_tensor, "input_tensor")
    pg = group_of(group, "all_gather_into_tensor")
    if pg is None:
        return None
    _check_whole("all_gather_into_tensor", output_tensor, input_tensor, pg, "output", "input")
    src, out = Host(input_tensor), Host(output_tensor, load=False)
    sig = signature("all_gather_into_tensor", input_tensor)
    if fits(pg, src.array.nbytes):
        def finish(rows):
            _bytes(out).reshape(rows.shape)[:] = rows
            out.commit()
        return collective(pg, "all_gather_into_tensor", sig, (), async_op, [output_tensor],
                          payload=_bytes(src), finish=finish)
    return collective(pg, "all_gather_into_tensor", sig,
                      [Phase(lambda: [pg._data.Iallgather(src.raw(), out.raw())], out.commit)],
                      async_op, [output_tensor])


def _check_whole(fn, whole, part, pg, whole_name, part_name):
    if whole.dtype != part.dtype:
        raise ValueError(f"{fn}(): {whole_name} and {part_name} tensors must have the same "
                         f"dtype, got {whole.dtype} and {part.dtype}")
    if whole.numel() != pg._size * part.numel():
        raise ValueError(f"{fn}(): {whole_name} tensor size must be equal to world_size "
                         f"times {part_name} tensor size ({pg._size} x {part.numel()}), got "
                         f"{whole.numel()}")


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` over the ranks of ``group`` into ``output`` on rank ``i``."""
    check_tensor(output, "output")
    check_tensor_list(input_list, "input_list")
    op = _red_op_type(op, "reduce_scatter")
    pg = group_of(group, "reduce_scatter")
    if pg is None:
        return None
    check_count("reduce_scatter", "input_list", input_list, pg)
    check_like("reduce_scatter", "input_list", input_list, output)
    check_reduce(output.dtype, op, "reduce_scatter")
    out = Host(output, reduce=True, load=False)
    send = np.concatenate([Host(t, reduce=True).array for t in input_list]) if input_list \
        else out.array[:0]
    sig = signature("reduce_scatter", output, reduce_op=op)
    return _reduce_scatter(pg, "reduce_scatter", sig, send, out, output.dtype, op, async_op,
                           output)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (``world_size`` chunks) over the ranks of ``group``; rank ``i``
    receives chunk ``i`` of the result in ``output``."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    op = _red_op_type(op, "reduce_scatter_tensor")
    pg = group_of(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    _check_whole("reduce_scatter_tensor", input, output, pg, "input", "output")
    check_reduce(output.dtype, op, "reduce_scatter_tensor")
    out = Host(output, reduce=True, load=False)
    send = Host(input, reduce=True).array
    sig = signature("reduce_scatter_tensor", output, reduce_op=op)
    return _reduce_scatter(pg, "reduce_scatter_tensor", sig, send, out, output.dtype, op,
                           async_op, output)


def _reduce_scatter(pg, fn, sig, send, out, dtype, op, async_op, output):
    def start():
        recv, mpi_op = reduce_buffer(out, dtype, op)
        sendbuf = send.view(np.uint8) if dtype.name == "bool" else send
        return [pg._data.Ireduce_scatter_block([sendbuf, recv[1]], recv, mpi_op)]

    return collective(pg, fn, sig, [Phase(start, _finish_reduce(out, op, pg))], async_op,
                      [output])


def _rooted(fn, tensor, tensors, name, verb, group, rank, group_rank, arg):
    """gather's and scatter's checks: (group, root, whether this rank is the root), or Nones
    on a rank outside ``group``.  ``tensors`` is given on the root only."""
    check_tensor(tensor, "tensor")
    pg = group_of(group, fn)
    if pg is None:
        return None, None, None
    root = peer_rank(pg, rank, group_rank, fn, arg)
    here = pg._rank == root
    _root_list(fn, name, tensors, pg, here, tensor, verb)
    return pg, root, here


def _root_list(fn, name, tensors, pg, here, like, verb):
    if here:
        if tensors is None:
            raise ValueError(f"{fn}(): Argument ``{name}`` must be specified on "
                             f"{verb} rank.")
        check_tensor_list(tensors, name)
        check_count(fn, name, tensors, pg)
        check_like(fn, name, tensors, like)
    elif tensors:
        raise ValueError(f"{fn}(): Argument ``{name}`` must NOT be specified on "
                         f"non-{verb} ranks.")


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    pg, root, here = _rooted("gather", tensor, gather_list, "gather_list", "destination", group,
                             dst, group_dst, "dst")
    if pg is None:
        return None
    src = Host(tensor)
    rows, raw = _gathered(pg._size if here else 0, tensor)

    def start():
        MPI = _mpi.mpi()
        return [pg._data.Igather(src.raw(), [raw, MPI.BYTE] if here else None, root)]

    def then():
        for t, row in zip(gather_list if here else (), rows):
            write_into(t, row)

    sig = signature("gather", tensor, root=pg._ranks[root])
    return collective(pg, "gather", sig, [Phase(start, then)], async_op, gather_list or [])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """``scatter_list[i]`` of rank ``src`` into ``tensor`` on rank ``i``."""
    pg, root, here = _rooted("scatter", tensor, scatter_list, "scatter_list", "source", group,
                             src, group_src, "src")
    if pg is None:
        return None
    out = Host(tensor, load=False)
    send = None
    if here:
        send = np.concatenate([Host(t).array.view(np.uint8) for t in scatter_list])

    def start():
        MPI = _mpi.mpi()
        return [pg._data.Iscatter([send, MPI.BYTE] if here else None, out.raw(), root)]

    sig = signature("scatter", tensor, root=pg._ranks[root])
    return collective(pg, "scatter", sig, [Phase(start, out.commit)], async_op, [tensor])


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of ``group`` has reached this call."""
    pg = group_of(group, "barrier")
    if pg is None:
        return None
    return collective(pg, "barrier", signature("barrier"), [], async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier whose timeout error names the ranks that did not arrive."""
    pg = group_of(group, "monitored_barrier")
    if pg is None:
        return None
    work = collective(pg, "monitored_barrier", signature("barrier"), [], True)
    work._wait(None if timeout is None else timeout.total_seconds())
