"""Process groups and the world they belong to.

A ProcessGroup is a set of ranks with MPI communicators of its own: one for collectives'
payloads, one for their signatures (the metadata every rank checks before the payload moves),
and two for point-to-point headers and payloads.  Operations on one group are started in the
order they were called, the same on every rank (MPI's rule for collectives): ``_queue`` holds
the ones whose phases are not all started yet."""
import collections
import datetime

from . import _mpi
from ._faults import DistBackendError

__all__ = ["GroupMember", "ProcessGroup", "group"]


_FUSE_BYTES = 1024
_FUSE_MAX_RANKS = 8


class ProcessGroup:
    """A group of ranks (``new_group``/``init_process_group`` make them)."""

    def __init__(self, comm, ranks, backend, timeout, name, desc):
        MPI = _mpi.mpi()
        self._data = comm
        self._meta = comm.Dup()
        self._p2p_header = comm.Dup()
        self._p2p = comm.Dup()
        self._ranks = list(ranks)                 # world rank of each group rank
        self._group_rank_of = {w: i for i, w in enumerate(self._ranks)}
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._peers = [w for w in self._ranks if w != self._ranks[self._rank]]
        self._backend = backend
        self._timeout = timeout
        self._name = name
        self._desc = desc
        self._seq = 0
        self._queue = collections.deque()
        self._broken = None                       # the error that made this group unusable
        self._p2p_pending = []                    # receives whose header is not in yet
        self._any_source = MPI.ANY_SOURCE
        # the payload bytes that ride in a collective's signature exchange (see
        # _signature): one exchange instead of two for small messages; every rank sends its
        # slot to every rank, so large groups send signatures alone
        self._fuse_bytes = _FUSE_BYTES if self._size <= _FUSE_MAX_RANKS else 0
        self._fast_plans = {}                     # _fast: prepared small collectives
        self._fast_slot = self._fast_rows = self._fast_owner = None

    # PyTorch's ProcessGroup methods
    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._name

    @property
    def group_name(self):
        return self._name

    @property
    def group_desc(self):
        return self._desc

    def _get_backend_name(self):
        return self._backend

    def __repr__(self):
        return f"ProcessGroup(name={self._name!r}, ranks={self._ranks}, backend={self._backend!r})"

    # ember's bookkeeping
    @property
    def _timeout_s(self):
        return self._timeout.total_seconds()

    def _next_seq(self):
        self._seq += 1
        return self._seq

    def _describe(self, what, seq=None):
        where = f"group {self._name!r}" if self._name != "0" else "the default group"
        return f"{what} (#{seq} on {where})" if seq is not None else f"{what} (on {where})"

    def _check_usable(self, what):
        if self._broken is not None:
            raise DistBackendError(f"{what}: the process group is unusable after an earlier "
                                   f"failure: {self._broken}")

    def _progress(self):
        """Start the queued operations' next phases, in order, as far as MPI allows."""
        q = self._queue
        while q:
            if not q[0]._advance():
                return
            q.popleft()._in_queue = False

    def _free(self):
        for c in (self._data, self._meta, self._p2p_header, self._p2p):
            try:
                c.Free()
            except Exception:     # an MPI that is finalised or a group that is broken
                pass


class _World:
    """The default process group and the registry of groups (per process)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.default_pg = None
        self.groups = {}             # name -> ProcessGroup
        self.control = None          # _faults.Control on a world communicator
        self.group_count = 0
        self.backend = None


_world = _World()


class _NonGroupMember:
    def __repr__(self):
        return "NON_GROUP_MEMBER"


class _WorldMeta(type):
    @property
    def WORLD(cls):
        return _world.default_pg


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD``: the default group; ``GroupMember.NON_GROUP_MEMBER``: what
    ``new_group`` returns on ranks outside the new group."""

    NON_GROUP_MEMBER = _NonGroupMember()


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default process group."""


_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def _not_initialized():
    return ValueError("Default process group has not been initialized, please make sure to "
                      "call init_process_group.")


def default_pg():
    if _world.default_pg is None:
        raise _not_initialized()
    return _world.default_pg


def resolve(group):
    """The ProcessGroup an op runs on (None: the default one), or None when this rank is
    not a member (the op then does nothing, as PyTorch's)."""
    if group is None:
        return default_pg()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, not {type(group).__name__}")
    if _world.default_pg is None:
        raise _not_initialized()
    return group


def group_rank(pg, global_rank, fn, arg):
    """The rank in ``pg`` of world rank ``global_rank`` (``arg`` names the argument)."""
    if not isinstance(global_rank, int) or isinstance(global_rank, bool):
        raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(global_rank).__name__}")
    r = pg._group_rank_of.get(global_rank)
    if r is None:
        raise ValueError(f"{fn}(): {arg}={global_rank}: global rank {global_rank} is not "
                         f"part of group {pg}")
    return r


def peer_rank(pg, global_rank, group_rank_, fn, arg):
    """The group rank named by a global ``arg`` or by ``group_<arg>`` (exactly one)."""
    if group_rank_ is not None:
        if global_rank is not None:
            raise ValueError(f"{fn}(): can only specify one of {arg} or group_{arg}")
        if not 0 <= group_rank_ < pg._size:
            raise ValueError(f"{fn}(): group_{arg}={group_rank_} is out of range for a group "
                             f"of size {pg._size}")
        return group_rank_
    return group_rank(pg, 0 if global_rank is None else global_rank, fn, arg)
