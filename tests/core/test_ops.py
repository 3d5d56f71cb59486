"""Op tests against PyTorch: forward values, shapes and dtypes over dtypes, broadcasting,
Python scalars, non-contiguous and empty inputs.  Device-parametrised."""
import numpy as np
import pytest
import torch
from ember.core._dtype import all_dtypes

import ember

NUMERIC = [d for d in all_dtypes if d.name != "bool"]
FLOATS = [d for d in all_dtypes if d.is_floating_point]


def make(shape, dt, device, seed=0, positive=False):
    """The same values as an ember tensor and a torch tensor."""
    g = np.random.default_rng(seed)
    if dt.is_floating_point:
        a = g.uniform(0.1 if positive else -3, 3, size=shape)
    elif dt.name == "bool":
        a = g.integers(0, 2, size=shape).astype(bool)
    elif dt.name == "uint8":
        a = g.integers(0, 20, size=shape)
    else:
        a = g.integers(1 if positive else -20, 20, size=shape)
    t = torch.tensor(a).to(getattr(torch, dt.name))
    if dt.name == "bfloat16":
        e = ember.tensor(t.float().numpy(), device=device).to(ember.bfloat16)
    else:
        e = ember.tensor(t.numpy(), device=device)
    return e, t


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dt", NUMERIC, ids=str)
def test_binary_same_dtype(name, dt, device, oracle):
    a, ta = make((4, 5), dt, device, 1)
    b, tb = make((4, 5), dt, device, 2, positive=True)
    oracle.assert_matches(getattr(ember, name)(a, b), getattr(torch, name)(ta, tb))


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
@pytest.mark.parametrize("shapes", [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5,), ()),
                                    ((0, 3), (3,)), ((1,), (2, 0))])
def test_binary_broadcasting(op, shapes, device, oracle):
    a, ta = make(shapes[0], ember.float32, device, 1)
    b, tb = make(shapes[1], ember.float32, device, 2, positive=True)
    oracle.assert_matches(eval(f"a {op} b"), eval(f"ta {op} tb"))


@pytest.mark.parametrize("scalar", [2, -3, 2.5, True])
@pytest.mark.parametrize("dt", [ember.bool, ember.uint8, ember.int32, ember.int64,
                                ember.float16, ember.bfloat16, ember.float32, ember.float64],
                         ids=str)
def test_python_scalars_both_sides(scalar, dt, device, oracle):
    a, ta = make((3, 4), dt, device)
    for expr in ["a + s", "s + a", "a * s", "s * a", "a / s", "s / (a + 100)"]:
        if dt.name == "bool" and "100" in expr:
            continue
        s = scalar
        got = eval(expr, {"a": a, "s": s})
        want = eval(expr, {"a": ta, "s": s})
        oracle.assert_matches(got, want)
    if dt.name != "bool" and not isinstance(scalar, bool):
        oracle.assert_matches(a - scalar, ta - scalar)
        oracle.assert_matches(scalar - a, scalar - ta)


@pytest.mark.parametrize("d1", all_dtypes, ids=str)
@pytest.mark.parametrize("d2", all_dtypes, ids=str)
def test_promotion_tensor_tensor(d1, d2, device, oracle):
    a, ta = make((2, 3), d1, device, 1)
    b, tb = make((2, 3), d2, device, 2)
    oracle.assert_matches(a + b, ta + tb)
    oracle.assert_matches(a * b[0, 0], ta * tb[0, 0])      # zero-dim tier
    assert ember.result_type(a, b).name == str(torch.result_type(ta, tb))[6:]


def test_alpha_and_errors(device, oracle):
    a, ta = make((3,), ember.float32, device, 1)
    b, tb = make((3,), ember.float32, device, 2)
    oracle.assert_matches(ember.add(a, b, alpha=2.5), torch.add(ta, tb, alpha=2.5))
    oracle.assert_matches(ember.sub(a, b, alpha=-2), torch.sub(ta, tb, alpha=-2))
    i = ember.tensor([1, 2, 3], device=device)
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        ember.add(i, i, alpha=0.5)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match .* \(4\)"):
        a + ember.ones(4, device=device)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool"):
        ember.tensor([True], device=device) - ember.tensor([False], device=device)
    with pytest.raises(TypeError, match="unsupported operand"):
        ember.add(a, "x")
    with pytest.raises(TypeError):
        a + "x"


@pytest.mark.parametrize("name", ["neg", "exp", "relu"])
@pytest.mark.parametrize("dt", NUMERIC, ids=str)
def test_unary(name, dt, device, oracle):
    a, ta = make((3, 5), dt, device)
    if name == "exp" and not dt.is_floating_point:
        ta_ = ta.to(torch.float32)
        oracle.assert_matches(ember.exp(a), torch.exp(ta_))
        return
    if name == "neg" and dt.name == "uint8":
        return      # torch wraps too; covered by the wraparound of sub
    oracle.assert_matches(getattr(ember, name)(a), getattr(torch, name)(ta))
    oracle.assert_matches(getattr(a, name)(), getattr(ta, name)())


def test_unary_non_contiguous_and_empty(device, oracle):
    a, ta = make((4, 6), ember.float32, device)
    oracle.assert_matches(ember.exp(a.t()[1:, ::2]), torch.exp(ta.t()[1:, ::2]))
    oracle.assert_matches(-a[:, 1], -ta[:, 1])
    e, te = make((0, 3), ember.float32, device)
    oracle.assert_matches(ember.relu(e), torch.relu(te))
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool"):
        -ember.tensor([True], device=device)


def test_binary_non_contiguous(device, oracle):
    a, ta = make((6, 8), ember.float64, device, 1)
    b, tb = make((8, 6), ember.float64, device, 2)
    oracle.assert_matches(a[::2, 1:] * b.t()[::2, 1:], ta[::2, 1:] * tb.t()[::2, 1:])
    oracle.assert_matches(a.t() + b, ta.t() + tb)


def test_out_and_inplace(device, oracle):
    a, ta = make((2, 3), ember.float32, device, 1)
    b, tb = make((2, 3), ember.float32, device, 2)
    out = ember.empty(2, 3, device=device)
    r = ember.add(a, b, out=out)
    assert r is out
    oracle.assert_matches(out, ta + tb)
    out64 = ember.empty(2, 3, dtype=ember.float64, device=device)
    ember.mul(a, b, out=out64)                    # computed in float32, cast on store
    oracle.assert_matches(out64, (ta * tb).double())
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ember.add(a, b, out=ember.empty(2, 3, dtype=ember.int64, device=device))
    with pytest.warns(UserWarning, match="resized"):
        ember.add(a, b, out=ember.empty(5, device=device))
    c, tc = a.clone(), ta.clone()
    v0 = c._version
    assert c.add_(b) is c and c.mul_(2) is c
    oracle.assert_matches(c, (tc + tb) * 2)
    assert c._version == v0 + 2
    c += 1
    c -= b
    c *= b
    c /= 2
    tc = (tc + tb) * 2
    tc += 1
    tc -= tb
    tc *= tb
    tc /= 2
    oracle.assert_matches(c, tc)
    i = ember.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ember.ones(3, device=device).add_(ember.ones(2, 3, device=device))


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False),
                                         ((0, 2), False), ((0, 2), True), ((), False),
                                         ([1, 2], True)])
@pytest.mark.parametrize("dt", [ember.float32, ember.float64, ember.int32, ember.int64,
                                ember.bool, ember.uint8, ember.float16, ember.bfloat16],
                         ids=str)
def test_sum(dim, keepdim, dt, device, oracle):
    a, ta = make((3, 4, 5), dt, device)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    got, want = a.sum(**kw), ta.sum(**kw)
    oracle.assert_matches(got, want, rtol=5e-2 if dt.name in ("float16", "bfloat16") else None)


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, True), ((1, 2), False), (-2, True)])
def test_mean(dim, keepdim, device, oracle):
    a, ta = make((3, 4, 5), ember.float32, device)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    oracle.assert_matches(a.mean(**kw), ta.mean(**kw))
    oracle.assert_matches(ember.mean(a.transpose(0, 2), **kw), torch.mean(ta.transpose(0, 2), **kw))
    i = ember.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        i.mean()
    oracle.assert_matches(i.mean(dtype=ember.float64), torch.tensor([1, 2]).mean(dtype=torch.float64))


def test_reduce_edge_cases(device, oracle):
    e, te = make((0, 3), ember.float32, device)
    oracle.assert_matches(e.sum(), te.sum())
    oracle.assert_matches(e.sum(0), te.sum(0))
    oracle.assert_matches(e.mean(0), te.mean(0))
    s = ember.tensor(3.0, device=device)
    oracle.assert_matches(s.sum(), torch.tensor(3.0).sum())
    oracle.assert_matches(s.sum(0), torch.tensor(3.0).sum(0))
    a, ta = make((3, 4), ember.float32, device)
    oracle.assert_matches(a.sum(1, dtype=ember.float64), ta.sum(1, dtype=torch.float64))
    with pytest.raises(IndexError, match="Dimension out of range"):
        a.sum(2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        a.sum((0, -2))


def test_big_sum_is_accurate_and_thread_independent(device):
    if device != "cpu":
        pytest.skip("thread control is the CPU plugin's")
    x = ember.rand(3_000_001, generator=ember.Generator().manual_seed(3))
    want = x.numpy().astype(np.float64).sum()
    n0 = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        s1 = x.sum().item()
        ember.set_num_threads(2)
        s2 = x.sum().item()
    finally:
        ember.set_num_threads(n0)
    assert s1 == s2                                    # bitwise, any thread count
    assert abs(s1 - want) / want < 1e-6


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                                   ((2, 1, 2, 3), (4, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3))])
@pytest.mark.parametrize("dt", [ember.float32, ember.float64, ember.int64], ids=str)
def test_matmul(sa, sb, dt, device, oracle):
    a, ta = make(sa, dt, device, 1)
    b, tb = make(sb, dt, device, 2)
    oracle.assert_matches(a @ b, ta @ tb, rtol=1e-4 if dt.name == "float32" else None)


def test_matmul_strided_and_errors(device, oracle):
    a, ta = make((6, 5), ember.float32, device, 1)
    b, tb = make((6, 4), ember.float32, device, 2)
    oracle.assert_matches(a.t() @ b, ta.t() @ tb, rtol=1e-4)
    oracle.assert_matches(a[::2].t() @ b[::2, 1:], ta[::2].t() @ tb[::2, 1:], rtol=1e-4)
    x, tx = make((3, 4, 5), ember.float32, device, 3)
    oracle.assert_matches(x.transpose(0, 2) @ x.transpose(0, 2).transpose(1, 2),
                          tx.transpose(0, 2) @ tx.transpose(0, 2).transpose(1, 2), rtol=1e-4)
    h, th = make((4, 8), ember.float16, device, 4)
    oracle.assert_matches(h @ h.t(), (th.float() @ th.t().float()).half(), rtol=2e-2)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(6x5 and 6x4\)"):
        a @ b
    with pytest.raises(RuntimeError, match="same dtype"):
        a @ ember.ones(5, 2, dtype=ember.float64, device=device)
    with pytest.raises(RuntimeError, match="at least 1D"):
        ember.matmul(ember.tensor(1.0, device=device), a)


@pytest.mark.parametrize("src", all_dtypes, ids=str)
@pytest.mark.parametrize("dst", all_dtypes, ids=str)
def test_casts(src, dst, device, oracle):
    a, ta = make((7,), src, device)
    if src.is_floating_point:           # values with fractions, negatives, rounding cases
        vals = [-2.7, -0.5, 0.0, 0.3, 1.5, 2.5, 100.25]
        ta = torch.tensor(vals).to(getattr(torch, src.name))
        a = oracle.from_torch(ta, device)
        if not dst.is_floating_point and dst.name != "bool":
            ta = ta.abs() if dst.name == "uint8" else ta      # negative -> uint8 is UB in C
            a = oracle.from_torch(ta, device)
    oracle.assert_matches(a.to(dst), ta.to(getattr(torch, dst.name)))


def test_float16_bfloat16_rounding(device, oracle):
    t = torch.tensor([1.0001, 65504.0, 1e-7, -3.14159, 0.1, 1e38], dtype=torch.float32)
    e = oracle.from_torch(t, device)
    oracle.assert_matches(e.half(), t.half(), rtol=0, atol=0)
    oracle.assert_matches(e.bfloat16(), t.bfloat16(), rtol=0, atol=0)


def test_copy_fill_clone(device, oracle):
    a, ta = make((3, 4), ember.float32, device)
    c = a.clone()
    assert c.data_ptr() != a.data_ptr()
    oracle.assert_matches(c, ta)
    d = ember.zeros(3, 4, dtype=ember.float64, device=device)
    v0 = d._version
    assert d.copy_(a) is d and d._version == v0 + 1
    oracle.assert_matches(d, ta.double())
    d.copy_(ember.tensor([1.0, 2.0, 3.0, 4.0], device=device))     # broadcast source
    oracle.assert_matches(d, torch.tensor([1.0, 2, 3, 4]).double().expand(3, 4))
    d.t()[1:].fill_(7)
    td = torch.tensor([1.0, 2, 3, 4]).double().expand(3, 4).clone()
    td.t()[1:].fill_(7)
    oracle.assert_matches(d, td)
    d.zero_()
    assert d.sum().item() == 0
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of "
                                           r"tensor b \(2\)"):
        d.copy_(ember.ones(2, 4, device=device))
    assert a.to(ember.float32) is a and a.to(ember.float32, copy=True) is not a
    assert a.contiguous() is a and a.t().contiguous() is not a.t()
    assert a.t().contiguous().is_contiguous()


@pytest.mark.parametrize("fn,args,kw", [
    ("zeros", (2, 3), {}), ("ones", ((4,),), {"dtype": ember.int32}),
    ("full", ((2, 2), 7), {}), ("full", ((2,), 1.5), {}), ("full", ((2,), True), {}),
    ("arange", (5,), {}), ("arange", (1, 2.5, 0.5), {}), ("arange", (10, 0, -3), {}),
    ("arange", (0, 1, 0.1), {"dtype": ember.float64}), ("empty", (0, 2), {}),
])
def test_factories(fn, args, kw, device, oracle):
    tkw = {k: (getattr(torch, v.name) if isinstance(v, ember.dtype) else v) for k, v in kw.items()}
    got = getattr(ember, fn)(*args, device=device, **kw)
    want = getattr(torch, fn)(*args, **tkw)
    if fn == "empty":
        assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == "float32"
        return
    oracle.assert_matches(got, want)


def test_tensor_inference(device, oracle):
    for data in [1, 2.5, True, [1, 2], [1.0, 2], [[True, False]], np.arange(3, dtype=np.int16),
                 np.ones((2, 2), dtype=np.float64), [], np.float64(1.5)]:
        oracle.assert_matches(ember.tensor(data, device=device), torch.tensor(data))
    oracle.assert_matches(ember.tensor([1, 2], dtype=ember.float16, device=device),
                          torch.tensor([1, 2], dtype=torch.float16))
    with pytest.raises(TypeError):
        ember.tensor("abc")
    with pytest.raises(ValueError):
        ember.tensor([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.zeros(-1)


def test_random_reproducible(device):
    ember.manual_seed(123)
    a = ember.rand(1000, device=device)
    b = ember.randn(1000, device=device)
    ember.manual_seed(123)
    assert ember.rand(1000, device=device).tolist() == a.tolist()
    assert ember.randn(1000, device=device).tolist() == b.tolist()
    g = ember.Generator().manual_seed(5)
    x = ember.rand(10, generator=g)
    g.manual_seed(5)
    assert ember.rand(10, generator=g).tolist() == x.tolist()
    state = g.get_state()
    y = ember.randn(7, generator=g)
    g.set_state(state)
    assert ember.randn(7, generator=g).tolist() == y.tolist()
    big = ember.randn(200_000, dtype=ember.float64, device=device).numpy(force=True)
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01
    u = ember.rand(200_000, device=device).numpy(force=True)
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    with pytest.raises(NotImplementedError):
        ember.empty(3, dtype=ember.int64, device=device).uniform_()


def test_random_thread_independent():
    n0 = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        a = ember.randn(100_000, generator=ember.Generator().manual_seed(9)).numpy()
        ember.set_num_threads(2)
        b = ember.randn(100_000, generator=ember.Generator().manual_seed(9)).numpy()
    finally:
        ember.set_num_threads(n0)
    assert np.array_equal(a, b)


def test_meta_device_runs_shape_rules():
    a = ember.empty(2, 3, device="meta")
    b = ember.empty(4, 1, 3, device="meta")
    assert (a + b).shape == (4, 2, 3) and (a + b).device.type == "meta"
    assert (a @ ember.empty(3, 5, device="meta")).shape == (2, 5)
    assert a.sum(1, keepdim=True).shape == (2, 1)
    assert ember.exp(a).dtype == ember.float32
    with pytest.raises(RuntimeError, match="must match"):
        a + ember.empty(4, device="meta")


def test_overlapping_writes_are_refused(device):
    x = ember.arange(9.0, device=device).view(3, 3)
    assert x.add_(x).tolist() == (ember.arange(9.0) * 2).view(3, 3).tolist()   # exact alias
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory"):
        x.add_(x.t())
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x.t().copy_(x)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ember.ones(1, device=device).expand(3).add_(1)
    one = ember.ones(1, device=device)
    one.expand(3).fill_(2)                      # one value into shared memory: PyTorch fills
    assert one.tolist() == [2.0]
    y = ember.arange(6.0, device=device)
    y[:3].copy_(y[3:])                                   # same storage, disjoint: fine
    assert y.tolist() == [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]
    ember.exp(y[:3], out=y[3:])
    assert y[3:].tolist() == pytest.approx(np.exp([3.0, 4.0, 5.0]).tolist())


def test_interleaved_views_read_as_if_apart(device):
    """Views whose byte ranges interleave (columns of one matrix) are PyTorch's "too hard
    to tell" overlap: no error, and here the result of reading the source first."""
    a = ember.arange(20.0, device=device).view(4, 5)
    a[:, 2] = a[:, 3]                                    # disjoint columns
    assert a[:, 2].tolist() == [3.0, 8.0, 13.0, 18.0]
    expected = np.arange(20.0).reshape(4, 5)
    expected[:, 1:] = expected[:, :-1].copy()
    a = ember.arange(20.0, device=device).view(4, 5)
    a[:, 1:] = a[:, :-1]                                 # shared elements: read first
    assert a.tolist() == expected.tolist()
    expected = np.arange(20.0).reshape(4, 5)
    expected[:, 1:] += expected[:, :-1].copy()
    a = ember.arange(20.0, device=device).view(4, 5)
    a[:, 1:] += a[:, :-1]
    assert a.tolist() == expected.tolist()
    a = ember.arange(20.0, device=device).view(4, 5)
    ember.neg(a[:, :-1], out=a[:, 1:])
    assert a[:, 1:].tolist() == (-np.arange(20.0).reshape(4, 5)[:, :-1]).tolist()
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        b = ember.arange(10.0, device=device)
        b[1:] = b[:-1]                                   # dense and partly shared: refused
