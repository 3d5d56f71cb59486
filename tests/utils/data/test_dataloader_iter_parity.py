"""DataLoader iterators against torch's: ``iter(loader)`` is an object with ``len()``
(torch's _SingleProcessDataLoaderIter), single-process loading rejects a timeout, the
over-length warning for iterable datasets, and the pin_memory-without-accelerator warning."""
import re
import warnings

import pytest
import torch
import torch.utils.data as tdata

import ember.utils.data as edata


class _Range:
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i


def _iterable(U, reported):
    class It(U.IterableDataset):
        def __iter__(self):
            return iter(range(5))

        def __len__(self):
            return reported
    return It()


@pytest.mark.parametrize("U", [edata, tdata])
def test_single_process_iterator_has_len(U):
    it = iter(U.DataLoader(_Range(), batch_size=4))
    assert type(it).__name__ == "_SingleProcessDataLoaderIter"
    assert len(it) == 3
    assert next(it).tolist() == [0, 1, 2, 3]
    assert iter(it) is it
    assert [b.tolist() for b in it] == [[4, 5, 6, 7], [8, 9]]


def test_iterator_class_names_match():
    for U in (edata, tdata):
        assert isinstance(iter(U.DataLoader(_Range())), U.dataloader._BaseDataLoaderIter)


def _err(U, **kw):
    with pytest.raises(Exception) as info:
        iter(U.DataLoader(_Range(), **kw))
    return type(info.value), str(info.value)


def test_single_process_timeout_rejected():
    assert _err(edata, timeout=5) == _err(tdata, timeout=5)


def _len_warnings(U, num_workers):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = U.DataLoader(_iterable(U, 3), batch_size=None, num_workers=num_workers)
        n = len(loader)
        out = [int(x) for x in loader]
    msgs = [re.sub(r" at 0x[0-9a-f]+", "", str(w.message)) for w in caught
            if "Length of IterableDataset" in str(w.message)]
    return n, out, msgs


@pytest.mark.parametrize("num_workers", [0, 1])
def test_iterable_length_warning(num_workers):
    assert _len_warnings(edata, num_workers) == _len_warnings(tdata, num_workers)


def test_no_length_warning_without_len_call():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [int(x) for x in edata.DataLoader(_iterable(edata, 3), batch_size=None)] == \
            list(range(5))


def _pin_warnings(U):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = [b.tolist() for b in U.DataLoader(_Range(), batch_size=5, pin_memory=True)]
    return out, [str(w.message) for w in caught if "pin_memory" in str(w.message)]


@pytest.mark.skipif(torch.accelerator.is_available(), reason="torch would pin here")
def test_pin_memory_without_accelerator_warns():
    assert _pin_warnings(edata) == _pin_warnings(tdata)
