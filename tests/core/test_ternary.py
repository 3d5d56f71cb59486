"""lerp, addcmul and addcdiv (and their in-place forms) by in-place passes over one
intermediate (core/ternary.py): the same bits as their composites (what runs when
autograd records the call), PyTorch's values, and the composite wherever the fast path
does not apply (broadcasting, half dtypes, tensor weights, autograd)."""
import numpy as np
import pytest
import torch

import ember

CALLS = [
    ("lerp", lambda m, a, b, c: m.lerp(a, b, 0.1)),
    ("lerp far", lambda m, a, b, c: m.lerp(a, b, 0.8)),
    ("lerp 1", lambda m, a, b, c: m.lerp(a, b, 1)),
    ("lerp_", lambda m, a, b, c: a.lerp_(b, 0.01)),
    ("lerp_ far", lambda m, a, b, c: a.lerp_(b, -0.7)),
    ("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.3)),
    ("addcmul_", lambda m, a, b, c: a.addcmul_(b, c, value=-2)),
    ("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5)),
    ("addcdiv_", lambda m, a, b, c: a.addcdiv_(b, c)),
]


def _operands(m, dtype, requires_grad=False):
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((64, 33)).astype(dtype) for _ in range(3)]
    data[0][0, :3] = [np.nan, np.inf, -np.inf]
    data[2] = data[2] + np.sign(data[2]) * 0.5          # away from 0: addcdiv divides
    return [m.tensor(d, requires_grad=requires_grad and k == 0) for k, d in enumerate(data)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,call", CALLS)
def test_the_passes_give_the_composites_bits_and_torch_values(name, call, dtype):
    fast = call(ember, *_operands(ember, dtype)).numpy()
    # the composite: the same call recorded by autograd (through a non-leaf for in-place)
    a, b, c = _operands(ember, dtype, requires_grad=True)
    slow = call(ember, a * 1 if name.endswith("_") or name.endswith("far") else a, b, c)
    assert slow.grad_fn is not None
    np.testing.assert_array_equal(fast, slow.detach().numpy())
    want = call(torch, *_operands(torch, dtype)).numpy()
    np.testing.assert_allclose(fast, want, rtol=1e-6 if dtype == "float32" else 1e-14,
                               atol=1e-6 if dtype == "float32" else 1e-14)


def test_in_place_forms_write_self_and_bump_its_version():
    a, b, c = _operands(ember, "float32")
    v = a._version
    assert a.lerp_(b, 0.25) is a and a.addcmul_(b, c, value=0.5) is a
    assert a.addcdiv_(b, c, value=0.5) is a and a._version > v


@pytest.mark.parametrize("call", [
    lambda m: m.lerp(m.ones(3, 4), m.zeros(4), 0.1),                          # broadcast
    lambda m: m.ones(3, 4, dtype=m.float16).lerp_(m.zeros(3, 4, dtype=m.float16), 0.3),
    lambda m: m.lerp(m.ones(3, 4), m.zeros(3, 4), m.full((3, 4), 0.2)),       # tensor weight
    lambda m: m.addcmul(m.ones(3, 4), m.ones(4), m.full((3, 4), 2.0), value=3),
    lambda m: m.ones(2, 3).addcdiv_(m.ones(2, 3), m.full((2, 3), 4.0), value=m.tensor(2.0)),
])
def test_other_operands_take_the_composite(call):
    got, want = call(ember), call(torch)
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-3)
    assert str(got.dtype)[6:] == str(want.dtype)[6:]
