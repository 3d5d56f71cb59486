"""DataLoader(num_workers > 0): worker processes give the batches num_workers=0 gives (and
torch's workers give), in order; per-worker seeds, worker_init_fn, get_worker_info and
IterableDataset sharding; worker exceptions, dead workers and timeouts raise instead of
hanging; persistent workers survive epochs; workers exit when the iterator goes away."""
import gc
import math
import os
import random
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata

TIMEOUT = 20      # every loader here gets a timeout: a broken loader fails, never hangs


class Squares:
    """Map-style: sample i is (i, i*i) as tensors of ``lib``."""

    def __init__(self, lib, n=11):
        self.lib, self.n = lib, n

    def __getitem__(self, i):
        return self.lib.tensor([i]), self.lib.tensor(float(i * i))

    def __len__(self):
        return self.n


class Shards:
    """Iterable: range(n), split between workers into contiguous shards via
    get_worker_info (PyTorch's documented recipe)."""

    def __init__(self, info_fn, n=13):
        self.info_fn, self.n = info_fn, n

    def __iter__(self):
        info = self.info_fn()
        start, end = 0, self.n
        if info is not None:
            per = int(math.ceil(self.n / info.num_workers))
            start = info.id * per
            end = min(start + per, self.n)
        return iter(range(start, end))


class EShards(Shards, edata.IterableDataset):
    pass


class TShards(Shards, tdata.IterableDataset):
    pass


def _plain(x):
    """A batch as nested Python lists/numbers (ember and torch batches compare equal)."""
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x.tolist() if hasattr(x, "tolist") else x


def _lists(batches):
    return [_plain(b) for b in batches]


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("kw", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                {"batch_size": None}, {"batch_size": 2, "prefetch_factor": 1},
                                {"batch_size": 4, "num_workers": 3}])
def test_map_batches_match_single_process_and_torch(kw):
    kw = {"num_workers": 2, **kw}
    workers = _lists(edata.DataLoader(Squares(ember), timeout=TIMEOUT, **kw))
    single = _lists(edata.DataLoader(Squares(ember), **{**kw, "num_workers": 0,
                                                        "prefetch_factor": None}))
    theirs = _lists(tdata.DataLoader(Squares(torch), timeout=TIMEOUT, **kw))
    assert workers == single == theirs


def test_shuffled_batches_match_single_process_with_a_generator():
    def run(num_workers):
        g = ember.Generator().manual_seed(7)
        return _lists(edata.DataLoader(Squares(ember, 17), batch_size=4, shuffle=True,
                                       generator=g, num_workers=num_workers))
    assert run(2) == run(0)
    assert sorted(b for batch in run(2) for b in batch[0]) == [[i] for i in range(17)]


def test_iterable_sharding_matches_torch():
    for kw in ({"batch_size": 2}, {"batch_size": None}, {"batch_size": 3, "drop_last": True}):
        ours = _lists(edata.DataLoader(EShards(edata.get_worker_info), num_workers=2,
                                       timeout=TIMEOUT, **kw))
        theirs = _lists(tdata.DataLoader(TShards(tdata.get_worker_info), num_workers=2,
                                         timeout=TIMEOUT, **kw))
        assert ours == theirs, kw
    flat = [x for b in edata.DataLoader(EShards(edata.get_worker_info), batch_size=2,
                                        num_workers=3) for x in b.tolist()]
    assert sorted(flat) == list(range(13))


class Probe(edata.Dataset):
    """Each sample reports where and with what state it was made."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = edata.get_worker_info()
        return {"id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "same_dataset": info.dataset is self, "pid": os.getpid(),
                "ember": ember.rand(()).item(), "random": random.random(),
                "numpy": float(np.random.rand()),
                "threads": ember.get_num_threads(),
                "init": getattr(self, "init_by", -1)}


def _probe(num_workers=2, seed=3, **kw):
    g = ember.Generator().manual_seed(seed)
    return list(edata.DataLoader(Probe(), batch_size=None, num_workers=num_workers,
                                 generator=g, timeout=TIMEOUT, **kw))


def test_worker_info_seeds_and_threads():
    a, b = _probe(), _probe()
    assert [s["id"] for s in a] == [0, 1, 0, 1]
    assert all(s["num_workers"] == 2 and s["same_dataset"] and s["threads"] == 1 for s in a)
    # seed = base_seed + worker_id; the same generator seed gives the same seeds and draws
    assert a[1]["seed"] == a[0]["seed"] + 1 and a[2]["seed"] == a[0]["seed"]
    assert a == [dict(s, pid=x["pid"]) for s, x in zip(b, a)]
    # the workers' generators were seeded differently: their first draws differ
    assert a[0]["ember"] != a[1]["ember"] and a[0]["random"] != a[1]["random"]
    assert a[0]["numpy"] != a[1]["numpy"]          # NumPy's global generator too
    # and as seeded: ember's and Python's generators start from seed
    ember.manual_seed(a[0]["seed"])
    random.seed(a[0]["seed"])
    assert (a[0]["ember"], a[0]["random"]) == (ember.rand(()).item(), random.random())
    assert _probe(seed=4)[0]["seed"] != a[0]["seed"]
    assert edata.get_worker_info() is None


def _mark_dataset(worker_id):
    edata.get_worker_info().dataset.init_by = worker_id * 10


def test_worker_init_fn_runs_in_each_worker():
    samples = _probe(worker_init_fn=_mark_dataset)
    assert [s["init"] for s in samples] == [0, 10, 0, 10]


class Failing(edata.Dataset):
    def __init__(self, exc, bad=5):
        self.exc, self.bad = exc, bad

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc(f"sample {i} is broken")
        if i == -1:
            os._exit(3)
        return i


@pytest.mark.parametrize("exc", [ValueError, KeyError, IndexError])
def test_worker_exception_is_reraised_with_its_traceback(exc):
    it = iter(edata.DataLoader(Failing(exc), batch_size=2, num_workers=2, timeout=TIMEOUT))
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(exc) as info:
        next(it)
    text = str(info.value)
    assert f"Caught {exc.__name__} in DataLoader worker process 0." in text
    assert "sample 5 is broken" in text and "Traceback (most recent call last)" in text
    assert "__getitem__" in text
    # the loader goes on with later batches, as torch's does
    assert next(it).tolist() == [6, 7]


def _fail_init(worker_id):
    raise RuntimeError(f"init of {worker_id} failed")


def test_worker_init_fn_exception_is_reraised():
    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process"):
        list(edata.DataLoader(Failing(ValueError), num_workers=1, worker_init_fn=_fail_init,
                              timeout=TIMEOUT))


def test_dead_worker_raises_instead_of_hanging():
    loader = edata.DataLoader(Failing(ValueError, bad=None), sampler=[0, 1, -1, 2],
                              num_workers=2, timeout=TIMEOUT)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+ \(exit code 3\)"
                                           r"\) exited unexpectedly"):
        list(loader)
    assert time.monotonic() - start < TIMEOUT / 2


class Slow(edata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1)
        return i


def test_timeout():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(iter(edata.DataLoader(Slow(), num_workers=1, timeout=0.3)))


def test_persistent_workers_are_reused_across_epochs():
    loader = edata.DataLoader(Probe(), batch_size=2, num_workers=2, persistent_workers=True,
                              timeout=TIMEOUT)
    first = list(loader)
    it = iter(loader)
    next(it)                        # abandon this epoch half way: leftovers are dropped
    third = list(loader)
    assert it is loader._iterator
    assert sorted(set(first[0]["pid"].tolist() + first[1]["pid"].tolist())) == \
        sorted(set(third[0]["pid"].tolist() + third[1]["pid"].tolist()))
    assert [b["id"].tolist() for b in third] == [[1, 1], [0, 0]] or \
        [b["id"].tolist() for b in third] == [[0, 0], [1, 1]]
    assert len(third) == 2
    # without persistence each epoch starts new processes
    plain = edata.DataLoader(Probe(), batch_size=2, num_workers=1, timeout=TIMEOUT)
    assert list(plain)[0]["pid"][0] != list(plain)[0]["pid"][0]


def test_persistent_iterable_dataset_restarts_each_epoch():
    loader = edata.DataLoader(EShards(edata.get_worker_info, n=6), batch_size=2,
                              num_workers=2, persistent_workers=True, timeout=TIMEOUT)
    assert _lists(loader) == _lists(loader) == [[0, 1], [3, 4], [2], [5]]


def test_workers_exit_when_the_iterator_is_deleted():
    it = iter(edata.DataLoader(Squares(ember, 50), num_workers=2, timeout=TIMEOUT))
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it
    gc.collect()
    assert not any(w.is_alive() for w in workers)


def test_spawn_context_and_context_errors():
    ds = edata.TensorDataset(ember.arange(6.0))
    out = edata.DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn",
                           timeout=60)
    assert [b[0].tolist() for b in out] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]
    with pytest.raises(ValueError, match="should specify a valid start method"):
        edata.DataLoader(ds, num_workers=1, multiprocessing_context="nope")
    with pytest.raises(TypeError, match="should be a valid context object"):
        edata.DataLoader(ds, num_workers=1, multiprocessing_context=3)
    assert edata.DataLoader(ds, num_workers=1).prefetch_factor == 2


def test_worker_info_is_read_only():
    from ember.utils.data._worker import WorkerInfo
    info = WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)
    assert repr(info) == "WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)"
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo"):
        info.id = 2
