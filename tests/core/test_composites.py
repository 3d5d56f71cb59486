"""Composite ops (built from primitives, so they run on any device) against PyTorch."""
import math

import numpy as np
import pytest
import torch

import ember


def pair(shape, device, dtype="float32", seed=0, lo=-3.0, hi=3.0):
    a = np.random.default_rng(seed).uniform(lo, hi, size=shape)
    t = torch.tensor(a, dtype=getattr(torch, dtype))
    return ember.tensor(t.numpy(), device=device), t


@pytest.mark.parametrize("expr", [
    "F.clamp(a, -1, 1)", "F.clamp(a, min=0.5)", "F.clamp(a, max=-0.5)", "F.clip(a, -1, 2)",
    "a.clamp(b, b + 1)", "F.rsqrt(p)", "F.log2(p)", "F.log10(p)", "F.sign(a)",
    "F.lerp(a, b, 0.3)", "F.lerp(a, b, p)", "F.addcmul(a, b, p, value=0.5)",
    "F.addcdiv(a, b, p, value=2)", "F.rsub(a, b)", "F.softmax(a, 1)", "F.softmax(a, 0)",
    "a.softmax(-1)", "F.log_softmax(a, 1)", "a.log_softmax(0)", "F.var(a)", "F.var(a, 1)",
    "F.var(a, 0, keepdim=True)", "F.std(a, 1, correction=0)", "a.std()", "F.var(a, (0, 1))",
    "F.count_nonzero(F.clamp(a, 0))", "F.count_nonzero(F.clamp(a, 0), 1)",
    "F.outer(a[0], b[1])", "F.dot(a[0], b[0])", "F.mm(a, b.t())", "F.mv(a, b[0])",
    "F.bmm(a.view(2, 2, 3), b.view(2, 3, 2))", "F.isclose(a, a + 1e-7)", "F.isclose(a, b)",
    "F.linalg.vector_norm(a)", "F.linalg.vector_norm(a, 1, 1)", "F.linalg.vector_norm(a, float('inf'), 0)",
    "F.linalg.vector_norm(a, 0)", "F.linalg.vector_norm(a, 3.5, 1, True)",
    "F.linalg.vector_norm(a, -float('inf'))",
])
def test_composite_matches_torch(expr, device, oracle):
    a, ta = pair((4, 3), device, seed=1)
    b, tb = pair((4, 3), device, seed=2)
    p, tp = pair((4, 3), device, seed=3, lo=0.5, hi=3.0)
    got = eval(expr, {"F": ember, "a": a, "b": b, "p": p})
    want = eval(expr, {"F": torch, "a": ta, "b": tb, "p": tp})
    oracle.assert_matches(got, want, rtol=1e-4, atol=1e-5)


def test_silu(device, oracle):
    from ember.core.activations import silu
    a, ta = pair((4, 3), device, seed=1)
    oracle.assert_matches(silu(a), torch.nn.functional.silu(ta))


def test_var_mean_and_special_values(device, oracle):
    a, ta = pair((5, 4), device, "float64", seed=4)
    for got, want in zip(ember.var_mean(a, 1), torch.var_mean(ta, 1)):
        oracle.assert_matches(got, want)
    for got, want in zip(ember.std_mean(a, 0, keepdim=True), torch.std_mean(ta, 0, keepdim=True)):
        oracle.assert_matches(got, want)
    x = ember.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0], device=device)
    tx = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0])
    for name in ["isnan", "isinf", "isfinite"]:
        oracle.assert_matches(getattr(ember, name)(x), getattr(torch, name)(tx))
    oracle.assert_matches(ember.isclose(x, x, equal_nan=True), torch.isclose(tx, tx, equal_nan=True))
    oracle.assert_matches(ember.isinf(ember.tensor([1, 2], device=device)),
                          torch.isinf(torch.tensor([1, 2])))
    assert ember.allclose(a, a + 1e-9) and not ember.allclose(a, a + 1)
    oracle.assert_matches(ember.softmax(ember.tensor([[1000.0, 0.0]], device=device), 1),
                          torch.softmax(torch.tensor([[1000.0, 0.0]]), 1))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        got = ember.var(ember.ones(1, device=device))
    with pytest.warns(UserWarning):
        oracle.assert_matches(got, torch.var(torch.ones(1)))


def test_composite_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        ember.clamp(a)
    with pytest.raises(RuntimeError, match="var\\(\\): could not infer output dtype"):
        ember.var(ember.tensor([1, 2], device=device))
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match="must be a 2D tensor"):
        ember.mm(ember.ones(3), a)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        ember.addcdiv(a, ember.tensor([1]), ember.tensor([2]))
    assert math.isclose(ember.linalg.vector_norm(ember.tensor([3.0, 4.0])).item(), 5.0)


@pytest.mark.parametrize("expr", [
    "F.where(a > 0, a, b)", "F.where(a > 0, a, 0.0)", "F.where(a > 0, 1, b)",
    "F.where(a[0] > 0, a, b[:, :1])", "F.where(a > 0, i, a)", "F.where(a > 0, i, 2)",
    "a.where(a > 0, b)", "F.masked_fill(a, a > 0, -1.0)", "a.masked_fill(a[0] > 0, 7)",
    "i.masked_fill(a > 0, 2.7)", "F.nan_to_num(s)", "F.nan_to_num(s, 1.0, 2.0, -2.0)",
    "F.nan_to_num(s.half())", "F.logsumexp(a, 1)", "F.logsumexp(a, (0, 1))",
    "F.logsumexp(a, 0, keepdim=True)", "F.logsumexp(s[1:3].view(1, 2) * 0 - float('inf'), 1)",
    "F.nonzero(a > 0)", "F.where(a > 0)[1]", "(a > 0).nonzero()",
])
def test_where_family(expr, device, oracle):
    a, ta = pair((4, 3), device, seed=7)
    b, tb = pair((4, 3), device, seed=8)
    i, ti = a.long(), ta.long()
    s = ember.tensor([1.0, float("nan"), float("inf"), -float("inf")], device=device)
    ts = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    got = eval(expr, {"F": ember, "a": a, "b": b, "i": i, "s": s})
    want = eval(expr, {"F": torch, "a": ta, "b": tb, "i": ti, "s": ts})
    oracle.assert_matches(got, want, rtol=1e-5, atol=1e-6)


def test_where_errors_and_inplace(device, oracle):
    a, ta = pair((2, 3), device, seed=9)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        ember.where(a, a, a)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        a.masked_fill(a, 1.0)
    v0 = a._version
    assert a.masked_fill_(a > 0, 0.0) is a and a._version > v0
    ta.masked_fill_(ta > 0, 0.0)
    oracle.assert_matches(a, ta)
    assert ember.finfo(ember.float16).max == torch.finfo(torch.float16).max
    assert ember.finfo().eps == torch.finfo().eps
    assert ember.iinfo(ember.int32).min == torch.iinfo(torch.int32).min
    with pytest.raises(TypeError):
        ember.finfo(ember.int32)


@pytest.mark.parametrize("expr", [
    "F.cat([a, b], 0)", "F.cat([a, b, a], 1)", "F.cat((a, b.double()), -1)",
    "F.cat([a, F.zeros(0)])", "F.stack([a, b])", "F.stack([a, b], 2)", "F.stack([a[0], b[0]], -1)",
    "F.hstack([a, b])", "F.vstack([a[0], b[1]])", "F.concat([a.t(), b.t()])",
    "a.repeat(2, 3)", "a.repeat(2, 1, 2)", "a[0].repeat(3)", "F.tile(a, (2,))", "F.tile(a, (2, 1, 2))",
    "F.roll(a, 1, 0)", "F.roll(a, -2, 1)", "F.roll(a, (1, 2), (0, 1))", "F.roll(a, 5)",
    "F.eye(3)", "F.eye(2, 4)", "F.tril(a)", "F.tril(a, -1)", "F.triu(a, 1)",
    "F.triu(a.view(2, 2, 3))", "F.diag(a)", "F.diag(a, 1)", "F.diag(a[0])", "F.diag(a[0], -2)",
    "F.trace(a)", "F.linspace(0, 1, 5)", "F.linspace(-3, 10, 7)", "F.linspace(2, 2, 1)",
    "F.logspace(0, 2, 3)", "F.linspace(0, 1, 4, dtype=F.float64)",
])
def test_joining_and_shape_composites(expr, device, oracle):
    a, ta = pair((4, 3), device, seed=21)
    b, tb = pair((4, 3), device, seed=22)
    got = eval(expr, {"F": ember, "a": a, "b": b})
    want = eval(expr, {"F": torch, "a": ta, "b": tb})
    oracle.assert_matches(got, want, rtol=1e-5, atol=1e-6)


def test_joining_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        ember.cat([a, ember.ones(2, 4, device=device)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        ember.stack([a, a.t()])
    with pytest.raises(RuntimeError, match="non-empty"):
        ember.cat([])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        ember.cat([ember.tensor(1.0), ember.tensor(2.0)])
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        a.repeat(2)


@pytest.mark.parametrize("bounds", ["tensors", "bools", "ints", "min_only"])
def test_clamp_of_bool_like_torch(bounds):
    def call(m):
        b = m.tensor([True, False])
        if bounds == "tensors":
            return m.clamp(b, m.tensor([False, False]), m.tensor([True, True]))
        if bounds == "bools":
            return m.clamp(b, False, True)
        if bounds == "ints":
            return m.clamp(b, 0, 1)
        return m.clamp(b, min=m.tensor([False, True]))
    try:
        want = call(torch)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e).split('"')[1]):
            call(ember)
        return
    got = call(ember)
    assert got.dtype.name == str(want.dtype).split(".")[1] and got.tolist() == want.tolist()


def test_split_with_sizes_is_public():
    x = ember.arange(5.)
    for pieces in (ember.split_with_sizes(x, [2, 3]), x.split_with_sizes([2, 3])):
        assert [p.tolist() for p in pieces] == [[0., 1.], [2., 3., 4.]]
