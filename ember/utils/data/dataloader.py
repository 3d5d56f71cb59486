"""DataLoader: batches from a map-style or iterable dataset, in this process or in worker
processes (``num_workers > 0``; see ``_worker.py`` for what a worker runs)."""
import itertools
import math
import multiprocessing
import multiprocessing.context
import os
import queue
import sys
import time
import warnings
from typing import Generic

import ember

from ._collate import default_collate, default_convert
from ._worker import (
    MP_STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    _create_fetcher,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    get_worker_info,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _T_co


class _DatasetKind:
    """Whether a DataLoader indexes its dataset (Map) or iterates it (Iterable), and the
    fetcher that reads batches of that kind."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        return _create_fetcher(kind == _DatasetKind.Iterable, dataset, auto_collation,
                               collate_fn, drop_last)

__all__ = ["DataLoader", "get_worker_info"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


def _mp_context(context):
    """A multiprocessing context from ``DataLoader(multiprocessing_context=...)``: a start
    method name or a context object; None is 'fork' on Linux (as torch) and the platform's
    default elsewhere."""
    if context is None:
        return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        ember._check_value(context in methods, lambda: (
            f"multiprocessing_context option should specify a valid start method in "
            f"{methods!r}, but got multiprocessing_context={context!r}"))
        context = multiprocessing.get_context(context)
    ember._check_type(isinstance(context, multiprocessing.context.BaseContext), lambda: (
        "multiprocessing_context option should be a valid context object or a string "
        f"specifying the start method, but got multiprocessing_context={context}"))
    return context


def _base_seed(generator):
    """The seed workers add their id to, drawn once per iterator from ``generator`` (or
    ember's global generator) in both single- and multi-process loading, as torch does, so
    both consume the same random numbers."""
    return ember.empty((), dtype=ember.int64).random_(generator=generator).item()


class _InfiniteConstantSampler:
    """The sampler of an iterable dataset: ``None`` forever (the dataset yields samples)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[_T_co]):
    """Iterate over ``dataset`` in batches: PyTorch's ``torch.utils.data.DataLoader``.

    Args:
        dataset (Dataset): map-style (indexed) or ``IterableDataset`` (a stream).
        batch_size (int or None): samples per batch (default 1); None disables batching.
        shuffle (bool): reshuffle every epoch (map-style datasets only).
        sampler (Sampler or iterable): the indices to draw; excludes ``shuffle``.
        batch_sampler (Sampler or iterable): lists of indices; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): worker processes that load batches (0, the default, loads in
            this process). Each worker runs with one thread and seeds ember's and Python's
            ``random`` generators with ``base_seed + worker_id``.
        collate_fn (callable): merges a list of samples (default ``default_collate``, or
            ``default_convert`` when batching is off).
        pin_memory (bool): accepted; CPU memory needs no pinning in ember.
        drop_last (bool): drop the last incomplete batch.
        timeout (float): seconds to wait for a batch from the workers before raising
            RuntimeError (0: wait forever; dead workers are still detected).
        worker_init_fn (callable): ``worker_init_fn(worker_id)`` runs in each worker after
            seeding, before it loads.
        multiprocessing_context (str or context): the start method of the workers
            (default 'fork' on Linux).
        generator (Generator): the ember generator ``shuffle`` and the workers' base seed
            draw from.
        prefetch_factor (int): batches each worker loads ahead (default 2 with workers).
        persistent_workers (bool): keep the workers alive between epochs.
        pin_memory_device (str): accepted, as ``pin_memory``.
        in_order (bool): accepted; batches always come back in sampler order.
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
        if multiprocessing_context is not None:
            multiprocessing_context = _mp_context(multiprocessing_context)
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
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
        # set by len() on an iterable dataset; iterators warn when they outrun it
        self._IterableDataset_len_called = None
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
            n = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self)
        iterator = self.__dict__.get("_iterator")
        if iterator is None:
            self._iterator = iterator = _MultiProcessingDataLoaderIter(self)
        else:
            iterator._reset(self)
        return iterator

class _BaseDataLoaderIter:
    """What every DataLoader iterator shares (torch's ``_BaseDataLoaderIter``): an
    iterator with ``len()``, a count of batches yielded, and the over-length warning for
    iterable datasets that report a length."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        if loader.pin_memory:
            # ember has no accelerator, so pinning never happens; torch says so too
            warnings.warn("'pin_memory' argument is set as true but no accelerator is "
                          "found, then device pinned memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        # drawn in both single- and multi-process loading so both consume the same RNG
        self._base_seed = _base_seed(loader.generator)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not "
                        "properly configuring the IterableDataset replica at each worker. "
                        "Please see https://pytorch.org/docs/stable/data.html#torch.utils."
                        "data.IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Batches fetched in this process (``num_workers == 0``)."""

    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._dataset_fetcher = _create_fetcher(self._iterable, self._dataset,
                                                self._auto_collation, self._collate_fn,
                                                self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)         # StopIteration ends the epoch
        return self._dataset_fetcher.fetch(index)   # so does an exhausted iterable


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Batches loaded by ``loader.num_workers`` worker processes, returned in sampler
    order: task ``i`` goes to the next worker still running, at most ``prefetch_factor``
    tasks per worker are in flight, and results that arrive early wait in ``_task_info``.
    An iterable dataset's worker that runs dry is retired; the epoch ends when all are."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        ctx = _mp_context(loader.multiprocessing_context)
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._done_event = ctx.Event()
        self._data_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()     # never block exit on unsent indices
            w = ctx.Process(target=_worker_loop, daemon=True, args=(
                self._iterable, self._dataset, index_queue, self._data_queue,
                self._done_event, loader._auto_collation, loader.collate_fn,
                loader.drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                self._num_workers))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        """Start an epoch: a new sampler pass, all workers active, tasks prefetched.
        Persistent workers are first told to restart their fetchers and acknowledge, so
        leftovers of an abandoned epoch are dropped."""
        super()._reset(loader, first_iter)
        self._send_idx = self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _next_data(self):
        while True:
            # skip tasks of retired workers that will never answer
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process_data(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)      # early: keep it for its turn
                continue
            del self._task_info[idx]
            return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _try_put_index(self):
        """Send the sampler's next index to the next active worker (if any remains)."""
        if not any(self._workers_status):
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """The next ``(task index, data)`` from any worker. Waits in short slices, checking
        between them that every worker lives, so a dead worker raises instead of hanging;
        raises RuntimeError after ``timeout`` seconds when that is set."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = MP_STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                pass
            self._check_workers_alive()
            if deadline is not None and time.monotonic() >= deadline:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _check_workers_alive(self):
        dead = [w for w, active in zip(self._workers, self._workers_status)
                if active and not w.is_alive()]
        if dead:
            self._shutdown_workers()
            which = ", ".join(f"{w.pid} (exit code {w.exitcode})" for w in dead)
            raise RuntimeError(f"DataLoader worker (pid(s) {which}) exited unexpectedly")

    def _shutdown_workers(self):
        """Stop the workers (a None on each index queue, then join; terminate those that
        do not exit) and close the queues. Safe to call more than once."""
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            q.put(None)
        for w in self._workers:
            w.join(timeout=MP_STATUS_CHECK_INTERVAL * 4)
            if w.is_alive():
                w.terminate()
                w.join()
        for q in self._index_queues:
            q.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self):
        # a forked worker of another loader inherits this object; only the process that
        # started the workers may stop them (it shares the done event and queues)
        if "_shutdown" in self.__dict__ and self._owner_pid == os.getpid():
            self._shutdown_workers()
