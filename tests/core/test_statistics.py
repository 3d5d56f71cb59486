"""The reductions and statistics of core/statistics.py against PyTorch: var/std and
var_mean/std_mean, count_nonzero, logsumexp/logcumsumexp, nansum/nanmean, aminmax,
quantile/nanquantile/nanmedian, cov/corrcoef, trapezoid/cumulative_trapezoid, values and
gradients."""
import math

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("expr", [
    "F.var(a)", "F.var(a, 1)", "F.var(a, 0, keepdim=True)", "F.std(a, 1, correction=0)",
    "a.std()", "F.var(a, (0, 1))", "F.count_nonzero(F.clamp(a, 0))",
    "F.count_nonzero(F.clamp(a, 0), 1)",
])
def test_reductions_match_torch(expr, device, oracle):
    oracle.expr_matches(expr, device)


def test_var_mean_and_std_mean(device, oracle):
    a, ta = oracle.uniform_pair((5, 4), device, "float64", seed=4)
    for got, want in zip(ember.var_mean(a, 1), torch.var_mean(ta, 1)):
        oracle.assert_matches(got, want)
    for got, want in zip(ember.std_mean(a, 0, keepdim=True), torch.std_mean(ta, 0, keepdim=True)):
        oracle.assert_matches(got, want)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        got = ember.var(ember.ones(1, device=device))
    with pytest.warns(UserWarning):
        oracle.assert_matches(got, torch.var(torch.ones(1)))


def test_var_of_integers(device):
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        ember.var(ember.tensor([1, 2], device=device))


@pytest.mark.parametrize("expr", [
    "F.logsumexp(a, 1)", "F.logsumexp(a, (0, 1))", "F.logsumexp(a, 0, keepdim=True)",
    "F.logsumexp(s[1:3].view(1, 2) * 0 - float('inf'), 1)",
])
def test_logsumexp(expr, device, oracle):
    oracle.expr_matches(expr, device, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [ember.float16, ember.float32, ember.float64])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_nansum_nanmean(device, oracle, dtype, dim, keepdim):
    a, ta = oracle.normal_pair((3, 4, 5), dtype, device, nan=True)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    oracle.assert_matches(ember.nansum(a, **kw), torch.nansum(ta, **kw))
    oracle.assert_matches(ember.nanmean(a, **kw), torch.nanmean(ta, **kw))
    oracle.assert_matches(a.transpose(0, 2).nansum(**kw), ta.transpose(0, 2).nansum(**kw))
    oracle.assert_matches(a.nanmean(**kw), ta.nanmean(**kw))


def test_nan_reductions_int_and_empty(device, oracle):
    i = ember.tensor([[1, 2], [3, 4]], device=device)
    ti = torch.tensor([[1, 2], [3, 4]])
    oracle.assert_matches(ember.nansum(i, 1), torch.nansum(ti, 1))
    for kw in ({}, {"dtype": ember.float32}):
        with pytest.raises(RuntimeError, match="nanmean.*floating point"):
            ember.nanmean(i, **kw)
    e, te = oracle.normal_pair((0, 3), ember.float32, device)
    oracle.assert_matches(ember.nansum(e, 0), torch.nansum(te, 0))
    oracle.assert_matches(ember.nanmean(e, 0), torch.nanmean(te, 0))
    allnan = ember.full((2,), math.nan, device=device)
    oracle.assert_matches(ember.nanmean(allnan), torch.nanmean(torch.full((2,), math.nan)))


# values and gradients over dtypes, broadcasting, non-contiguous and empty inputs, one
# row per case (conftest.py's check_table_case)
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), [((3, 5), D, "n")], True),
    ("logcumsumexp_wide", lambda m, a: m.logcumsumexp(a * 400, 0), [((6, 2), F, "n")], False),
    ("logcumsumexp_wide64", lambda m, a: m.logcumsumexp(a * 1000, 0), [((6, 2), D, "n")], True),
    ("aminmax", lambda m, a: tuple(m.aminmax(a)), [((3, 4), D, "n")], False),
    ("aminmax_dim", lambda m, a: tuple(m.aminmax(a, dim=1, keepdim=True)), [((3, 4), L, "int")],
     False),
    ("quantile", lambda m, a: m.quantile(a, 0.3), [((3, 5), D, "n")], True),
    ("quantile_dim", lambda m, a, q: m.quantile(a, q, dim=1, keepdim=True),
     [((3, 5), D, "n"), ((4,), D, "prob")], True),
    ("nanquantile", lambda m, a: m.nanquantile(m.where(a > 1, math.nan, a), 0.7, dim=0),
     [((5, 3), D, "n")], False),
    ("nanmedian", lambda m, a: m.nanmedian(m.where(a > 0.5, math.nan, a)), [((3, 5), D, "n")],
     False),
    ("nanmedian_dim", lambda m, a: tuple(m.nanmedian(m.where(a > 0.5, math.nan, a), 1)),
     [((3, 5), D, "n")], False),
    ("nanmedian_int", lambda m, a: tuple(m.nanmedian(a, 0, keepdim=True)), [((4, 3), L, "int")],
     False),
    ("cov", lambda m, a: m.cov(a), [((3, 6), D, "n")], True),
    ("cov_weights", lambda m, a, f, w: m.cov(a, correction=0, fweights=f.long() + 1,
                                             aweights=w),
     [((2, 5), D, "n"), ((5,), L, "idx"), ((5,), D, "pos")], True),
    ("cov_1d_int", lambda m, a: m.cov(a), [((6,), L, "int")], False),
    ("corrcoef", lambda m, a: m.corrcoef(a), [((3, 6), D, "n")], True),
    ("trapezoid", lambda m, a: m.trapezoid(a), [((3, 5), D, "n")], True),
    ("trapezoid_x", lambda m, a, x: m.trapezoid(a, x, dim=0), [((4, 3), D, "n"), ((4,), D, "n")],
     True),
    ("trapezoid_dx", lambda m, a: m.trapezoid(a, dx=0.5), [((3, 5), D, "n")], True),
    ("trapz_int", lambda m, a: m.trapz(a), [((5,), L, "int")], False),
    ("cumulative_trapezoid", lambda m, a, x: m.cumulative_trapezoid(a, x),
     [((3, 5), D, "n"), ((3, 5), D, "n")], True),
]
QUANTILE_MODES = ["linear", "lower", "higher", "midpoint", "nearest"]
CASES += [(f"quantile_{mode}", lambda m, a, mode=mode: m.quantile(a, a.new_tensor(
    [0.0, 0.25, 0.5, 0.9, 1.0]), dim=0, interpolation=mode),
    [((6, 3), D, "n")], mode != "nearest") for mode in QUANTILE_MODES]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device, table_case):
    table_case(case, transpose, device)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_logcumsumexp_nan_poisons_only_what_follows(dtype, device, oracle):
    # the shift must ignore NaN, else the row maximum (NaN) makes the whole row NaN
    data = [[1.0, 2.0, math.nan, 3.0], [-1e30, 0.0, 1.0, 2.0]]
    a = ember.tensor(data, device=device).to(getattr(ember, dtype))
    ta = torch.tensor(data).to(getattr(torch, dtype))
    oracle.assert_matches(ember.logcumsumexp(a, 1), torch.logcumsumexp(ta, 1))
    oracle.assert_matches(a[0].logcumsumexp(0), ta[0].logcumsumexp(0))


@pytest.mark.parametrize("shape", [(2, 0, 4), (0,), (), (2, 3)])
@pytest.mark.parametrize("dim", [(), []])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_empty_dim_list_reduces_everything(shape, dim, keepdim, device, oracle):
    a, ta = oracle.normal_pair(shape, ember.float32, device)
    try:
        want = torch.logsumexp(ta, dim, keepdim)
    except RuntimeError as err:            # torch's kernel fails on non-empty, no keepdim
        with pytest.raises(RuntimeError, match=str(err).replace("[", r"\[")):
            ember.logsumexp(a, dim, keepdim)
        return
    oracle.assert_matches(ember.logsumexp(a, dim, keepdim), want)


# --- complex inputs keep their imaginary parts; x broadcasting against y -------------------

INF, NAN = math.inf, math.nan
_COMPLEX_ROWS = [
    [0.3 + 0.4j, -1.2 + 0.5j, 2 - 1j, 1 + 3j, 0.5 + 3j],
    [10j, 1 + 10j, -50 + 10j, 1 + 3.5j, 1 - 3.5j],       # imaginary parts past pi
    [0j, -200 + 1j, 3 + 0.5j, 1e6 + 0j, 0.5 + 0j],        # underflow, a huge value
    [complex(-INF, 1), complex(-INF, 2), 1 + 0j, complex(-INF, 3), 2 + 2j],
    [2 + 0j, complex(1, NAN), 1 + 1j, 0j, 1j],
    [complex(INF, 0), 1 + 1j, 0j, 2j, -1 + 0j],
]


def _complex_close(got, want, rtol):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    torch.testing.assert_close(torch.from_numpy(got.numpy()), want, rtol=rtol, atol=rtol,
                               equal_nan=True)


@pytest.mark.parametrize("dtype,rtol", [("complex64", 1e-5), ("complex128", 1e-10)])
@pytest.mark.parametrize("row", range(len(_COMPLEX_ROWS)))
def test_logsumexp_logcumsumexp_of_complex(dtype, rtol, row):
    # the real parts' maximum shifts exp; logcumsumexp's imaginary parts follow the scan
    # (10j stays 10j, not 10 - 4 pi)
    data = [_COMPLEX_ROWS[row], _COMPLEX_ROWS[row][::-1]]
    a, ta = ember.tensor(data, dtype=getattr(ember, dtype)), \
        torch.tensor(data, dtype=getattr(torch, dtype))
    for dim in (0, 1):
        _complex_close(ember.logsumexp(a, dim), torch.logsumexp(ta, dim), rtol)
        _complex_close(ember.logcumsumexp(a, dim), torch.logcumsumexp(ta, dim), rtol)


def test_logsumexp_logcumsumexp_of_random_complex():
    rng = np.random.default_rng(5)
    data = rng.normal(size=(4, 30)) * 3 + 1j * rng.normal(size=(4, 30)) * 4
    for dim in (0, 1, -1):
        _complex_close(ember.logsumexp(ember.tensor(data), dim, keepdim=True),
                       torch.logsumexp(torch.tensor(data), dim, keepdim=True), 1e-10)
        _complex_close(ember.logcumsumexp(ember.tensor(data), dim),
                       torch.logcumsumexp(torch.tensor(data), dim), 1e-10)


@pytest.mark.parametrize("kw", [{}, {"correction": 0},
                                {"fweights": [1, 2, 3], "aweights": [0.5, 1.0, 2.0]}])
def test_cov_corrcoef_of_complex(kw):
    data = [[0.3 + 0.4j, -1.2 + 0.5j, 2 - 1j], [1, 2j, 3], [1j, 1 - 1j, -2]]

    def run(lib):
        x = lib.tensor(data)
        w = {k: lib.tensor(v) for k, v in kw.items() if k != "correction"}
        return lib.cov(x, correction=kw.get("correction", 1), **w), lib.corrcoef(x), \
            lib.cov(x[0])
    for got, want in zip(run(ember), run(torch)):
        _complex_close(got, want, 1e-5)


@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize("x_shape,dim", [((4, 5), -1), ((4, 5), 2), ((4, 5), 1), ((1, 5), -1),
                                         ((4, 1), 1)])
def test_trapezoid_x_of_lower_rank_broadcasts(fn, x_shape, dim, oracle):
    # x is right-aligned against y (leading 1s), then differenced along dim
    rng = np.random.default_rng(2)
    y, x = rng.normal(size=(3, 4, 5)), rng.normal(size=x_shape).cumsum(-1)

    def run(lib):
        ys = lib.tensor(y, requires_grad=True)
        xs = lib.tensor(x, requires_grad=True)
        out = getattr(lib, fn)(ys, xs, dim=dim)
        out.sum().backward()
        return out.detach(), ys.grad, xs.grad
    for g, w in zip(run(ember), run(torch)):
        oracle.assert_matches(g, w, rtol=1e-10)
