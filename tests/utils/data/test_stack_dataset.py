"""StackDataset: datasets side by side as tuples or dicts, against torch."""
import pytest
import torch.utils.data as tud

import ember
from ember.utils import data as eud


class _Batched(eud.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * 10

    def __getitems__(self, indices):
        return [i * 100 for i in indices]


def test_tuple_and_dict_items_match_torch():
    a, b = list(range(5)), [str(i) for i in range(5)]
    assert [eud.StackDataset(a, b)[i] for i in range(5)] == \
        [tud.StackDataset(a, b)[i] for i in range(5)]
    assert eud.StackDataset(x=a, y=b)[3] == tud.StackDataset(x=a, y=b)[3] == {"x": 3, "y": "3"}
    assert len(eud.StackDataset(a, b)) == 5


def test_getitems_uses_the_datasets_own():
    e = eud.StackDataset(_Batched(4), list(range(4)))
    assert e.__getitems__([1, 3]) == [(100, 1), (300, 3)]
    d = eud.StackDataset(p=_Batched(4), q=list(range(4)))
    assert d.__getitems__([2]) == [{"p": 200, "q": 2}]


def test_errors():
    with pytest.raises(ValueError, match="Size mismatch"):
        eud.StackDataset([1, 2], [1])
    with pytest.raises(ValueError):
        eud.StackDataset()
    with pytest.raises(ValueError):
        eud.StackDataset([1], x=[1])


def test_dataloader_over_stack_dataset():
    images = ember.arange(12.0).reshape(6, 2)
    labels = ember.arange(6)
    loader = eud.DataLoader(eud.StackDataset(images, labels), batch_size=4)
    batches = list(loader)
    assert len(batches) == 2
    x, y = batches[0]
    assert tuple(x.shape) == (4, 2) and y.tolist() == [0, 1, 2, 3]
