"""PyTorch's ``torch.distributed.distributed_c10d``: the default process group's life cycle,
groups, and ranks.  The collectives live in their own modules and are re-exported here (and by
``ember.distributed``), so both module paths scripts use work.

MPI forms the job (``mpiexec -n N`` or ``python -m ember.distributed.run``); init_process_group
joins it.  ``init_method``, MASTER_ADDR and MASTER_PORT are accepted and not needed: MPI has
already connected the ranks.  ``world_size``/``rank``, when given (or set in WORLD_SIZE/RANK),
must agree with MPI's."""
import datetime
import os

from . import _faults, _mpi
from ._alltoall import all_to_all, all_to_all_single
from ._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from ._objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from ._p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from ._process_group import (
    _DEFAULT_TIMEOUT,
    GroupMember,
    ProcessGroup,
    _not_initialized,
    _world,
    default_pg,
    group,
    resolve,
)
from ._types import Backend, ReduceOp, _parse_backend
from ._work import Work

__all__ = [
    "Backend", "GroupMember", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_backend_available", "is_gloo_available",
    "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
    "isend", "monitored_barrier", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]


def _check_timeout(timeout, fn):
    if timeout is None:
        return _DEFAULT_TIMEOUT
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"{fn}(): Expected timeout argument to be of type datetime.timedelta, "
                        f"got {type(timeout).__name__}")
    return timeout


def _agree(fn, arg, given, actual):
    if given is not None and int(given) != -1 and int(given) != actual:
        raise ValueError(f"{fn}(): {arg}={given}, but MPI started this process as "
                         f"{arg} {actual}: launch the job with mpiexec -n N or python -m "
                         f"ember.distributed.run (the MPI job defines ranks and world size)")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the MPI job as the default process group.

    Args:
        backend (str, optional): ``"mpi"``, ``"gloo"`` or ``"nccl"``: all run on MPI.
        init_method (str, optional): accepted for compatibility (MPI connects the ranks).
        timeout (timedelta, optional): how long an operation may wait for its peers before
            it fails naming them (default 30 minutes).
        world_size (int, optional): must equal the MPI job's size when given.
        rank (int, optional): must equal this process's MPI rank when given.
    """
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    backend = _parse_backend(backend)
    timeout = _check_timeout(timeout, "init_process_group")
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    for arg, given, env, actual in (("world_size", world_size, "WORLD_SIZE", world.Get_size()),
                                    ("rank", rank, "RANK", world.Get_rank())):
        _agree("init_process_group", arg, given, actual)
        _agree("init_process_group", arg, os.environ.get(env), actual)
    _world.control = _faults.Control(world.Dup())
    _world.backend = backend
    _world.default_pg = ProcessGroup(world.Dup(), range(world.Get_size()), backend, timeout,
                                     "0", "default_pg")
    _world.groups["0"] = _world.default_pg
    _faults.install_abort_on_uncaught_exception()


def destroy_process_group(group=None):
    """Destroy ``group`` (None: every group, and the default one: init may run again)."""
    if group is None or group is GroupMember.WORLD:
        if _world.default_pg is None:
            raise _not_initialized()
        for pg in _world.groups.values():
            pg._free()
        _world.control.comm.Free()
        _world.reset()
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = resolve(group)
    _world.groups.pop(pg._name, None)
    pg._free()


def is_initialized():
    """Whether the default process group has been initialised."""
    return _world.default_pg is not None


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    """gloo runs on MPI in ember: available wherever MPI is."""
    return _mpi.available()


def is_nccl_available():
    return False


def is_backend_available(backend):
    return str(Backend(backend)) in (Backend.MPI, Backend.GLOO) and _mpi.available()


def is_torchelastic_launched():
    """Whether this process was started by a torchrun-style launcher
    (``python -m ember.distributed.run``)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def get_rank(group=None):
    """This process's rank in ``group`` (the default group: its global rank); -1 when it is
    not a member."""
    pg = resolve(group)
    return -1 if pg is None else pg._rank


def get_world_size(group=None):
    """The number of ranks in ``group``; -1 when this process is not a member."""
    pg = resolve(group)
    return -1 if pg is None else pg._size


def get_backend(group=None):
    """The backend name ``group`` was created with."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group):
    """The global ranks of ``group``'s members, in group order."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return list(pg._ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group``'s member ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of global rank ``global_rank``."""
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A process group of the global ``ranks`` (None: all).  Every rank calls it (with
    ``use_local_synchronization=True``, only the members); non-members get
    ``GroupMember.NON_GROUP_MEMBER``."""
    base = default_pg()
    timeout = _check_timeout(timeout, "new_group")      # None: 30 minutes, as PyTorch's
    members = list(range(base._size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members) or any(not 0 <= r < base._size for r in members):
        raise ValueError(f"new_group(): ranks {ranks} must be distinct ranks of the default "
                         f"group (0..{base._size - 1})")
    _world.group_count += 1
    name = str(_world.group_count)
    me = base._rank
    if me not in members:
        return GroupMember.NON_GROUP_MEMBER
    # created from the world communicator, on which ember starts nothing else
    world = _mpi.mpi().COMM_WORLD
    mpi_group = world.Get_group().Incl(members)
    comm = world.Create_group(mpi_group, tag=_world.group_count)
    mpi_group.Free()
    backend = base._backend if backend is None else _parse_backend(backend)
    pg = ProcessGroup(comm, members, backend, timeout, name, group_desc or "undefined")
    _world.groups[name] = pg
    return pg
