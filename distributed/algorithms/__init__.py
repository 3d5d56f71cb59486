"""``ember.distributed.algorithms``: the join context manager for uneven inputs and
DistributedDataParallel's communication hooks (``ddp_comm_hooks``)."""
from .join import Join as Join
from .join import Joinable as Joinable
from .join import JoinHook as JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
