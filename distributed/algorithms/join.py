"""The generic join context manager for uneven inputs (PyTorch's
``torch.distributed.algorithms.join``): a rank whose inputs run out keeps answering the
collectives of the ranks still training (its Joinables' hooks shadow them) until every rank
has joined."""
import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

import ember

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """What a Joinable does under Join: ``main_hook()`` shadows one training iteration's
    collectives while some rank has not joined; ``post_hook(is_last_joiner)`` runs once
    every rank has."""

    def main_hook(self):
        """Shadow the collectives of one iteration of the ranks still training."""

    def post_hook(self, is_last_joiner):
        """Run after every rank has joined; ``is_last_joiner``: this rank was among the last
        to run out of inputs."""


class Joinable(ABC):
    """A class that takes part in Join: ``join_hook(**kwargs)`` gives its JoinHook;
    ``join_device`` and ``join_process_group`` say where Join's own collectives run."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """This Joinable's JoinHook (``kwargs``: Join's keyword arguments)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of Join's collectives."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group of Join's collectives."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


_SKEW_WARNING = 1000


class Join:
    """Context manager for training on uneven inputs.

    Args:
        joinables (List[Joinable]): the participants; their hooks run in this order.
        enable (bool): False turns uneven-input handling off (default True).
        throw_on_early_termination (bool): raise on every rank once one rank runs out of
            inputs, instead of shadowing (default False).
        **kwargs: passed to every ``join_hook``.

    Each Joinable calls ``Join.notify_join_context(self)`` before its collectives of an
    iteration; on exit, a rank counts the ranks still training (an all-reduce they match
    from ``notify_join_context``) and runs the main hooks until none is left.
    """

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        group = None
        for j in joinables:
            if group is None:
                group = j.join_process_group
            elif group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
        self._process_group = group
        self._device = joinables[0].join_device
        self._rank = ember.distributed.get_rank(group)

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return                      # an error in the block propagates as is
        is_last_joiner = True
        i = 0
        while True:
            if i == _SKEW_WARNING + 1:
                warnings.warn(f"Detected uneven input skew of greater than {_SKEW_WARNING}. "
                              f"This means that rank {self._rank} has at least "
                              f"{_SKEW_WARNING} fewer inputs than other currently-active "
                              f"ranks. This level of skew could lead to performance "
                              f"degradation during training.", stacklevel=2)
            if self._count(0.0) == 0:
                break
            if self._throw_on_early_termination:
                self._count(1.0)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count(self, mine):
        """The sum over the ranks of ``mine`` (0 here: joined; 1 from a rank training)."""
        t = ember.full((1,), mine, device=self._device)
        ember.distributed.all_reduce(t, group=self._process_group)
        return t.item()

    @staticmethod
    def notify_join_context(joinable):
        """Tell the join context that this rank has not joined (an all-reduce of 1 the
        joined ranks match); with throw_on_early_termination, raise if some rank has.
        Returns the all-reduce's Work for the first Joinable (the count of ranks still
        training, once waited on), else None."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 f"``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        dist = ember.distributed
        ones = ember.ones(1, device=joinable.join_device)
        work = dist.all_reduce(ones, group=joinable.join_process_group, async_op=True)
        work._join_count = ones
        if config.throw_on_early_termination:
            zeros = ember.zeros(1, device=joinable.join_device)
            dist.all_reduce(zeros, group=joinable.join_process_group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
