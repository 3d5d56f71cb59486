"""Samplers against torch's: lengths, contents, laziness, errors."""
import itertools

import pytest
import torch.utils.data as tdata

import ember
import ember.utils.data as edata


def test_sequential():
    assert list(edata.SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert len(edata.SequentialSampler(range(5))) == 5


@pytest.mark.parametrize("num_samples", [None, 3, 10, 23])
def test_random_without_replacement(num_samples):
    s = edata.RandomSampler(range(10), num_samples=num_samples,
                            generator=ember.Generator().manual_seed(0))
    out = list(s)
    n = num_samples or 10
    assert len(out) == len(s) == n == len(tdata.RandomSampler(range(10), num_samples=num_samples))
    for start in range(0, n - n % 10, 10):   # every full block is a permutation
        assert sorted(out[start:start + 10]) == list(range(10))
    assert len(set(out[n - n % 10:])) == n % 10


def test_random_with_replacement_and_generator():
    a = list(edata.RandomSampler(range(7), True, 100, ember.Generator().manual_seed(5)))
    b = list(edata.RandomSampler(range(7), True, 100, ember.Generator().manual_seed(5)))
    assert a == b and len(a) == 100 and set(a) <= set(range(7)) and len(set(a)) > 1


def test_random_sampler_is_lazy():
    s = edata.RandomSampler(range(10), replacement=True, num_samples=10 ** 10)
    assert len(s) == 10 ** 10
    first = list(itertools.islice(iter(s), 50))
    assert len(first) == 50 and all(0 <= i < 10 for i in first)
    s2 = edata.RandomSampler(range(10), num_samples=10 ** 10)
    assert len(list(itertools.islice(iter(s2), 25))) == 25


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        edata.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        edata.RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        edata.RandomSampler([])


def test_subset_random_sampler():
    idx = [4, 8, 15, 16, 23]
    s = edata.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(2))
    assert sorted(s) == idx and len(s) == 5


def test_weighted_random_sampler():
    s = edata.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50)
    out = list(s)
    assert len(out) == 50 and set(out) <= {1, 3}
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        edata.WeightedRandomSampler([[1.0]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        edata.WeightedRandomSampler([1.0], 0)


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                       (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(n, bs, drop):
    e = edata.BatchSampler(edata.SequentialSampler(range(n)), bs, drop)
    t = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
    assert list(e) == list(t) and len(e) == len(t)


@pytest.mark.parametrize("kw,msg", [({"batch_size": 0, "drop_last": False}, "batch_size should be"),
                                    ({"batch_size": True, "drop_last": False}, "batch_size should be"),
                                    ({"batch_size": 2, "drop_last": 1}, "drop_last should be")])
def test_batch_sampler_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        edata.BatchSampler(range(3), **kw)
    with pytest.raises(ValueError, match=msg):
        tdata.BatchSampler(range(3), **kw)
