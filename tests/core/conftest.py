"""Shared fixtures for the core tests.  Op tests take a `device` fixture so they can run
on any backend (EMBER_TEST_DEVICES=cpu,reference): they are the seed of the conformance suite."""
import math
import os

import numpy as np
import pytest

import ember

DEVICES = os.environ.get("EMBER_TEST_DEVICES", "cpu").split(",")
if "memcore" in DEVICES:        # the memory core only: every primitive runs on the host
    from ember.testing._devices import MEMORY_CORE, partial_device
    partial_device("memcore", MEMORY_CORE)
# a GPU plugin may report errors found in the data at the next synchronisation: the op tests
# check them at the op
os.environ.setdefault("EMBER_CUDA_SYNC_ERRORS", "1")
ALL_DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
              ember.float16, ember.bfloat16, ember.float32, ember.float64]
FLOAT_DTYPES = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
NUMERIC_DTYPES = ALL_DTYPES[1:]


@pytest.fixture(params=DEVICES)
def device(request):
    if not ember.get_device_module(request.param).is_available():
        pytest.skip(f"device '{request.param}' is not available")
    return request.param


def torch_dtype(d):
    import torch
    return getattr(torch, d.name)


def to_torch(t):
    """An ember tensor's values as a torch tensor of the same dtype (via host memory)."""
    import torch
    arr = t.numpy(force=True)
    out = torch.from_numpy(np.array(arr, order="C", copy=True))
    return out.to(torch_dtype(t.dtype))


def from_torch(t, device="cpu"):
    import torch
    if t.dtype == torch.bfloat16:
        return ember.tensor(t.float().numpy(), device=device).to(ember.bfloat16)
    return ember.tensor(t.numpy(), device=device)


def tol(d):
    return {ember.float16: 1e-2, ember.bfloat16: 2e-2, ember.float32: 1e-5}.get(d, 1e-12)


def assert_matches(e, t, rtol=None, atol=None):
    """ember tensor `e` equals torch tensor `t`: shape, dtype and values."""
    import torch
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert e.dtype.name == str(t.dtype).replace("torch.", ""), (e.dtype, t.dtype)
    r = tol(e.dtype) if rtol is None else rtol
    torch.testing.assert_close(to_torch(e), t, rtol=r, atol=r if atol is None else atol,
                               equal_nan=True)


def uniform_pair(shape, device, dtype="float32", seed=0, lo=-3.0, hi=3.0):
    """The same uniform values in [lo, hi) as an ember and a torch tensor."""
    import torch
    a = np.random.default_rng(seed).uniform(lo, hi, size=shape)
    t = torch.tensor(a, dtype=getattr(torch, dtype))
    return ember.tensor(t.numpy(), device=device), t


def normal_pair(shape, dtype=ember.float32, device="cpu", seed=0, nan=False):
    """The same standard-normal values as an ember and a torch tensor (every third one
    NaN with ``nan``)."""
    import torch
    data = np.random.default_rng(seed).standard_normal(shape)
    if nan and data.size:
        data.reshape(-1)[::3] = np.nan
    return (ember.tensor(data, device=device).to(dtype),
            torch.tensor(data).to(getattr(torch, dtype.name)))


def expr_matches(expr, device, rtol=1e-4, atol=1e-5):
    """``expr`` (Python over F = the library; a, b of shape (4, 3) uniform in [-3, 3), p in
    [0.5, 3), i = a as int64, s = [1, nan, inf, -inf]) gives the same with ember as with
    torch."""
    import torch
    a, ta = uniform_pair((4, 3), device, seed=1)
    b, tb = uniform_pair((4, 3), device, seed=2)
    p, tp = uniform_pair((4, 3), device, seed=3, lo=0.5, hi=3.0)
    special = [1.0, float("nan"), float("inf"), -float("inf")]
    got = eval(expr, {"F": ember, "a": a, "b": b, "p": p, "i": a.long(),
                      "s": ember.tensor(special, device=device)})
    want = eval(expr, {"F": torch, "a": ta, "b": tb, "p": tp, "i": ta.long(),
                       "s": torch.tensor(special)})
    assert_matches(got, want, rtol=rtol, atol=atol)


def outcome(lib, fn):
    """What fn(lib) gives, comparable across libraries: a tensor's (values, dtype name,
    shape), a dtype's name, another value as is, or the name of the exception raised
    (warnings silenced)."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:
        return type(e).__name__
    if isinstance(r, lib.Tensor):
        return r.tolist(), str(r.dtype).split(".")[-1], tuple(r.shape)
    return str(r).split(".")[-1] if isinstance(r, lib.dtype) else r


def values_equal(a, b, rel=0.0):
    """Whether two outcomes (nested lists of numbers, or anything else) agree: floats within
    ``rel`` relative (NaN equals NaN), complex numbers part by part, the rest by ==."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, complex) or isinstance(b, complex):
        a, b = complex(a), complex(b)
        return values_equal(a.real, b.real, rel) and values_equal(a.imag, b.imag, rel)
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
    return a == b


def same_error(call, error, env):
    """eval(call, env(lib)) raises ``error`` with the same message in ember and in torch."""
    import torch
    messages = []
    for lib in (ember, torch):
        with pytest.raises(error) as info:
            eval(call, env(lib))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.fixture(scope="session")
def oracle():
    """Helpers comparing ember with PyTorch (tests import nothing from conftest)."""
    import types
    return types.SimpleNamespace(torch_dtype=torch_dtype, to_torch=to_torch,
                                 from_torch=from_torch, assert_matches=assert_matches,
                                 tol=tol, ALL_DTYPES=ALL_DTYPES, FLOAT_DTYPES=FLOAT_DTYPES,
                                 NUMERIC_DTYPES=NUMERIC_DTYPES, uniform_pair=uniform_pair,
                                 normal_pair=normal_pair, expr_matches=expr_matches,
                                 outcome=outcome, values_equal=values_equal,
                                 same_error=same_error)


# --- one table row against PyTorch: the tables of tests/core/test_elementwise.py,
# test_shapes.py, test_statistics.py, test_products_norms.py, ... (id, fn(lib, *inputs),
# [(shape, numpy dtype, kind)], differentiable)
TABLE_RNG = np.random.default_rng(0)


def _table_data(shape, dtype, kind):
    if kind == "pos":
        a = TABLE_RNG.uniform(0.2, 3.0, shape)
    elif kind == "prob":
        a = TABLE_RNG.uniform(0, 1, shape)
    elif kind == "unit":
        a = TABLE_RNG.uniform(-0.95, 0.95, shape)
    elif kind == "int":
        a = TABLE_RNG.integers(-4, 5, shape)
    elif kind == "idx":
        a = TABLE_RNG.integers(0, 3, shape)
    else:
        a = TABLE_RNG.standard_normal(shape)
    return a.astype(dtype)


def _table_pair(arr, device, transpose, requires_grad=False):
    """The same values as an ember and a torch tensor (ember's non-contiguous when asked)."""
    import torch
    if transpose:
        e = ember.tensor(np.ascontiguousarray(arr.T), device=device).t()
    else:
        e = ember.tensor(arr, device=device)
    t = torch.tensor(arr)
    if requires_grad:
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def _table_flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _table_compare(e_out, t_out, rtol):
    import torch
    for e, t in zip(_table_flat(e_out), _table_flat(t_out), strict=True):
        rtol = max(rtol, 2e-6) if isinstance(t, torch.Tensor) and t.dtype == torch.float32 \
            else rtol
        if not isinstance(t, torch.Tensor):
            assert e == t
            continue
        got = torch.from_numpy(np.array(e.detach().numpy(force=True)))
        assert tuple(got.shape) == tuple(t.shape), (got.shape, t.shape)
        assert str(got.dtype) == str(t.dtype), (got.dtype, t.dtype)
        torch.testing.assert_close(got, t.detach(), rtol=rtol, atol=rtol, equal_nan=True)


def check_table_case(case, transpose, device):
    """Forward values against PyTorch over dtypes, broadcasting, non-contiguous and empty
    inputs, and gradients of the differentiable rows."""
    import torch
    _, fn, specs, differentiable = case
    arrays = [_table_data(shape, dtype, kind) for shape, dtype, kind in specs]
    grad = differentiable and not transpose
    pairs = [_table_pair(a, device, transpose and a.ndim == 2,
                         grad and a.dtype == np.float64) for a in arrays]
    try:
        e_out = fn(ember, *[p[0] for p in pairs])
    except NotImplementedError as e:        # the special functions are optional kernels
        if device == "cpu":
            raise
        pytest.skip(f"{device}: {e}")
    t_out = fn(torch, *[p[1] for p in pairs])
    rtol = 1e-4 if any(a.dtype == np.float32 for a in arrays) else 1e-9
    _table_compare(e_out, t_out, rtol)
    if not grad:
        return
    e_outs, t_outs = _table_flat(e_out), _table_flat(t_out)
    weights = [TABLE_RNG.standard_normal(tuple(t.shape)) for t in t_outs]
    e_loss = sum((o * ember.tensor(w, device=device)).sum() for o, w in zip(e_outs, weights))
    t_loss = sum((o * torch.tensor(w)).sum() for o, w in zip(t_outs, weights))
    e_loss.backward()
    t_loss.backward()
    for (e, t) in pairs:
        if t.requires_grad:
            # torch's explicit zero gradients (copysign's `other`) are None here
            e_grad = e.grad if e.grad is not None else ember.zeros(tuple(e.shape),
                                                                   dtype=ember.float64)
            _table_compare(e_grad, t.grad, 1e-7)


@pytest.fixture(scope="session")
def table_case():
    """check_table_case(case, transpose, device): one row of an op table against PyTorch."""
    return check_table_case
