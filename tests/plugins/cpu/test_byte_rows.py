"""Bitwise and logical ops on 1-byte operands (bool, uint8, int8) in ember-cpu's byte loops
(_byte_rows.h) against PyTorch: every op and operand form (contiguous, broadcast, 0-d,
strided through the general path, in place), bool's * and + as and/or, logical_not."""
import operator

import numpy as np
import pytest
import torch

import ember

BINARY = ["&", "|", "^", "logical_and", "logical_or", "logical_xor", "*", "+"]


def _apply(m, op, a, b):
    if op.startswith("logical"):
        return getattr(m, op)(a, b)
    return {"&": operator.and_, "|": operator.or_, "^": operator.xor, "*": operator.mul,
            "+": operator.add}[op](a, b)


def _data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    v = rng.integers(lo, hi, shape)
    v.flat[::7] = 0
    return v.astype(dtype)


@pytest.mark.parametrize("form", ["contiguous", "broadcast", "scalar", "strided", "large"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8"])
@pytest.mark.parametrize("op", BINARY)
def test_binary_byte_ops_match_torch(op, dtype, form):
    if dtype != "bool" and op in ("*", "+"):
        pytest.skip("integer arithmetic: not a byte loop")
    shape = (300_000,) if form == "large" else (37, 41)
    a = _data(dtype, shape, 1)
    b = _data(dtype, {"broadcast": (41,), "scalar": ()}.get(form, shape), 2)
    got, want = [], []
    for m, out in ((ember, got), (torch, want)):
        x, y = m.tensor(a), m.tensor(b)
        if form == "strided":
            x, y = x.t(), y.t()
        out.append(_apply(m, op, x, y))
        out.append(_apply(m, op, y, x) if form != "strided" else out[-1])
    for g, w in zip(got, want):
        assert str(g.dtype)[6:] == str(w.dtype)[6:]
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8"])
def test_unary_and_in_place_byte_ops_match_torch(dtype):
    a, b = _data(dtype, (5, 1001), 3), _data(dtype, (5, 1001), 4)
    res = []
    for m in (ember, torch):
        x, y = m.tensor(a), m.tensor(b)
        z = x.clone()
        z &= y
        w = x.clone()
        w ^= y[0]
        res.append([~x, m.logical_not(x), m.bitwise_not(x), z, w, x.logical_and(y[:, :1])])
    for g, w in zip(*res):
        assert str(g.dtype)[6:] == str(w.dtype)[6:]
        np.testing.assert_array_equal(g.numpy(), w.numpy())
