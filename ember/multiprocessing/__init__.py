"""ember.multiprocessing (``torch.multiprocessing``): Python's multiprocessing, with
``spawn``/``start_processes`` to run a function in several processes (what training
launchers call).  ember tensors cross processes by pickling their data."""
import multiprocessing
from multiprocessing import *  # noqa: F403

from ember.multiprocessing.spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = list(multiprocessing.__all__) + ["ProcessContext", "ProcessExitedException",
                                           "ProcessRaisedException", "get_all_sharing_strategies",
                                           "get_sharing_strategy", "set_sharing_strategy",
                                           "spawn", "start_processes"]

_sharing_strategy = "file_system"


def get_all_sharing_strategies():
    """The ways tensors may be shared between processes: ember pickles their data."""
    return {"file_system"}


def get_sharing_strategy():
    return _sharing_strategy


def set_sharing_strategy(new_strategy):
    """Only 'file_system' exists in ember."""
    global _sharing_strategy
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"invalid sharing strategy {new_strategy!r}")
    _sharing_strategy = new_strategy
