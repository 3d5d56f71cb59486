"""ember.utils.data._utils.collate / .worker (PyTorch's import paths for the collate and
worker helpers): the names torch has there, the same objects as ember.utils.data's, and the
same batches as torch's default_collate; a custom collate built on collate_fn_map."""
import collections
import importlib

import numpy as np
import pytest
import torch
import torch.utils.data._utils.collate as tcollate

import ember
import ember.utils.data as data
import ember.utils.data._utils.collate as ecollate
import ember.utils.data._utils.worker as eworker

COLLATE_NAMES = ["collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn",
                 "collate_numpy_scalar_fn", "collate_str_fn", "collate_tensor_fn",
                 "default_collate", "default_collate_err_msg_format", "default_collate_fn_map",
                 "default_convert", "np_str_obj_array_pattern"]


@pytest.mark.parametrize("name", COLLATE_NAMES)
def test_collate_module_has_torchs_names(name):
    assert hasattr(tcollate, name)
    assert hasattr(ecollate, name)


def test_same_objects_as_the_package_and_reachable_as_attributes():
    assert ecollate.default_collate is data.default_collate
    assert ecollate.default_convert is data.default_convert
    assert ember.utils.data._utils.collate is ecollate
    assert ember.utils.data._utils.worker is eworker
    assert eworker.get_worker_info is data.get_worker_info
    assert eworker.get_worker_info() is None
    for name in ("ExceptionWrapper", "MP_STATUS_CHECK_INTERVAL", "WorkerInfo",
                 "get_worker_info"):
        assert hasattr(importlib.import_module("torch.utils.data._utils.worker"), name)
        assert hasattr(eworker, name)
    assert ember.utils.data._utils.ExceptionWrapper is eworker.ExceptionWrapper
    assert ember.utils.data._utils.HAS_NUMPY is True


Point = collections.namedtuple("Point", "x y")


def _samples(lib):
    return [{"a": lib.tensor([1.0, float(i)]), "b": i, "c": 0.5 * i, "d": f"s{i}",
             "e": Point(np.float32(i), np.arange(2) + i), "f": (i, [i, i + 1])}
            for i in range(3)]


def _plain(x):
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("nt",) + tuple(_plain(v) for v in x)
    if isinstance(x, (list, tuple)):
        return [type(x).__name__] + [_plain(v) for v in x]
    return x


def test_default_collate_matches_torch():
    assert _plain(ecollate.default_collate(_samples(ember))) == \
        _plain(tcollate.default_collate(_samples(torch)))


def test_per_type_functions_match_torch():
    batch_e = [ember.tensor([1, 2]), ember.tensor([3, 4])]
    batch_t = [torch.tensor([1, 2]), torch.tensor([3, 4])]
    assert _plain(ecollate.collate_tensor_fn(batch_e)) == _plain(tcollate.collate_tensor_fn(batch_t))
    assert _plain(ecollate.collate_float_fn([1.0, 2.5])) == _plain(tcollate.collate_float_fn([1.0, 2.5]))
    assert _plain(ecollate.collate_int_fn([1, 2])) == _plain(tcollate.collate_int_fn([1, 2]))
    assert ecollate.collate_str_fn(["a", "b"]) == tcollate.collate_str_fn(["a", "b"])
    arrays = [np.ones(2, np.float32), np.zeros(2, np.float32)]
    assert _plain(ecollate.collate_numpy_array_fn(arrays, collate_fn_map=ecollate.default_collate_fn_map)) == \
        _plain(tcollate.collate_numpy_array_fn(arrays, collate_fn_map=tcollate.default_collate_fn_map))
    assert _plain(ecollate.collate_numpy_scalar_fn([np.int32(1), np.int32(2)])) == \
        _plain(tcollate.collate_numpy_scalar_fn([np.int32(1), np.int32(2)]))
    assert ecollate.default_collate_err_msg_format == tcollate.default_collate_err_msg_format
    assert ecollate.np_str_obj_array_pattern.pattern == tcollate.np_str_obj_array_pattern.pattern


def test_custom_collate_fn_map_extends_the_default():
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    for mod in (ecollate, tcollate):
        fn_map = {**mod.default_collate_fn_map, Box: collate_box}
        out = mod.collate([{"box": Box(1), "n": 1}, {"box": Box(2), "n": 2}],
                          collate_fn_map=fn_map)
        assert out["box"] == 3 and out["n"].tolist() == [1, 2]


def test_default_convert_matches_torch():
    sample = {"x": np.arange(3), "y": [np.float64(1.5)], "z": "keep"}
    assert _plain(ecollate.default_convert(sample)) == _plain(tcollate.default_convert(sample))
