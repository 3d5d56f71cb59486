"""Datasets: the map-style and iterable protocols, and the wrappers PyTorch ships
(TensorDataset, ConcatDataset, ChainDataset, Subset, random_split)."""
import bisect
import itertools
import math
import warnings
from typing import Generic, Iterable, TypeVar

import ember

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "Subset",
           "TensorDataset", "random_split"]

# the type parameters of PyTorch's generic datasets (Dataset[Tuple[Tensor, int]], ...)
_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)
_T_stack = TypeVar("_T_stack", tuple, dict)


def _check_assert(cond, message):
    # PyTorch raises AssertionError for these; raised explicitly so `python -O` keeps them
    if not cond:
        raise AssertionError(message)


class Dataset(Generic[_T_co]):
    """A map-style dataset: ``__getitem__(index)`` and usually ``__len__``.
    ``a + b`` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A dataset that is a stream: subclasses implement ``__iter__``. ``a + b`` chains."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are ``tuple(t[index] for t in tensors)``; every tensor has the same size(0).

    Args:
        *tensors (Tensor): tensors indexed together along their first dimension.
    """

    def __init__(self, *tensors):
        _check_assert(all(tensors[0].size(0) == t.size(0) for t in tensors),
                      "Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset[_T_co]):
    """Map-style datasets one after another.

    Args:
        datasets (iterable of Dataset): the parts, in order (not iterable datasets).
    """

    @staticmethod
    def cumsum(sequence):
        """Running totals of the parts' lengths."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        _check_assert(len(self.datasets) > 0, "datasets should not be an empty iterable")
        for d in self.datasets:
            _check_assert(not isinstance(d, IterableDataset),
                          "ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            ember._check_value(-idx <= len(self),
                               "absolute value of index should not exceed dataset length")
            idx += len(self)
        part = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after another (lazily)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def _parts(self):
        for d in self.datasets:
            _check_assert(isinstance(d, IterableDataset),
                          "ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self):
        for d in self._parts():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._parts())


class Subset(Dataset[_T_co]):
    """The samples of ``dataset`` at ``indices``.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence of int): the positions the subset keeps, in its order.
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        picked = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(picked)
        return [self.dataset[i] for i in picked]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given ``lengths``.

    Args:
        dataset (Dataset): the dataset to split.
        lengths (sequence of int or float): sizes, or fractions summing to 1 (each part gets
            ``floor(len * frac)`` and the remainder is dealt out one by one from the first).
        generator (Generator, optional): the ember generator that draws the permutation.
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            ember._check_value(0 <= frac <= 1,
                               lambda: f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(n * frac))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, size in enumerate(lengths):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    ember._check_value(sum(lengths) == n, "Sum of input lengths does not equal the length of "
                       "the input dataset!")
    order = ember.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, order[end - size:end])
            for end, size in zip(itertools.accumulate(lengths), lengths)]


class StackDataset(Dataset[_T_stack]):
    """Datasets side by side: item i is ``(d[i] for d in args)`` as a tuple, or
    ``{name: d[i]}`` as a dict (``StackDataset(image=images, text=texts)``)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """A batch of items, using each dataset's own __getitems__ where it has one."""
        def column(dataset):
            if callable(getattr(dataset, "__getitems__", None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(items)}")
                return items
            return [dataset[i] for i in indices]
        if isinstance(self.datasets, dict):
            columns = {k: column(d) for k, d in self.datasets.items()}
            return [{k: columns[k][j] for k in columns} for j in range(len(indices))]
        columns = [column(d) for d in self.datasets]
        return [tuple(c[j] for c in columns) for j in range(len(indices))]

    def __len__(self):
        return self._length


__all__ += ["StackDataset"]
