"""Samplers: the index streams a DataLoader draws from (PyTorch's ``torch.utils.data``)."""
import itertools
from typing import Generic, TypeVar

import ember

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)     # Sampler[int], as PyTorch's generic Sampler

_CHUNK = 32     # indices drawn per random call: lazy for any num_samples, cheap per index


def _positive_int(value, name):
    ember._check_value(isinstance(value, int) and not isinstance(value, bool) and value > 0,
                       lambda: f"{name} should be a positive integer value, but got "
                       f"{name}={value}")


class Sampler(Generic[_T_co]):
    """Base class of samplers: subclasses implement ``__iter__`` (and ``__len__``)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _seeded_generator(generator):
    """``generator``, or a fresh one seeded from ember's global generator."""
    if generator is not None:
        return generator
    g = ember.Generator()
    g.manual_seed(ember.randint(0, 2 ** 62, ()).item())
    return g


class RandomSampler(Sampler[int]):
    """Random indices into ``data_source``.

    Args:
        data_source (Sized): what is sampled (only its length is used).
        replacement (bool): draw with replacement (default False: permutations).
        num_samples (int, optional): how many indices (default ``len(data_source)``);
            without replacement, more than the length repeats whole permutations.
        generator (Generator, optional): the ember generator to draw from.

    Indices are drawn lazily, a chunk at a time, so a huge ``num_samples`` costs nothing
    until iterated.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        ember._check_type(isinstance(replacement, bool), lambda: (
            f"replacement should be a boolean value, but got replacement={replacement}"))
        ember._check_value(isinstance(self.num_samples, int) and self.num_samples > 0,
                           lambda: "num_samples should be a positive integer value, but got "
                           f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = _seeded_generator(self.generator)
        total = self.num_samples
        if self.replacement:
            for start in range(0, total, _CHUNK):
                size = min(_CHUNK, total - start)
                yield from ember.randint(0, n, (size,), generator=g,
                                         dtype=ember.int64).tolist()
        else:
            for _ in range(total // n):
                yield from ember.randperm(n, generator=g).tolist()
            if total % n:
                yield from ember.randperm(n, generator=g).tolist()[:total % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (a new permutation per iteration)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _positive_int(num_samples, "num_samples")
        ember._check_value(isinstance(replacement, bool), lambda: (
            f"replacement should be a boolean value, but got replacement={replacement}"))
        w = ember.as_tensor(weights, dtype=ember.float64)
        ember._check_value(w.dim() == 1, lambda: (
            f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"))
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = ember.multinomial(self.weights, self.num_samples, self.replacement,
                                  generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Group the indices of ``sampler`` into lists of ``batch_size``; the last, shorter
    batch is dropped when ``drop_last``."""

    def __init__(self, sampler, batch_size, drop_last):
        _positive_int(batch_size, "batch_size")
        ember._check_value(isinstance(drop_last, bool), lambda: (
            f"drop_last should be a boolean value, but got drop_last={drop_last}"))
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
