"""DataLoader and default_collate/default_convert against torch's: batch structure, dtypes,
exact order when sequential, option errors."""
import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata

Point = collections.namedtuple("Point", "x y")


def _as_np(obj):
    """A batch's structure with every tensor replaced by (dtype name, numpy values)."""
    if isinstance(obj, (ember.Tensor, torch.Tensor)):
        return (str(obj.dtype).split(".")[-1], obj.numpy().tolist())
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.tolist())
    if isinstance(obj, dict):
        return {k: _as_np(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [_as_np(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_as_np(v) for v in obj])
    return obj


SAMPLES = {
    "tensor": lambda i, lib: lib.arange(3) * i,
    "float tensor": lambda i, lib: lib.full((2, 2), float(i)),
    "int": lambda i, lib: i,
    "float": lambda i, lib: i / 2,
    "bool": lambda i, lib: i % 2 == 0,
    "str": lambda i, lib: f"s{i}",
    "numpy": lambda i, lib: np.full(3, i, dtype=np.float32),
    "numpy scalar": lambda i, lib: np.int32(i),
    "tuple": lambda i, lib: (lib.ones(2) * i, i),
    "list": lambda i, lib: [i, i + 1.5],
    "dict": lambda i, lib: {"a": lib.tensor([i]), "b": {"c": f"x{i}", "d": i}},
    "namedtuple": lambda i, lib: Point(i, lib.tensor(float(i))),
}


class MapDS:
    def __init__(self, make, lib, n=7):
        self.make, self.lib, self.n = make, lib, n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.make(i, self.lib)

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kind", SAMPLES)
@pytest.mark.parametrize("bs,drop", [(1, False), (3, False), (3, True), (None, False)])
def test_sequential_batches_match_torch(kind, bs, drop):
    e = edata.DataLoader(MapDS(SAMPLES[kind], ember), batch_size=bs, drop_last=drop)
    t = tdata.DataLoader(MapDS(SAMPLES[kind], torch), batch_size=bs, drop_last=drop)
    assert len(e) == len(t)
    assert [_as_np(b) for b in e] == [_as_np(b) for b in t]


def test_tensor_dataset_loader_shuffled_structure():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    e = edata.DataLoader(edata.TensorDataset(ember.tensor(x), ember.arange(10)), batch_size=4,
                         shuffle=True, generator=ember.Generator().manual_seed(0))
    t = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.arange(10)), batch_size=4,
                         shuffle=True)
    eb, tb = list(e), list(t)
    assert [[tuple(p.shape) for p in b] for b in eb] == [[tuple(p.shape) for p in b] for b in tb]
    seen = sorted(i for _, idx in eb for i in idx.tolist())
    assert seen == list(range(10))
    for xb, ib in eb:   # rows stay paired with their index
        assert xb.tolist() == x[ib.numpy()].tolist()
    again = list(edata.DataLoader(e.dataset, batch_size=4, shuffle=True,
                                  generator=ember.Generator().manual_seed(0)))
    assert [b[1].tolist() for b in again] == [b[1].tolist() for b in eb]


class Stream(edata.IterableDataset):
    def __init__(self, n, lib=ember):
        self.n, self.lib = n, lib

    def __iter__(self):
        return (self.lib.tensor([i, -i]) for i in range(self.n))

    def __len__(self):
        return self.n


class TStream(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return (torch.tensor([i, -i]) for i in range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("bs,drop", [(1, False), (3, False), (3, True), (None, False), (20, False)])
def test_iterable_dataset_matches_torch(bs, drop):
    e = edata.DataLoader(Stream(8), batch_size=bs, drop_last=drop)
    t = tdata.DataLoader(TStream(8), batch_size=bs, drop_last=drop)
    assert len(e) == len(t)
    assert [_as_np(b) for b in e] == [_as_np(b) for b in t]


def test_batch_sampler_and_sampler_options():
    ds = MapDS(SAMPLES["int"], ember, n=6)
    e = edata.DataLoader(ds, batch_sampler=[[5, 0], [2, 3, 4]])
    assert [b.tolist() for b in e] == [[5, 0], [2, 3, 4]] and len(e) == 2
    e2 = edata.DataLoader(ds, sampler=[4, 2, 0], batch_size=2)
    assert [b.tolist() for b in e2] == [[4, 2], [0]]
    e3 = edata.DataLoader(ds, collate_fn=lambda batch: sum(batch), batch_size=3)
    assert list(e3) == [3, 12]


def test_getitems_is_used_for_batches():
    class Batched(MapDS):
        def __getitems__(self, idx):
            return [100 + i for i in idx]
    assert [b.tolist() for b in edata.DataLoader(Batched(None, None, 4), batch_size=2)] == \
        [[100, 101], [102, 103]]


@pytest.mark.parametrize("kw,err,msg", [
    ({"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
    ({"timeout": -1}, ValueError, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, ValueError, "prefetch_factor option could only be specified"),
    ({"persistent_workers": True}, ValueError, "persistent_workers option needs num_workers > 0"),
    ({"sampler": [0, 1], "shuffle": True}, ValueError, "sampler option is mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, ValueError, "batch_sampler option is mutually exclusive"),
    ({"batch_sampler": [[0]], "shuffle": True}, ValueError, "batch_sampler option is mutually exclusive"),
    ({"batch_sampler": [[0]], "drop_last": True}, ValueError, "batch_sampler option is mutually exclusive"),
    ({"batch_size": None, "drop_last": True}, ValueError, "batch_size=None option disables auto-batching"),
    ({"batch_size": 0}, ValueError, "batch_size should be a positive integer value"),
])
def test_option_errors_match_torch(kw, err, msg):
    with pytest.raises(err, match=msg):
        edata.DataLoader(MapDS(SAMPLES["int"], ember), **kw)
    with pytest.raises(err, match=msg):
        tdata.DataLoader(MapDS(SAMPLES["int"], torch), **kw)


@pytest.mark.parametrize("kw,msg", [({"shuffle": True}, "expected unspecified shuffle option"),
                                    ({"sampler": [0]}, "expected unspecified sampler option"),
                                    ({"batch_sampler": [[0]]}, "expected unspecified batch_sampler")])
def test_iterable_dataset_option_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        edata.DataLoader(Stream(3), **kw)
    with pytest.raises(ValueError, match=msg):
        tdata.DataLoader(TStream(3), **kw)


def test_frozen_attributes():
    dl = edata.DataLoader(MapDS(SAMPLES["int"], ember))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after"):
        dl.batch_size = 4
    assert edata.get_worker_info() is None


def test_default_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            edata.default_collate(bad)
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            tdata.default_collate(bad)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        edata.default_collate([[1, 2], [3]])


@pytest.mark.parametrize("data", [np.arange(3), np.float64(2.5), {"a": np.ones(2), "b": "s"},
                                  (np.zeros(2), 1), [np.ones(1), "x"], Point(np.ones(1), 2),
                                  np.array(["a", "b"]), "text", 3])
def test_default_convert_matches_torch(data):
    assert _as_np(edata.default_convert(data)) == _as_np(tdata.default_convert(data))


def test_string_columns_of_tuple_samples_collate_to_tuples():
    """zip's column as it is, as PyTorch's default_collate gives it: (image, name) datasets
    get a tuple of names."""
    import torch
    for batch in ([("a", 1), ("b", 2)], [["a", 1], ["b", 2]]):
        e = ember.utils.data.default_collate(batch)
        t = torch.utils.data.default_collate(batch)
        assert e[0] == t[0] and type(e[0]) is type(t[0]) is tuple
        assert e[1].tolist() == t[1].tolist()
    assert ember.utils.data.default_collate(["a", "b"]) == ["a", "b"]
