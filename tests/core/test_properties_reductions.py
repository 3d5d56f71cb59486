"""Property tests (hypothesis) of the reductions and scans against PyTorch: random dtypes,
shapes (0-4 dims, size-0 and size-1 dims), non-contiguous layouts, dim None/int/tuple/
negative, keepdim and dtype=; NaN/inf/-0.0/subnormals and integer edge values. Each example
checks dtype, shape and values (or torch's exception type). Also: a reduction gives the
same bits at 1 and 2 threads on sizes above the parallel cutoff."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember


def _load_strategies():
    name = "_ember_property_strategies"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, pathlib.Path(__file__).with_name("_property_strategies.py"))
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


P = _load_strategies()
# torch warns (UserWarning) when a var/std correction leaves <= 0 degrees of freedom
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
dtypes = st.sampled_from(P.DTYPES)


@st.composite
def dims(draw, nd):
    """None, one dim or a tuple of distinct dims, each possibly negative (a 0-dim tensor
    takes 0 and -1)."""
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    r = max(nd, 1)
    if kind == "int":
        return draw(st.integers(-r, r - 1))
    ds = draw(st.lists(st.integers(0, r - 1), unique=True, max_size=r))
    return tuple(d - r if draw(st.booleans()) else d for d in ds)


def _dim_kw(dim):
    return {} if dim is None else {"dim": dim}


# Each op: (m, a, dim, keepdim, dtype) -> result. dim None means "all" (left out of the call
# where torch's signature has no None); a form torch rejects must be rejected by ember too.
REDUCE = {
    "sum": lambda m, a, d, k, dt: m.sum(a, **_dim_kw(d), keepdim=k, dtype=dt) if d is not None
    else m.sum(a, dtype=dt),
    "nansum": lambda m, a, d, k, dt: m.nansum(a, **_dim_kw(d), keepdim=k, dtype=dt),
    "mean": lambda m, a, d, k, dt: m.mean(a, d, keepdim=k, dtype=dt) if d is not None
    else m.mean(a, dtype=dt),
    "nanmean": lambda m, a, d, k, dt: m.nanmean(a, **_dim_kw(d), keepdim=k, dtype=dt),
    "prod": lambda m, a, d, k, dt: m.prod(a, d, keepdim=k, dtype=dt) if d is not None
    else m.prod(a, dtype=dt),
    "amax": lambda m, a, d, k, dt: m.amax(a, () if d is None else d, keepdim=k),
    "amin": lambda m, a, d, k, dt: m.amin(a, () if d is None else d, keepdim=k),
    "var0": lambda m, a, d, k, dt: m.var(a, d, correction=0, keepdim=k),
    "var1": lambda m, a, d, k, dt: m.var(a, d, correction=1, keepdim=k),
    "std2": lambda m, a, d, k, dt: m.std(a, d, correction=2, keepdim=k),
    "std1": lambda m, a, d, k, dt: m.std(a, d, keepdim=k),
    # (torch's logsumexp with dim=() reduces nothing, then fails to broadcast: not drawn)
    "logsumexp": lambda m, a, d, k, dt: m.logsumexp(a, d if d else tuple(range(a.dim())),
                                                    keepdim=k),
    "all": lambda m, a, d, k, dt: m.all(a, **_dim_kw(d), keepdim=k),
    "any": lambda m, a, d, k, dt: m.any(a, **_dim_kw(d), keepdim=k),
    "count_nonzero": lambda m, a, d, k, dt: m.count_nonzero(a, d),
    "norm2": lambda m, a, d, k, dt: m.norm(a, dim=d, keepdim=k),
    "norm1": lambda m, a, d, k, dt: m.norm(a, p=1, dim=d, keepdim=k),
    "norm_inf": lambda m, a, d, k, dt: m.norm(a, p=float("inf"), dim=d, keepdim=k),
    "cumsum": lambda m, a, d, k, dt: m.cumsum(a, 0 if d is None else d, dtype=dt),
    "cumprod": lambda m, a, d, k, dt: m.cumprod(a, 0 if d is None else d, dtype=dt),
}
EXACT = {"amax", "amin", "all", "any", "count_nonzero", "norm_inf"}
# Sums and moments whose rounding depends on the order of summation (both libraries sum in
# blocks, in different orders): compared with an absolute tolerance scaled by the inputs'
# magnitude, and without values near the dtype's max (whether a sum overflows to inf
# depends on that order too).
SUMMING = {"sum", "nansum", "mean", "nanmean", "var0", "var1", "std2", "std1", "cumsum",
           "norm2", "norm1", "logsumexp"}


def _atol(name, ta, out_dtype):
    tol = P.TOL.get(out_dtype, 0.0)
    x = ta.double().nan_to_num(0.0, 0.0, 0.0).abs()
    if name in ("var0", "var1"):
        return 10 * tol * max(1.0, float((x * x).sum()))
    if name in ("std2", "std1"):
        return 10 * (tol * max(1.0, float((x * x).sum()))) ** 0.5
    return 10 * tol * max(1.0, float(x.sum()))


@pytest.mark.parametrize("name", list(REDUCE))
@settings(P.PROFILE, max_examples=30)
@given(data=st.data())
def test_reduction(name, data):
    shape = data.draw(P.shapes, label="shape")
    d0 = data.draw(dtypes, label="dtype")
    special = data.draw(st.sampled_from([False, True if name not in SUMMING else "no-huge"]))
    a, ta = data.draw(P.tensor_pair(shape, d0, special=special), label="a")
    dim = data.draw(dims(len(shape)), label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    dt = data.draw(st.sampled_from([None, None, "float64", "float32", "int64"]),
                   label="dtype=")
    op = REDUCE[name]
    want_dtype = None
    try:
        want_dtype = str(op(torch, ta, dim, keepdim, getattr(torch, dt) if dt else None)
                         .dtype).replace("torch.", "")
    except Exception:  # noqa: BLE001 - check() below compares the exception types
        pass
    atol = _atol(name, ta, want_dtype) if name in SUMMING else None
    P.check(lambda: op(ember, a, dim, keepdim, getattr(ember, dt) if dt else None),
            lambda: op(torch, ta, dim, keepdim, getattr(torch, dt) if dt else None),
            exact=name in EXACT, atol=atol)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@settings(P.PROFILE, max_examples=30)
@given(data=st.data())
def test_arg_reductions(name, data):
    """Values equal torch's; an index always points at the reported value, and equals torch's
    index when the values are distinct and NaN-free (ties may pick either)."""
    shape = data.draw(P.shapes, label="shape")
    a, ta = data.draw(P.tensor_pair(shape, data.draw(dtypes, label="dtype")), label="a")
    dim = data.draw(st.none() | st.integers(-max(len(shape), 1), max(len(shape), 1) - 1),
                    label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    if name in ("max", "min"):
        def op(m, x):
            if dim is None:
                return getattr(m, name)(x)
            return tuple(getattr(m, name)(x, dim, keepdim=keepdim))
    else:
        def op(m, x):
            return getattr(m, name)(x, dim=dim, keepdim=keepdim)
    if name in ("argmax", "argmin") or dim is None:
        # both return the first extreme (the first NaN, if any): exact even with ties
        P.check(lambda: op(ember, a), lambda: op(torch, ta), exact=True)
    else:
        try:
            want_v, want_i = op(torch, ta)
        except Exception as ex:  # noqa: BLE001
            with pytest.raises(type(ex)):
                op(ember, a)
            return
        got_v, got_i = op(ember, a)
        P.compare(got_v, want_v, exact=True)
        assert got_i.dtype == ember.int64 and tuple(got_i.shape) == tuple(want_i.shape)
        idx = P.to_torch(got_i)
        at = ta.gather(dim, idx if keepdim or ta.dim() == 0 else idx.unsqueeze(dim))
        at = at if keepdim or ta.dim() == 0 else at.squeeze(dim)
        torch.testing.assert_close(at, want_v, rtol=0, atol=0, equal_nan=True)
        if _distinct(ta):
            assert torch.equal(idx, want_i)


def _distinct(t):
    f = t.double()
    return not bool(f.isnan().any()) and f.unique().numel() == f.numel()


DETERMINISTIC = {
    "sum": lambda m, a: m.sum(a),
    "sum_dim": lambda m, a: m.sum(a, dim=0),
    "mean": lambda m, a: m.mean(a, dim=1),
    "var": lambda m, a: m.var(a),
    "norm": lambda m, a: m.norm(a),
    "logsumexp": lambda m, a: m.logsumexp(a, dim=(0, 1)),
    "prod": lambda m, a: m.prod(a * 0 + 1.0001),
    "cumsum": lambda m, a: m.cumsum(a, dim=1),
}


@pytest.mark.parametrize("name", list(DETERMINISTIC))
@settings(P.PROFILE, max_examples=3)
@given(data=st.data())
def test_same_bits_at_one_and_two_threads(name, data):
    """Above the parallel cutoff (~64k elements), the thread count must not change a bit."""
    shape = data.draw(st.sampled_from([(300, 300), (257, 511), (1, 70001)]), label="shape")
    dt = data.draw(st.sampled_from(["float32", "float64", "float16"]), label="dtype")
    a, _ = data.draw(P.tensor_pair(shape, dt, special=False), label="a")
    op = DETERMINISTIC[name]
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = P.to_torch(op(ember, a)).numpy()
        ember.set_num_threads(2)
        two = P.to_torch(op(ember, a)).numpy()
    finally:
        ember.set_num_threads(old)
    assert one.tobytes() == two.tobytes()
    np.testing.assert_array_equal(one, two)
