"""What a DataLoader worker process runs: PyTorch's ``torch.utils.data._utils.worker``.

A worker owns one index queue (the main process sends ``(task index, sampler output)``
pairs, ``_ResumeIteration`` to start a new epoch of persistent workers, ``None`` to stop)
and shares one result queue on which it puts ``(task index, batch or ExceptionWrapper)``.
The fetchers here also serve the single-process path, so both load batches the same way."""
import os
import queue
import random
import sys
import traceback

import ember

__all__ = ["WorkerInfo", "get_worker_info"]

# how often a blocked worker checks that its parent still lives, and how often the main
# process checks that its workers still live while it waits for a batch (seconds)
MP_STATUS_CHECK_INTERVAL = 0.5

_worker_info = None


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``,
    ``seed`` (this worker's base seed) and ``dataset`` (this worker's copy of it).
    Attributes are read-only once set."""

    _initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self._initialized = True

    def __setattr__(self, key, val):
        if self._initialized:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{type(self).__name__}({items})"


def get_worker_info():
    """The ``WorkerInfo`` of the DataLoader worker process this runs in; ``None`` in the
    main process. An ``IterableDataset`` uses it to give each worker its own shard."""
    return _worker_info


class _KeyErrorMessage(str):
    """A KeyError's argument whose repr is the text itself (KeyError shows the repr, which
    would escape the traceback's newlines)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its type and its
    formatted traceback (traceback objects do not pickle)."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the exception again, its message naming the worker and holding the
        worker's traceback; a type that cannot be built from a message becomes
        RuntimeError."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception       # no frame <-> traceback cycle keeping the loader alive


class _IterableDatasetStopIteration:
    """Sent by a worker whose iterable-dataset shard is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch (and echoed back)."""


class _MapDatasetFetcher:
    """Batches of a map-style dataset: ``dataset.__getitems__`` when it has one."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    """Batches pulled from an iterable dataset's iterator; ``StopIteration`` once the
    iterator is exhausted (or only a dropped partial batch is left)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(seed):
    """Seed ember's global generator, Python's ``random`` and NumPy's global generator for
    this worker (as PyTorch's workers do: a dataset drawing with np.random repeats)."""
    ember.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy as np
    except ImportError:
        return
    np.random.seed([seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF])


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of worker ``worker_id``: set up (one thread, seeds, ``WorkerInfo``,
    ``init_fn``), then answer index requests until told to stop or orphaned."""
    global _worker_info
    try:
        ember.set_num_threads(1)      # num_workers processes share the machine's cores
        seed = base_seed + worker_id
        _seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        parent = os.getppid()
        while True:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                # the main process died, or is shutting down: its final None may never
                # arrive (queues it closed while collecting garbage do not send it)
                if os.getppid() != parent or done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    fetcher = _create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                              drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue          # draining until the final None
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # the main process stopped reading: do not block exit on flushing the queue
        data_queue.cancel_join_thread()
        data_queue.close()
