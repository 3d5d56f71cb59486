"""sort/argsort/msort/topk/kthvalue/median/unique/randperm against PyTorch (values without ties,
where PyTorch leaves the order of equal elements unspecified)."""
import numpy as np
import pytest
import torch

import ember


def pair(shape, device, dtype="float32", seed=0):
    a = np.random.default_rng(seed).permutation(int(np.prod(shape))).reshape(shape) - 5
    t = torch.tensor(a).to(getattr(torch, dtype))
    e = ember.tensor(t.float().numpy() if dtype == "bfloat16" else t.numpy(), device=device)
    return e.to(getattr(ember, dtype)), t


@pytest.mark.parametrize("expr", [
    "F.sort(a)", "F.sort(a, 0)", "F.sort(a, 1, descending=True)", "a.sort(-1)",
    "F.sort(a.t(), 0)", "F.argsort(a)", "F.argsort(a, 0, descending=True)",
    "F.topk(a, 2)", "F.topk(a, 3, 0)", "F.topk(a, 2, largest=False)", "a.topk(1, dim=0)",
    "F.kthvalue(a, 2)", "F.kthvalue(a, 1, 0, keepdim=True)", "F.median(a)", "F.median(a, 1)",
    "F.median(a, 0, keepdim=True)", "F.unique(a % 3)", "F.sort(s)", "F.sort(s, descending=True)",
])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
def test_sorting_matches_torch(expr, dtype, device, oracle):
    a, ta = pair((4, 5), device, dtype)
    s, ts = ember.tensor([3.0, float("nan"), -1.0, 2.0], device=device).to(a.dtype), \
        torch.tensor([3.0, float("nan"), -1.0, 2.0]).to(ta.dtype)
    if dtype == "int64" and "s" in expr.replace("sort", "").replace("descending", ""):
        pytest.skip("NaN cases are float-only")
    got = eval(expr, {"F": ember, "a": a, "s": s})
    want = eval(expr, {"F": torch, "a": ta, "s": ts})
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            oracle.assert_matches(g, w)
    else:
        oracle.assert_matches(got, want)


def test_unique_inverse_counts_and_randperm(device, oracle):
    x, tx = ember.tensor([3, 1, 3, 2, 1], device=device), torch.tensor([3, 1, 3, 2, 1])
    for got, want in zip(ember.unique(x, return_inverse=True, return_counts=True),
                         torch.unique(tx, return_inverse=True, return_counts=True)):
        oracle.assert_matches(got, want)
    ember.manual_seed(4)
    p = ember.randperm(50, device=device)
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == ember.int64
    ember.manual_seed(4)
    assert ember.randperm(50, device=device).tolist() == p.tolist()
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        ember.topk(x, 9)
    with pytest.raises(IndexError, match="out of range"):
        ember.kthvalue(x, 0)


# values and gradients over dtypes, broadcasting, non-contiguous and empty inputs, one
# row per case (conftest.py's check_table_case)
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("msort", lambda m, a: m.msort(a), [((4, 3), D, "n")], True),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device, table_case):
    table_case(case, transpose, device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_median_of_rows_with_nan_is_nan(dtype, device, oracle):
    # torch: a NaN anywhere makes the median NaN (at the first NaN); nanmedian skips them
    nan = float("nan")
    data = [[1.0, nan, 3.0, nan], [3.0, 1.0, 2.0, 5.0]]
    e = ember.tensor(data, device=device).to(getattr(ember, dtype))
    t = torch.tensor(data).to(getattr(torch, dtype))
    oracle.assert_matches(e.median(), t.median())
    oracle.assert_matches(e[1].median(), t[1].median())
    for got, want in [(e.median(1), t.median(1)), (e.median(0, keepdim=True),
                                                   t.median(0, keepdim=True)),
                      (e.nanmedian(1), t.nanmedian(1))]:
        oracle.assert_matches(got.values, want.values)
        oracle.assert_matches(got.indices, want.indices)
    oracle.assert_matches(e.nanmedian(), t.nanmedian())


@pytest.mark.parametrize("data", [[1.0, float("nan"), float("nan")],
                                  [float("-inf"), float("-inf"), 1.0], [1.0, 2.0, 2.0, 3.0]])
def test_median_gradient_is_shared_by_the_equal_elements(data, device, oracle):
    e = ember.tensor(data, device=device, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    oracle.assert_matches(ember.autograd.grad(e.median(), e)[0].cpu(),
                          torch.autograd.grad(t.median(), t)[0])
    oracle.assert_matches(ember.autograd.grad(e.median(0).values, e)[0].cpu(),
                          torch.autograd.grad(t.median(0).values, t)[0])


def test_unique_keeps_each_nan_apart(device, oracle):
    nan = float("nan")
    e, t = ember.tensor([nan, 1.0, nan, 1.0, 2.0], device=device), \
        torch.tensor([nan, 1.0, nan, 1.0, 2.0])
    for kwargs in ({}, {"sorted": False}):
        got = ember.unique(e, return_inverse=True, return_counts=True, **kwargs)
        want = torch.unique(t, return_inverse=True, return_counts=True, **kwargs)
        for g, w in zip(got, want):
            oracle.assert_matches(g, w)
    got = ember.unique_consecutive(e, return_inverse=True, return_counts=True)
    want = torch.unique_consecutive(t, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        oracle.assert_matches(g, w)
    # rows holding NaN stay apart too (their order among the others is torch's comparator's)
    rows = [[nan, 1.0], [nan, 1.0], [0.0, 2.0]]
    assert ember.unique(ember.tensor(rows, device=device), dim=0,
                        return_counts=True)[1].tolist() == [1, 1, 1]


def test_topk_of_a_few_among_many_equals_the_full_stable_order():
    # a small k sorts only the candidates at or beyond the k-th value (np.partition's): the
    # positions must equal the first k of the full stable order, NaN and ties included
    import importlib
    sorting = importlib.import_module("ember.core.sorting")
    rng = np.random.default_rng(0)
    nan_rows = rng.standard_normal((40, 600)).astype(np.float32)
    nan_rows[::3, ::7] = np.nan
    nan_rows[5] = np.nan
    ties = np.round(rng.standard_normal((40, 600))).astype(np.float32)
    ties[1, :50] = np.nan
    cases = [rng.standard_normal((16, 1024)).astype(np.float32), nan_rows, ties,
             rng.integers(0, 5, (8, 1000)), rng.standard_normal((3, 500, 7))]
    for a in cases:
        for largest in (True, False):
            for k in (1, 5, 60):
                for axis in range(a.ndim):
                    if a.shape[axis] < k:
                        continue
                    want = np.take(sorting._order(a, axis, largest), np.arange(k), axis=axis)
                    got = sorting._top_indices(np, a, k, axis, largest)
                    assert np.array_equal(want, got), (a.shape, largest, k, axis)
    t = ember.tensor(cases[0])
    r = t.topk(5, 1)
    assert np.array_equal(r.values.numpy(), np.take_along_axis(cases[0], r.indices.numpy(), 1))


def _stable_order(a, largest):
    """Positions along the last dim in the stable order: NaN the largest, ties by position."""
    pos = np.broadcast_to(np.arange(a.shape[-1]), a.shape)
    if a.dtype.kind != "f":
        return np.argsort(-a if largest else a, axis=-1, kind="stable")
    nan, key = np.isnan(a), np.where(np.isnan(a), 0, a).astype(np.float64)
    return np.lexsort((pos, -key, ~nan) if largest else (pos, key, nan), axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape,dim,k", [((300, 200), 1, 10), ((200, 300), 0, 5),
                                         ((7, 300), -1, 64), ((50,), 0, 50), ((3, 4, 5), 1, 2),
                                         ((9, 5), 1, 1), ((1000, 40), 1, 40)])
def test_topk_is_the_head_of_the_stable_order(dtype, largest, shape, dim, k):
    """Ties (many: values in -5..4) come in position order and NaN counts as the largest,
    as the host selection's heap keeps them; also on ordered rows (the heap's worst case)."""
    g = np.random.default_rng(5)
    for a in (g.integers(-5, 5, shape).astype(dtype), np.sort(g.integers(-5, 5, shape), -1)
              .astype(dtype)):
        if dtype != "int64":
            a.flat[::17] = np.nan
        got = ember.topk(ember.tensor(a), k, dim, largest)
        d = dim % a.ndim
        want = np.moveaxis(_stable_order(np.moveaxis(a, d, -1), largest)[..., :k], -1, d)
        np.testing.assert_array_equal(got.indices.numpy(), want)
        np.testing.assert_array_equal(got.values.numpy(), np.take_along_axis(a, want, d))
