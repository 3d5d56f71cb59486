"""all_to_all and all_to_all_single: every rank sends a piece to every rank.

The pieces may differ in size, so besides the signature the ranks exchange how many bytes
each sends to each (one small all-to-all) and agree (one all-reduce of a flag) that every
receiver expects exactly that, before the payload moves."""
import numpy as np

from . import _mpi
from ._buffers import Host, host_dtype, write_into
from ._launch import check_count, check_tensor, check_tensor_list, collective, group_of
from ._signature import signature
from ._work import Phase

__all__ = ["all_to_all", "all_to_all_single"]


def _offsets(counts):
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def _sizes_phases(pg, fn, send_counts, recv_counts, dtype):
    """Phases that check every rank's receive sizes against its peers' send sizes."""
    theirs = np.empty(pg._size, dtype=np.int64)
    flag = np.zeros(1, dtype=np.int64)
    problem = []
    itemsize = dtype.itemsize

    def exchange():
        MPI = _mpi.mpi()
        return [pg._meta.Ialltoall([send_counts, MPI.INT64_T], [theirs, MPI.INT64_T])]

    def compare():
        for j in np.nonzero(theirs != recv_counts)[0]:
            problem.append(f"rank {pg._ranks[j]} sends {theirs[j] // itemsize} elements to "
                           f"rank {pg._ranks[pg._rank]}, which expects "
                           f"{recv_counts[j] // itemsize}")
        flag[0] = 1 if problem else 0
        return [Phase(agree, verdict)]

    def agree():
        MPI = _mpi.mpi()
        return [pg._meta.Iallreduce(MPI.IN_PLACE, [flag, MPI.INT64_T], MPI.MAX)]

    def verdict():
        if flag[0]:
            detail = "; ".join(problem) if problem else "the mismatch is on other ranks"
            raise RuntimeError(f"{fn}(): the sizes sent and expected disagree: {detail}")

    return [Phase(exchange, compare)]


def _alltoallv(pg, fn, dtype, send, send_counts, recv, recv_counts, then, async_op, outputs):
    """Queue the checks and the payload exchange (counts in bytes)."""
    send_counts = np.asarray(send_counts, dtype=np.int64)
    recv_counts = np.asarray(recv_counts, dtype=np.int64)
    sd, rd = _offsets(send_counts), _offsets(recv_counts)

    def start():
        MPI = _mpi.mpi()
        return [pg._data.Ialltoallv([send, (send_counts, sd), MPI.BYTE],
                                    [recv, (recv_counts, rd), MPI.BYTE])]

    sig = signature(fn, dtype=dtype, count=pg._size)
    phases = _sizes_phases(pg, fn, send_counts, recv_counts, dtype) + [Phase(start, then)]
    return collective(pg, fn, sig, phases, async_op, outputs)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """``input_tensor_list[j]`` of every rank ``i`` into ``output_tensor_list[i]`` of rank
    ``j``."""
    check_tensor_list(output_tensor_list, "output_tensor_list")
    check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = group_of(group, "all_to_all")
    if pg is None:
        return None
    check_count("all_to_all", "input_tensor_list", input_tensor_list, pg)
    check_count("all_to_all", "output_tensor_list", output_tensor_list, pg)
    dtype = input_tensor_list[0].dtype
    for name, ts in (("input_tensor_list", input_tensor_list),
                     ("output_tensor_list", output_tensor_list)):
        for i, t in enumerate(ts):
            if t.dtype != dtype:
                raise ValueError(f"all_to_all(): {name}[{i}] is {t.dtype}, but every tensor "
                                 f"must be {dtype}")
    send = np.concatenate([Host(t).array.view(np.uint8) for t in input_tensor_list])
    recv_counts = [t.numel() * dtype.itemsize for t in output_tensor_list]
    recv = np.empty(sum(recv_counts), dtype=np.uint8)

    def then():
        at = 0
        for t, n in zip(output_tensor_list, recv_counts):
            write_into(t, recv[at:at + n].view(host_dtype(dtype)))
            at += n

    return _alltoallv(pg, "all_to_all", dtype, send,
                      [t.numel() * dtype.itemsize for t in input_tensor_list], recv,
                      recv_counts, then, async_op, output_tensor_list)


def _split_bytes(fn, name, t, splits, pg):
    """Bytes per rank along dim 0 of ``t``: ``splits`` rows each, or equal parts."""
    rows = t.shape[0] if t.dim() > 0 else 1
    row_bytes = (t.numel() // rows if rows else 0) * t.dtype.itemsize
    if splits is None:
        if rows % pg._size:
            raise ValueError(f"{fn}(): {name} dim 0 ({rows}) is not divisible by the group "
                             f"size ({pg._size}); pass {name}_split_sizes")
        return [rows // pg._size * row_bytes] * pg._size
    splits = list(splits)
    check_count(fn, f"{name}_split_sizes", splits, pg)
    if sum(splits) != rows or min(splits, default=0) < 0:
        raise ValueError(f"{fn}(): {name}_split_sizes {splits} must be non-negative and sum "
                         f"to {name}'s dim 0 ({rows})")
    return [s * row_bytes for s in splits]


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split ``input`` along dim 0 (``input_split_sizes`` rows per rank, or equal parts),
    send part ``j`` to rank ``j``, and concatenate what arrives in rank order in
    ``output``."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    pg = group_of(group, "all_to_all_single")
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise ValueError(f"all_to_all_single(): output and input must have the same dtype, "
                         f"got {output.dtype} and {input.dtype}")
    send_counts = _split_bytes("all_to_all_single", "input", input, input_split_sizes, pg)
    recv_counts = _split_bytes("all_to_all_single", "output", output, output_split_sizes, pg)
    src, out = Host(input), Host(output, load=False)
    return _alltoallv(pg, "all_to_all_single", input.dtype, src.raw()[0], send_counts,
                      out.raw()[0], recv_counts, out.commit, async_op, [output])
