"""ember-cpu's sort kernel (_sort.pyx: radix sort of order-preserving keys) against
PyTorch's stable sort: values bit for bit (-0.0 and NaN kept as they were) and indices,
over dtypes, ties, NaN, signed zeros, infinities, both directions, strided rows, short rows
(insertion sort) and long ones (radix passes)."""
import numpy as np
import pytest
import torch

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def _data(dtype, shape, seed):
    g = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return torch.from_numpy(g.integers(0, 2, n).astype(bool)).reshape(shape)
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -300), min(info.max, 300)
        vals = g.integers(lo, hi + 1, n)
        vals[: n // 10] = info.min           # the extremes: the keys' first and last
        vals[n // 10: n // 5] = info.max
        g.shuffle(vals)
        return torch.from_numpy(vals.astype(dtype)).reshape(shape)
    # floats: few distinct values (ties), NaN, both zeros, infinities
    base = g.integers(-20, 20, n).astype(np.float64) / 4
    special = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-30, -1e-30])
    pick = g.random(n) < 0.2
    base[pick] = special[g.integers(0, len(special), pick.sum())]
    return torch.from_numpy(base).to(getattr(torch, dtype)).reshape(shape)


def _bits(t):
    t = t.contiguous()
    if t.dtype == torch.bool:
        return t.numpy()
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[
        t.element_size()]).numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim", [((1000,), 0), ((7, 50), 1), ((200, 3), 0),
                                        ((3, 5000), -1), ((40,), 0)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_torch_stable_sort(dtype, shape, dim, descending):
    t = _data(dtype, shape, len(shape) * 7 + shape[0])
    e = ember.from_numpy(t.numpy()) if dtype != "bfloat16" else \
        ember.from_numpy(t.float().numpy()).to(ember.bfloat16)
    ev, ei = ember.sort(e, dim=dim, descending=descending, stable=True)
    tv, ti = torch.sort(t, dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    if dtype == "bfloat16":         # no NumPy bfloat16: compare as float32 (NaN payloads
        got, want = ev.float().numpy(), tv.float().numpy()   # are not kept through that)
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    else:
        np.testing.assert_array_equal(_bits(torch.from_numpy(ev.numpy())), _bits(tv))


def test_strided_rows_and_outputs_and_empty():
    t = _data("float32", (64, 300), 3)
    e = ember.from_numpy(t.numpy())
    for dim in (0, 1):
        ev, ei = ember.sort(e.t(), dim=dim)           # rows with a stride
        tv, ti = torch.sort(t.t(), dim=dim, stable=True)
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    v, i = ember.sort(ember.empty(0, 5), dim=0)
    assert v.shape == (0, 5) and i.dtype == ember.int64
    v, i = ember.sort(ember.tensor(3.0))
    assert v.item() == 3.0 and i.item() == 0


def test_argsort_and_topk_paths_use_it():
    x = ember.tensor([3.0, float("nan"), -1.0, 3.0, -0.0, 0.0])
    assert ember.argsort(x).tolist() == [2, 4, 5, 0, 3, 1]
    assert ember.argsort(x, descending=True).tolist() == [1, 0, 3, 4, 5, 2]
