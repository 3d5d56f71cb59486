"""Datasets: TensorDataset, ConcatDataset, ChainDataset, Subset, random_split vs torch."""
import collections.abc

import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata


def test_tensor_dataset():
    x, y = ember.arange(12).reshape(6, 2), ember.arange(6)
    ds = edata.TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    assert a.tolist() == [8, 9] and b.item() == 4
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        edata.TensorDataset(x, ember.arange(5))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tdata.TensorDataset(torch.zeros(6, 2), torch.arange(5))


def test_concat_dataset_matches_torch():
    parts = [list(range(3)), list(range(10, 15)), [], list(range(20, 22))]
    e, t = edata.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert len(e) == len(t) == 10 and e.cumulative_sizes == t.cumulative_sizes
    assert [e[i] for i in range(-10, 10)] == [t[i] for i in range(-10, 10)]
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        e[-11]
    with pytest.raises(IndexError):
        e[10]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        edata.ConcatDataset([])

    class Stream(edata.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        edata.ConcatDataset([Stream()])
    plus = edata.TensorDataset(ember.arange(2)) + edata.TensorDataset(ember.arange(3))
    assert isinstance(plus, edata.ConcatDataset) and len(plus) == 5


def test_chain_dataset():
    class Stream(edata.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chained = Stream(2) + Stream(3)
    assert isinstance(chained, edata.ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(edata.ChainDataset([[1, 2]]))


def test_subset():
    base = list(range(100, 110))
    s = edata.Subset(base, [3, 1, 7])
    assert len(s) == 3 and [s[i] for i in range(3)] == [103, 101, 107]
    assert s.__getitems__([2, 0]) == [107, 103]


def test_dataset_base():
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        edata.Dataset()[0]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.34, 0.33, 0.33],
                                     [1, 0, 9]])
def test_random_split_sizes_match_torch(lengths):
    data = list(range(10))
    e = edata.random_split(data, lengths, generator=ember.Generator().manual_seed(1))
    t = tdata.random_split(data, lengths, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in e] == [len(s) for s in t]
    items = sorted(x for s in e for x in (s[i] for i in range(len(s))))
    assert items == data
    again = edata.random_split(data, lengths, generator=ember.Generator().manual_seed(1))
    assert [s.indices for s in again] == [s.indices for s in e]


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        edata.random_split(list(range(10)), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        edata.random_split(list(range(10)), [0.5, 1.5, -1.0])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        edata.random_split(list(range(3)), [0.9, 0.1])


_GENERIC = ["Dataset", "IterableDataset", "Subset", "ConcatDataset", "StackDataset",
            "Sampler", "DistributedSampler", "DataLoader", "TensorDataset", "ChainDataset",
            "SequentialSampler", "BatchSampler"]


@pytest.mark.parametrize("name", _GENERIC)
def test_generic_classes_subscript_as_torch(name):
    # typed code writes Dataset[Tuple[Tensor, int]], Sampler[int], DataLoader[T], ...
    def outcome(lib):
        try:
            getattr(lib, name)[int]
            return "ok"
        except TypeError:
            return "TypeError"
    assert outcome(edata) == outcome(tdata)
    assert (getattr(edata, name).__parameters__ == ()) == \
        (getattr(tdata, name).__parameters__ == ())


def test_generic_subclasses_work():
    class Squares(edata.Dataset[int]):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 4

    class Stream(edata.IterableDataset[int]):
        def __iter__(self):
            return iter(range(3))

    loader = edata.DataLoader[int](Squares(), batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 1], [4, 9]]
    assert [b.tolist() for b in edata.DataLoader(Stream())] == [[0], [1], [2]]
    assert isinstance(Stream(), collections.abc.Iterable)
