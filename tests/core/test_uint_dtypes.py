"""uint16/uint32/uint64: PyTorch gives them limited support (creation, casts and copies,
fills, a few arithmetic/bitwise/comparison ops, sums and sorting).  Each op below runs on
torch first: where torch computes it, ember must give the same values and dtype; where torch
refuses it, ember must refuse too."""
import numpy as np
import pytest
import torch

import ember

UINTS = ["uint16", "uint32", "uint64"]
VALUES = [0, 1, 7, 200, 65535]

def _set(t, index, value):
    t[index] = value
    return t


OPS = {
    "add": lambda m, x, y: x + y, "sub": lambda m, x, y: x - y, "mul": lambda m, x, y: x * y,
    "div": lambda m, x, y: x / (y + 1), "floordiv": lambda m, x, y: x // (y + 1),
    "remainder": lambda m, x, y: x % (y + 1), "eq": lambda m, x, y: x == y,
    "ne": lambda m, x, y: x != y, "lt": lambda m, x, y: x < y, "ge": lambda m, x, y: x >= y,
    "and": lambda m, x, y: x & y, "or": lambda m, x, y: x | y, "xor": lambda m, x, y: x ^ y,
    "neg": lambda m, x, y: -x, "abs": lambda m, x, y: x.abs(), "sum": lambda m, x, y: x.sum(),
    "prod": lambda m, x, y: (x % 3).prod(), "cumsum": lambda m, x, y: x.cumsum(0),
    "max": lambda m, x, y: x.max(), "min": lambda m, x, y: x.min(),
    "argmax": lambda m, x, y: x.argmax(), "mean": lambda m, x, y: x.mean(),
    "floor": lambda m, x, y: x.floor(), "trunc": lambda m, x, y: x.trunc(),
    "any": lambda m, x, y: x.any(), "all": lambda m, x, y: x.all(),
    "sort": lambda m, x, y: x.sort().values, "clamp": lambda m, x, y: x.clamp(1, 100),
    "maximum": lambda m, x, y: m.maximum(x, y), "where": lambda m, x, y: m.where(x > 0, x, y),
    "float": lambda m, x, y: x.float(), "to_int64": lambda m, x, y: x.long(),
    "from_float": lambda m, x, y: x.float().to(x.dtype), "fill": lambda m, x, y: x.clone().fill_(3),
    "zeros": lambda m, x, y: m.zeros(3, dtype=x.dtype), "full": lambda m, x, y: m.full((2,), 9, dtype=x.dtype),
    "arange": lambda m, x, y: m.arange(5, dtype=x.dtype), "cat": lambda m, x, y: m.cat([x, y]),
    "index": lambda m, x, y: x[1:3], "flip": lambda m, x, y: x.flip(0),
    "copy": lambda m, x, y: x.clone().copy_(y), "shift": lambda m, x, y: x << 1,
    "pow": lambda m, x, y: x ** 2, "mul_int": lambda m, x, y: x * 3,
    "round": lambda m, x, y: x.round(), "gather": lambda m, x, y: m.gather(x, 0, m.tensor([0, 1])),
    "index_select": lambda m, x, y: x.index_select(0, m.tensor([0, 2])),
    "adv_index": lambda m, x, y: x[m.tensor([0, 2])], "masked_select": lambda m, x, y: x[x == y],
    "nonzero": lambda m, x, y: x.nonzero(), "topk": lambda m, x, y: x.topk(2).values,
    "take": lambda m, x, y: m.take(x, m.tensor([0, 1])),
    "scatter": lambda m, x, y: x.clone().scatter_(0, m.tensor([0]), y[:1]),
    "tril": lambda m, x, y: x.reshape(5, 1).expand(5, 5).tril(),
    "count_nonzero": lambda m, x, y: m.count_nonzero(x),
    "eye": lambda m, x, y: m.eye(2, dtype=x.dtype),
    "linspace": lambda m, x, y: m.linspace(0, 4, 5, dtype=x.dtype),
    "isin": lambda m, x, y: m.isin(x, y[:2]),
    "index_put": lambda m, x, y: x.clone().index_put_((m.tensor([0]),), y[1:2]),
    "setitem_list": lambda m, x, y: _set(x.clone(), [0], 5),
    "setitem_int": lambda m, x, y: _set(x.clone(), 0, 5),
    "unique": lambda m, x, y: m.unique(x), "argsort": lambda m, x, y: x.argsort(),
    "stack": lambda m, x, y: m.stack([x, y]), "repeat": lambda m, x, y: x.repeat(2),
    "roll": lambda m, x, y: x.roll(1), "t_contiguous": lambda m, x, y: x.reshape(5, 1).t().contiguous(),
    "to_bool": lambda m, x, y: x.bool(), "to_half": lambda m, x, y: x.half(),
    "bitwise_not": lambda m, x, y: ~x, "rshift": lambda m, x, y: x >> 1,
    "sum_dim": lambda m, x, y: x.sum(0), "fmod": lambda m, x, y: m.fmod(x, 3),
}


def _pair(dtype, device="cpu"):
    x = np.array(VALUES, dtype=dtype)
    y = np.array(VALUES[::-1], dtype=dtype)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    ex, ey = ember.tensor(x, device=device), ember.tensor(y, device=device)
    return (ex, ey), (tx, ty)


@pytest.mark.parametrize("dtype", UINTS)
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_matches_torch_support(dtype, op, device):
    (ex, ey), (tx, ty) = _pair(dtype, device)
    fn = OPS[op]
    try:
        expect = fn(torch, tx, ty)
    except (RuntimeError, NotImplementedError, TypeError):
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
            fn(ember, ex, ey)
        return
    got = fn(ember, ex, ey)
    assert str(got.dtype).split(".")[-1] == str(expect.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(force=True), expect.numpy())


@pytest.mark.parametrize("dtype", UINTS)
def test_creation_and_values(dtype):
    dt = getattr(ember, dtype)
    big = np.iinfo(dtype).max
    t = ember.tensor([0, big], dtype=dt)
    assert t.dtype is dt and t.tolist() == [0, int(big)]
    assert t.element_size() == np.dtype(dtype).itemsize
    assert dt.is_signed is False and not dt.is_floating_point
    assert ember.iinfo(dt).max == int(big) and ember.iinfo(dt).min == 0
    assert t.numpy().dtype == np.dtype(dtype)
    assert ember.from_numpy(np.array([1, 2], dtype=dtype)).dtype is dt


@pytest.mark.parametrize("dtype", UINTS)
@pytest.mark.parametrize("other", ["uint8", "int8", "int32", "int64", "float32", "bool"])
def test_promotion_matches_torch(dtype, other):
    tt = torch.zeros(2, dtype=getattr(torch, dtype))
    to = torch.zeros(2, dtype=getattr(torch, other))
    et = ember.zeros(2, dtype=getattr(ember, dtype))
    eo = ember.zeros(2, dtype=getattr(ember, other))
    try:
        expect = torch.promote_types(tt.dtype, to.dtype)
    except (RuntimeError, TypeError):
        with pytest.raises((RuntimeError, TypeError)):
            ember.promote_types(et.dtype, eo.dtype)
        return
    assert ember.promote_types(et.dtype, eo.dtype).name == str(expect).split(".")[-1]


def test_uint64_large_values_roundtrip():
    big = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    t = ember.tensor(big)
    assert t.tolist() == [2**64 - 1, 2**63, 5]
    np.testing.assert_array_equal((t == t).numpy(), [True] * 3)
    assert t.to(ember.float64).tolist() == torch.from_numpy(big).double().tolist()
