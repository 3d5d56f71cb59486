"""What every operation does first: check its arguments as PyTorch does, find its group (or
do nothing on a rank outside it), and queue its phases as a Work."""
import warnings

import ember

from . import _process_group
from ._signature import check_phase
from ._work import Phase, Work, run

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


def collective(pg, fn, sig, phases, async_op, outputs=(), checked=True):
    """Queue a collective: the signature check (unless ``checked`` is False: the caller
    guarantees equal arguments everywhere), then ``phases``."""
    phases = list(phases) or [Phase(lambda: [])]
    if checked:
        phases.insert(0, check_phase(pg, sig))
    return run(Work(pg, (fn, pg._next_seq()), phases, pg._peers, outputs), async_op)
