"""Point-to-point: send/recv, isend/irecv, batch_isend_irecv.

A message is a header (dtype, shape, size, sender) followed by the payload, on two
communicators of the group.  The receiver checks the header against its tensor: a mismatch is
an error naming both sides (the payload is drained first, so the channel stays usable), never
a truncated or reinterpreted tensor.  Receives post their payload receive in the order they
were called, which keeps messages with the same source and tag in order."""
import numpy as np

from . import _mpi
from ._buffers import Host
from ._launch import check_tensor, group_of
from ._process_group import peer_rank
from ._signature import describe_tensor, signature
from ._work import Phase, Work, run

__all__ = ["P2POp", "batch_isend_irecv", "irecv", "isend", "recv", "send"]

_SENDER, _NBYTES = 11, 13


def _check_tag(tag, fn):
    if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0:
        raise ValueError(f"{fn}(): tag must be a non-negative int, got {tag!r}")
    limit = _mpi.mpi().COMM_WORLD.Get_attr(_mpi.mpi().TAG_UB)
    if tag > limit:
        raise ValueError(f"{fn}(): tag {tag} is larger than MPI's upper bound ({limit})")


def _header(pg, tensor):
    h = signature("p2p", tensor)[:16].copy()
    h[_SENDER] = pg._rank
    h[_NBYTES] = tensor.numel() * tensor.dtype.itemsize
    return h


def _start(fn, begin, tensor, peer, group, tag, group_peer):
    """The Work of a send or receive (``begin``), or None on a rank outside ``group``."""
    check_tensor(tensor, "tensor")
    pg = group_of(group, fn)
    return None if pg is None else begin(pg, tensor, peer, group_peer, tag, fn)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    return _start("isend", _send, tensor, dst, group, tag, group_dst)


def _send(pg, tensor, dst, group_dst, tag, fn):
    if dst is None and group_dst is None:
        raise ValueError(f"{fn}(): a destination is required: pass dst or group_dst")
    peer = peer_rank(pg, dst, group_dst, fn, "dst")
    if peer == pg._rank:
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")
    _check_tag(tag, fn)
    header, host = _header(pg, tensor), Host(tensor)

    def start():
        MPI = _mpi.mpi()
        return [pg._p2p_header.Isend([header, MPI.INT64_T], peer, tag),
                pg._p2p.Isend(host.raw(), peer, tag)]

    world = pg._ranks[peer]
    work = Work(pg, f"send to rank {world} (tag {tag})", [Phase(start)], [world], [tensor],
                queued=False)
    work._advance()
    return work


class _RecvWork(Work):
    """A receive: polling it first advances every earlier receive of its group, so that
    payload receives are posted in the order the headers were matched."""

    _matched = False

    def _poll(self):
        pending = self._pg._p2p_pending
        for w in list(pending):
            if w is self:
                break
            w._advance()
        pending[:] = [w for w in pending if not w._matched]
        return super()._poll()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (None: any rank); returns a Work
    whose ``source_rank()`` names the sender."""
    return _start("irecv", _recv, tensor, src, group, tag, group_src)


def _recv(pg, tensor, src, group_src, tag, fn):
    MPI = _mpi.mpi()
    anyone = src is None and group_src is None
    peer = MPI.ANY_SOURCE if anyone else peer_rank(pg, src, group_src, fn, "src")
    _check_tag(tag, fn)
    mine = _header(pg, tensor)
    header = np.empty_like(mine)
    host = Host(tensor, load=False)
    work = None

    def start_header():
        return [pg._p2p_header.Irecv([header, MPI.INT64_T], peer, tag)]

    def match():
        work._matched = True
        sender = int(header[_SENDER])
        work._source_rank = pg._ranks[sender]
        theirs, ours = header.copy(), mine.copy()
        theirs[_SENDER] = ours[_SENDER] = -1
        if np.array_equal(theirs, ours):
            return [Phase(lambda: [pg._p2p.Irecv(host.raw(), sender, tag)], host.commit)]
        scratch = np.empty(int(header[_NBYTES]), dtype=np.uint8)

        def mismatch():
            raise RuntimeError(f"{fn}(): rank {pg._ranks[sender]} sent {describe_tensor(header)}"
                               f" (tag {tag}), but the receiving tensor on rank "
                               f"{pg._ranks[pg._rank]} is {describe_tensor(mine)}")
        return [Phase(lambda: [pg._p2p.Irecv([scratch, MPI.BYTE], sender, tag)], mismatch)]

    me = pg._ranks[pg._rank]
    peers = [r for r in pg._ranks if r != me] if anyone else [pg._ranks[peer]]
    who = "any rank" if anyone else f"rank {pg._ranks[peer]}"
    work = _RecvWork(pg, f"recv from {who} (tag {tag})", [Phase(start_header, match)], peers,
                     [tensor], queued=False)
    pg._p2p_pending[:] = [w for w in pg._p2p_pending if not w._matched] + [work]
    work._advance()
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is sent."""
    work = _start("send", _send, tensor, dst, group, tag, group_dst)
    if work is not None:
        run(work, False)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (None: any rank); returns the sender's
    rank (-1 on a rank outside ``group``)."""
    work = _start("recv", _recv, tensor, src, group, tag, group_src)
    if work is None:
        return -1
    run(work, False)
    return work._source_rank


class P2POp:
    """One send or receive for ``batch_isend_irecv``: ``op`` is ``isend`` or ``irecv``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``ember.distributed.isend`` or ``ember.distributed.irecv``.")
        check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of ``p2p_op_list`` (P2POps); returns their Works."""
    if not isinstance(p2p_op_list, (list, tuple)) or \
            not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``ember.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, group_dst=p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, group_src=p.group_peer))
    return works
