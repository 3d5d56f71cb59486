"""lerp, addcmul and addcdiv (and their in-place forms) through the backend's `ternary` entry
(ABI 6.5, core/_ternary.pxi): PyTorch's results bit for bit (its CPU kernels fuse the
product-add), the same bits whether or not autograd records the call, PyTorch's node names
and gradients, and the composite wherever the entry does not apply."""
import numpy as np
import pytest
import torch

import ember

CALLS = [
    ("lerp", lambda m, a, b, c: m.lerp(a, b, 0.1)),
    ("lerp far", lambda m, a, b, c: m.lerp(a, b, 0.8)),
    ("lerp 1", lambda m, a, b, c: m.lerp(a, b, 1)),
    ("lerp tensor", lambda m, a, b, c: m.lerp(a, b, c * 0.3)),     # |w| < 0.5 and >= 0.5
    ("lerp_", lambda m, a, b, c: a.lerp_(b, 0.01)),
    ("lerp_ far", lambda m, a, b, c: a.lerp_(b, -0.7)),
    ("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.3)),
    ("addcmul_", lambda m, a, b, c: a.addcmul_(b, c, value=-2)),
    ("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5)),
    ("addcdiv_", lambda m, a, b, c: a.addcdiv_(b, c)),
    ("broadcast", lambda m, a, b, c: m.addcmul(a, b[0], c[:, :1], value=0.37)),
    ("transposed", lambda m, a, b, c: m.lerp(a.t(), b.t(), 0.3)),
]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _operands(m, dtype, requires_grad=False):
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((64, 33)) for _ in range(3)]
    data[0][0, :3] = [np.nan, np.inf, -np.inf]
    data[2] = data[2] + np.sign(data[2]) * 0.5          # away from 0: addcdiv divides
    return [m.tensor(d, dtype=getattr(m, dtype), requires_grad=requires_grad and k == 0)
            for k, d in enumerate(data)]


def _bits(t):
    return t.detach().float().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,call", CALLS)
def test_torch_bits_recorded_or_not(name, call, dtype):
    fast = call(ember, *_operands(ember, dtype))
    want = call(torch, *_operands(torch, dtype))
    np.testing.assert_array_equal(_bits(fast), _bits(want))
    assert str(fast.dtype)[6:] == str(want.dtype)[6:]
    # the same call recorded by autograd (through a non-leaf for in-place)
    a, b, c = _operands(ember, dtype, requires_grad=True)
    slow = call(ember, a * 1 if name.endswith("_") or name.endswith("far") else a, b, c)
    assert slow.grad_fn is not None
    np.testing.assert_array_equal(_bits(fast), _bits(slow))


def test_in_place_forms_write_self_and_bump_its_version():
    a, b, c = _operands(ember, "float32")
    v = a._version
    assert a.lerp_(b, 0.25) is a and a.addcmul_(b, c, value=0.5) is a
    assert a.addcdiv_(b, c, value=0.5) is a and a._version > v


def test_in_place_refuses_a_partial_overlap_as_torch():
    for m in (ember, torch):
        x = m.arange(10.0)
        with pytest.raises(RuntimeError, match="single memory location"):
            x[1:].lerp_(x[:-1], 0.5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("op", ["lerp", "lerp tensor", "addcmul", "addcdiv"])
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5), (4, 5)), ((4, 5), (5,), (4, 1)),
                                    ((3,), (2, 3), ())])
def test_nodes_and_gradients_match_torch(op, shapes, dtype):
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(s) for s in shapes]
    data[2] = data[2] + np.sign(data[2]) * 0.5
    got = []
    for m in (ember, torch):
        a, b, c = (m.tensor(d, dtype=getattr(m, dtype), requires_grad=True) for d in data)
        y = {"lerp": lambda: m.lerp(a, b, 0.3), "lerp tensor": lambda: m.lerp(a, b, c),
             "addcmul": lambda: m.addcmul(a, b, c, value=0.7),
             "addcdiv": lambda: m.addcdiv(a, b, c, value=-1.3)}[op]()
        g = m.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)),
                     dtype=getattr(m, dtype))
        grads = m.autograd.grad(y, (a, b, c), g, create_graph=True, allow_unused=True)
        total = sum((x.float() ** 2).sum() for x in grads if x is not None)
        second = m.autograd.grad(total, (a, b, c), allow_unused=True) \
            if total.requires_grad else (None, None, None)      # lerp's: constants
        got.append((y.grad_fn.name(), y, grads, second))
    (en, ey, eg, e2), (tn, ty, tg, t2) = got
    assert en == tn
    tol = 2e-2 if dtype == "bfloat16" else 1e-6
    np.testing.assert_allclose(_bits(ey), _bits(ty), rtol=tol, atol=tol)
    for x, y in list(zip(eg, tg)) + list(zip(e2, t2)):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(_bits(x), _bits(y), rtol=10 * tol, atol=10 * tol)


def test_a_recorded_node_keeps_only_what_its_backward_reads():
    # addcmul saves tensor1 and tensor2, not input: input may change after the call
    a = ember.ones(3, requires_grad=True) * 1
    t1, t2 = ember.randn(3, requires_grad=True), ember.randn(3)
    y = ember.addcmul(a, t1, t2)
    with ember.no_grad():
        a.add_(1)
    y.sum().backward()
    np.testing.assert_allclose(t1.grad.numpy(), t2.numpy())


def test_lerp_refuses_mixed_dtypes_as_torch():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="expected dtype float for `end`"):
            m.lerp(m.ones(3, 4), m.zeros(4, dtype=m.float64), 0.1)


@pytest.mark.parametrize("call", [
    lambda m: m.addcmul(m.ones(3, 4), m.ones(4, dtype=m.float64), m.full((3, 4), 2.0), value=3),
    lambda m: m.ones(2, 3).addcdiv_(m.ones(2, 3), m.full((2, 3), 4.0), value=m.tensor(2.0)),
    lambda m: m.addcmul(m.arange(4), m.arange(4), m.arange(4), value=2),        # integers
    lambda m: m.lerp(m.ones(3, 4, dtype=m.complex64), m.zeros(3, 4, dtype=m.complex64),
                     0.2),
])
def test_other_operands_take_the_composite(call):
    want, got = call(torch), call(ember)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert str(got.dtype)[6:] == str(want.dtype)[6:]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_thread_count_does_not_change_the_bits(dtype):
    rng = np.random.default_rng(3)
    a, b, c = (ember.tensor(rng.standard_normal((512, 300)), dtype=getattr(ember, dtype))
               for _ in range(3))
    threads = ember.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            ember.set_num_threads(n)
            out.append([ember.lerp(a, b, c).numpy(), ember.addcdiv(a, b, c, value=3).numpy(),
                        ember.addcmul(a, b[0], c[:, :1]).numpy()])
    finally:
        ember.set_num_threads(threads)
    for x, y in zip(*out):
        np.testing.assert_array_equal(x, y)
