"""DistributedSampler against torch's: the same shards, padding and drop_last for every size
and replica count, and (given the same permutation) the same shuffled shards."""
import pytest
import torch
import torch.utils.data.distributed as tdist

import ember
from ember.utils.data import DistributedSampler


def shards(cls, n, replicas, **kw):
    return [list(cls(range(n), num_replicas=replicas, rank=r, **kw)) for r in range(replicas)]


@pytest.mark.parametrize("n", [0, 1, 5, 8, 11, 12])
@pytest.mark.parametrize("replicas", [1, 2, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_shards_match_torch(n, replicas, drop_last):
    if n == 0 and not drop_last:
        pytest.skip("torch divides by zero padding an empty dataset")
    ours = shards(DistributedSampler, n, replicas, shuffle=False, drop_last=drop_last)
    theirs = shards(tdist.DistributedSampler, n, replicas, shuffle=False, drop_last=drop_last)
    assert ours == theirs
    assert [len(DistributedSampler(range(n), replicas, r, drop_last=drop_last))
            for r in range(replicas)] == [len(s) for s in theirs]


def ember_permutation(n, generator=None, **kw):
    """torch.randperm replaced by ember's permutation for the same seed."""
    g = ember.Generator()
    g.manual_seed(generator.initial_seed())
    return torch.tensor(ember.randperm(n, generator=g).tolist())


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (7, 2, False),
                                                    (4, 6, False)])
def test_shuffled_shards_match_torch_given_the_same_permutation(monkeypatch, n, replicas,
                                                                 drop_last):
    for epoch in (0, 3):
        ours = []
        for r in range(replicas):
            s = DistributedSampler(range(n), replicas, r, seed=5, drop_last=drop_last)
            s.set_epoch(epoch)
            ours.append(list(s))
        with monkeypatch.context() as m:
            m.setattr(torch, "randperm", ember_permutation)
            theirs = []
            for r in range(replicas):
                s = tdist.DistributedSampler(range(n), replicas, r, seed=5, drop_last=drop_last)
                s.set_epoch(epoch)
                theirs.append(list(s))
        assert ours == theirs


def test_epochs_and_seeds_change_the_order():
    a = DistributedSampler(range(50), 2, 0, seed=1)
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first and sorted(first) != first
    assert list(DistributedSampler(range(50), 2, 0, seed=2)) != first
    assert list(DistributedSampler(range(50), 2, 0, seed=1)) == first


def test_bad_rank_is_torchs_value_error():
    with pytest.raises(ValueError) as te:
        tdist.DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError) as ee:
        DistributedSampler(range(4), num_replicas=2, rank=2)
    assert str(ee.value) == str(te.value)


def test_defaults_need_a_process_group():
    with pytest.raises(ValueError, match="has not been initialized"):
        DistributedSampler(range(4))
