"""What every operation does first: check its arguments as PyTorch does, find its group (or
do nothing on a rank outside it), and queue its phases as a Work."""
import warnings

import ember

from . import _mpi, _process_group
from ._signature import check_phase
from ._work import Phase, Work, dist_error, run

__all__ = []


def check_tensor(t, name):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"ember.Tensor\n             but got {type(t)} instead.")


def check_tensor_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, ember.Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[ember.Tensor]\n             but got {type(ts)} instead.")


def check_like(fn, name, tensors, like):
    """Every tensor of ``tensors`` has ``like``'s dtype and number of elements."""
    for i, t in enumerate(tensors):
        if t.dtype != like.dtype or t.numel() != like.numel():
            raise ValueError(f"{fn}(): {name}[{i}] is {t.dtype}{list(t.shape)}, but every "
                             f"tensor must match {like.dtype}{list(like.shape)}")


def check_count(fn, name, tensors, pg):
    if len(tensors) != pg._size:
        raise ValueError(f"{fn}(): {name} holds {len(tensors)} tensors, but the group has "
                         f"{pg._size} ranks")


def group_of(group, fn):
    """The ProcessGroup ``fn`` runs on, or None (with PyTorch's warning) on a non-member."""
    pg = _process_group.resolve(group)
    if pg is None:
        from ._process_group import _world
        rank = _world.default_pg._ranks[_world.default_pg._rank]
        warnings.warn(f"Running {fn} on global rank {rank} which does not belong to the given "
                      f"group.", stacklevel=3)
        return None
    pg._check_usable(fn)
    return pg


def collective(pg, fn, sig, phases, async_op, outputs=(), checked=True, payload=None,
               finish=None):
    """Run a collective: the signature check (unless ``checked`` is False: the caller
    guarantees equal arguments everywhere), then ``phases``.  A ``payload`` (uint8) that
    ``fits`` rides in the check; ``finish(rows)`` completes the collective from every rank's
    (see _signature.check_phase).  Returns the Work with ``async_op``, else None."""
    phases = list(phases)
    if checked:
        phases.insert(0, check_phase(pg, sig, payload, finish))
    elif not phases:
        phases.append(Phase(lambda: []))
    if async_op or pg._queue:
        return run(Work(pg, (fn, pg._next_seq()), phases, pg._peers, outputs), async_op)
    return _now(pg, fn, phases, outputs)


_SPINS = 64        # polls before a blocking call hands its wait to a Work (timeout, blame)
HANDED_OVER = object()


def wait_inline(pg, fn, seq, requests, then, rest=(), outputs=()):
    """Wait here for ``requests`` of operation ``seq`` on ``pg`` while they complete within a
    few polls, then return ``then()``.  A longer wait becomes a Work's (the group's timeout,
    liveness answers, blame), which also runs ``then`` and the phases ``rest``: the answer is
    then HANDED_OVER."""
    spins = 0
    while not _mpi.testall(requests):
        spins += 1
        if spins == _SPINS:
            work = Work(pg, (fn, seq), rest, pg._peers, outputs, queued=False)
            work._adopt(requests, then)
            work._wait()
            return HANDED_OVER
    return then() if then is not None else None


def _now(pg, fn, phases, outputs):
    """A blocking collective on an idle group, run here without a Work (the Python cost of a
    small collective is most of its time) unless a wait lasts (see wait_inline)."""
    seq = pg._next_seq()
    try:
        while phases:
            phase = phases.pop(0)
            more = wait_inline(pg, fn, seq, phase.start(), phase.then, phases, outputs)
            if more is HANDED_OVER:
                return None
            if more:
                phases[:0] = more
    except Exception as exc:
        err = dist_error(exc, Work(pg, (fn, seq), (), pg._peers, queued=False))
        if err is exc:
            raise
        raise err from exc
    return None
