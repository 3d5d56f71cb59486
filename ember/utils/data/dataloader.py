"""DataLoader: batches from a map-style or iterable dataset, in this process."""
import math

import ember

from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


def get_worker_info():
    """Information about the current loader worker; ``None`` in the main process (ember
    loads in the main process only, so it is always ``None``)."""
    return None


class _InfiniteConstantSampler:
    """The sampler of an iterable dataset: ``None`` forever (the dataset yields samples)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches: PyTorch's ``torch.utils.data.DataLoader``.

    Args:
        dataset (Dataset): map-style (indexed) or ``IterableDataset`` (a stream).
        batch_size (int or None): samples per batch (default 1); None disables batching.
        shuffle (bool): reshuffle every epoch (map-style datasets only).
        sampler (Sampler or iterable): the indices to draw; excludes ``shuffle``.
        batch_sampler (Sampler or iterable): lists of indices; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): 0 loads in this process; worker processes are not built yet.
        collate_fn (callable): merges a list of samples (default ``default_collate``, or
            ``default_convert`` when batching is off).
        pin_memory (bool): accepted; CPU memory needs no pinning in ember.
        drop_last (bool): drop the last incomplete batch.
        timeout (float): accepted (only meaningful with workers); must be >= 0.
        worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers,
        pin_memory_device, in_order: worker options, validated as PyTorch does.
        generator (Generator): the ember generator ``shuffle`` draws from.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        ember._check_value(num_workers >= 0, "num_workers option should be non-negative; use "
                           "num_workers=0 to disable multiprocessing.")
        ember._check_value(timeout >= 0, "timeout option should be non-negative")
        ember._check_value(num_workers > 0 or prefetch_factor is None,
                           "prefetch_factor option could only be specified in "
                           "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                           "otherwise set prefetch_factor to None.")
        ember._check_value(prefetch_factor is None or prefetch_factor >= 0,
                           "prefetch_factor option should be non-negative")
        ember._check_value(not persistent_workers or num_workers > 0,
                           "persistent_workers option needs num_workers > 0")
        ember._check_value(multiprocessing_context is None or num_workers > 0, lambda: (
            "multiprocessing_context can only be used with multi-process loading "
            f"(num_workers > 0), but got num_workers={num_workers}"))
        ember._check_not_implemented(num_workers == 0, lambda: (
            f"DataLoader(num_workers={num_workers}): worker processes are not implemented "
            "in ember yet (a later issue adds multi-process loading); use num_workers=0"))
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            ember._check_value(shuffle in (False, None), lambda: (
                "DataLoader with IterableDataset: expected unspecified shuffle option, but "
                f"got shuffle={shuffle}"))
            ember._check_value(sampler is None, lambda: (
                "DataLoader with IterableDataset: expected unspecified sampler option, but "
                f"got sampler={sampler}"))
            ember._check_value(batch_sampler is None, lambda: (
                "DataLoader with IterableDataset: expected unspecified batch_sampler "
                f"option, but got batch_sampler={batch_sampler}"))
        else:
            shuffle = bool(shuffle)
        ember._check_value(sampler is None or not shuffle,
                           "sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            ember._check_value(batch_size == 1 and not shuffle and sampler is None
                               and not drop_last, "batch_sampler option is mutually "
                               "exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None:
            ember._check_value(not drop_last, "batch_size=None option disables auto-batching "
                               "and is mutually exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self._iterable = iterable
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True

    def __setattr__(self, name, value):
        if self.__dict__.get("_initialized") and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        return self._iter_iterable() if self._iterable else self._iter_map()

    def _iter_map(self):
        getitems = getattr(self.dataset, "__getitems__", None)
        for index in self._index_sampler:
            if not self._auto_collation:
                yield self.collate_fn(self.dataset[index])
            elif callable(getitems):
                yield self.collate_fn(getitems(index))
            else:
                yield self.collate_fn([self.dataset[i] for i in index])

    def _iter_iterable(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = [s for _, s in zip(range(self.batch_size), it)]
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
