"""The math ops on the ABI's remaining unary/binary/reduce codes, against PyTorch:
dtypes (integer inputs promote to float where PyTorch does), non-contiguous, empty,
in-place and out=, and the error cases."""
import numpy as np
import pytest
import torch

import ember

UNARY = ["abs", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal", "square"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "int8"]


def pair(shape, dt, device, positive=False, seed=0):
    g = np.random.default_rng(seed)
    lo = 0.5 if positive else -4
    if dt.startswith(("float", "bfloat")):
        a = g.uniform(lo, 4, size=shape)
    else:
        a = g.integers(1 if positive or dt == "uint8" else -9, 10, size=shape)
    t = torch.tensor(a).to(getattr(torch, dt))
    e = ember.tensor(t.float().numpy() if dt == "bfloat16" else t.numpy(), device=device)
    return e.to(getattr(ember, dt)), t


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", DTYPES)
def test_unary_ops(name, dt, device, oracle):
    positive = name in ("log", "sqrt", "reciprocal")
    e, t = pair((3, 5), dt, device, positive)
    if name == "abs" and dt == "uint8":
        pytest.skip("abs of uint8 is the identity")
    fe = ember.abs if name == "abs" else getattr(ember, name)
    want = getattr(torch, name)(t)
    oracle.assert_matches(fe(e), want)
    oracle.assert_matches(getattr(e, name)(), want)
    oracle.assert_matches(fe(e.t()), getattr(torch, name)(t.t()))


@pytest.mark.parametrize("name", UNARY)
def test_unary_inplace_out_and_empty(name, device, oracle):
    e, t = pair((4, 3), "float32", device, positive=True)
    out = ember.empty(4, 3, device=device)
    fe = ember.abs if name == "abs" else getattr(ember, name)
    assert fe(e, out=out) is out
    oracle.assert_matches(out, getattr(torch, name)(t))
    v0 = e._version
    r = getattr(e, name + "_")()
    assert r is e and e._version == v0 + 1
    oracle.assert_matches(e, getattr(torch, name)(t))
    z, tz = pair((0, 2), "float32", device)
    oracle.assert_matches(fe(z), getattr(torch, name)(tz))
    i = ember.tensor([1, 2], device=device)
    if name not in ("abs", "square"):
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(i, name + "_")()


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("d1,d2", [("float32", "float32"), ("int32", "float64"),
                                   ("uint8", "int8"), ("bool", "int64"), ("float16", "bfloat16")])
def test_maximum_minimum(name, d1, d2, device, oracle):
    a, ta = pair((3, 1), d1 if d1 != "bool" else "int64", device, seed=1)
    if d1 == "bool":
        a, ta = a.bool(), ta.bool()
    b, tb = pair((4,), d2, device, seed=2)
    oracle.assert_matches(getattr(ember, name)(a, b), getattr(torch, name)(ta, tb))
    nan = ember.tensor([float("nan"), 1.0], device=device)
    assert np.isnan(getattr(ember, name)(nan, ember.zeros(2, device=device))[0].item())


@pytest.mark.parametrize("expr", ["a ** 2", "a ** 0.5", "2 ** a", "a ** b", "a.pow(3)",
                                  "ember_or_torch.pow(a, 2)", "ember_or_torch.pow(2.5, a)"])
@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int32"])
def test_pow(expr, dt, device, oracle):
    a, ta = pair((2, 3), dt, device, positive=True, seed=3)
    b, tb = pair((3,), dt, device, positive=True, seed=4)
    got = eval(expr, {"a": a, "b": b, "ember_or_torch": ember})
    want = eval(expr, {"a": ta, "b": tb, "ember_or_torch": torch})
    oracle.assert_matches(got, want, rtol=1e-4 if "float32" in dt else None)
    x, tx = a.clone(), ta.clone()
    x **= 2
    tx **= 2
    oracle.assert_matches(x, tx)


def test_pow_negative_integer_exponent(device):
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        ember.tensor([2, 3], device=device) ** -1


@pytest.mark.parametrize("name", ["prod", "amax", "amin"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), ((0, 2), False),
                                         (-1, True)])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8", "bfloat16"])
def test_reductions(name, dim, keepdim, dt, device, oracle):
    a, ta = pair((3, 4, 2), dt, device, positive=name == "prod", seed=5)
    if name == "prod":          # keep products small: floats near 1, integers in 0..2
        if dt.startswith(("float", "bf")):
            a, ta = a / 4 + 0.5, ta / 4 + 0.5
        else:
            small = np.random.default_rng(6).integers(0, 3, size=(3, 4, 2))
            ta = torch.tensor(small).to(getattr(torch, dt))
            a = ember.tensor(small, device=device).to(getattr(ember, dt))
    if dim is None:
        got, want = getattr(a, name)(), getattr(ta, name)()
    elif name == "prod" and isinstance(dim, tuple):
        pytest.skip("torch.prod takes one dim")
    else:
        got, want = getattr(a, name)(dim, keepdim), getattr(ta, name)(dim, keepdim)
    oracle.assert_matches(got, want, rtol=2e-2 if dt == "bfloat16" else 1e-5)


def test_reduction_edge_cases(device, oracle):
    e, te = pair((0, 3), "float32", device)
    oracle.assert_matches(e.prod(), te.prod())
    oracle.assert_matches(e.amax(1), te.amax(1))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        e.amax(0)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        ember.amin(e)           # no dim over an empty tensor: RuntimeError, as torch
    b = ember.tensor([[True, False], [True, True]], device=device)
    tb = torch.tensor([[True, False], [True, True]])
    oracle.assert_matches(b.prod(1), tb.prod(1))
    oracle.assert_matches(b.amax(0), tb.amax(0))
    nan = ember.tensor([1.0, float("nan"), 3.0], device=device)
    assert np.isnan(nan.amax().item()) and np.isnan(nan.amin().item())


CMP = ["eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", CMP + ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("d1,d2", [("float32", "float32"), ("int64", "float64"),
                                   ("uint8", "int8"), ("float16", "bfloat16"), ("int32", "int32")])
def test_comparisons_and_logical(name, d1, d2, device, oracle):
    a, ta = pair((3, 1), d1, device, seed=1)
    b, tb = pair((4,), d2, device, seed=2)
    a, ta = a[::1], ta[::1]
    oracle.assert_matches(getattr(ember, name)(a, b), getattr(torch, name)(ta, tb))
    oracle.assert_matches(getattr(a, name)(b), getattr(ta, name)(tb))
    if name in CMP:                      # torch's logical_* take tensors only
        oracle.assert_matches(getattr(ember, name)(a.t(), 1), getattr(torch, name)(ta.t(), 1))


def test_comparison_operators_and_nan(device, oracle):
    a, ta = pair((2, 3), "float32", device, seed=3)
    for expr in ["a == b", "a != b", "a < b", "a <= b", "a > b", "a >= b", "a > 0", "0 < a",
                 "a == 1.5", "~(a > 0)", "(a > 0) & (a < 1)", "(a > 0) | (a < -1)",
                 "(a > 0) ^ (b > 0)"]:
        b, tb = a.t().t() * 0 + 1, ta * 0 + 1
        oracle.assert_matches(eval(expr, {"a": a, "b": b}), eval(expr, {"a": ta, "b": tb}))
    nan = ember.tensor([float("nan"), 1.0], device=device)
    assert (nan == nan).tolist() == [False, True] and (nan != nan).tolist() == [True, False]
    assert (nan < 2).tolist() == [False, True]
    assert ember.logical_not(ember.tensor([0.0, 2.0, float("nan")])).tolist() == [True, False, False]
    assert (a == None) is False and (a != "x") is True      # noqa: E711
    assert (ember.tensor([1, 2]) & ember.tensor([3, 4])).tolist() == [1, 0]


def test_all_any_equal(device, oracle):
    a, ta = pair((3, 4), "int32", device, seed=4)
    for args in [(), (0,), (1, True)]:
        oracle.assert_matches(ember.all(a > 0, *args), torch.all(ta > 0, *args))
        oracle.assert_matches((a > -9).all(*args), (ta > -9).all(*args))
        oracle.assert_matches(ember.any(a > 5, *args), torch.any(ta > 5, *args))
    e = ember.zeros(0, 3, device=device)
    assert ember.all(e).item() is True and ember.any(e).item() is False
    assert ember.equal(a, a.clone()) and not ember.equal(a, a + 1)
    assert not ember.equal(a, a.view(4, 3))


MORE_UNARY = ["floor", "ceil", "trunc", "round", "frac", "exp2", "expm1", "log2", "log10",
              "log1p", "erf", "erfc", "asin", "acos", "atan", "sinh", "cosh", "rsqrt"]


@pytest.mark.parametrize("name", MORE_UNARY)
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int32", "int64"])
def test_more_unary(name, dt, device, oracle):
    if name == "frac" and not dt.startswith(("float", "bf")):
        pytest.skip("torch.frac is floating-only")
    domain01 = name in ("asin", "acos")
    positive = name in ("log2", "log10", "log1p", "rsqrt")
    e, t = pair((3, 4), dt, device, positive=positive, seed=11)
    if domain01:
        if not dt.startswith(("float", "bf")):
            pytest.skip("asin/acos of integers: only 0/±1 are in the domain")
        e, t = e / 4, t / 4
    if not dt.startswith(("float", "bf")) and name in ("floor", "ceil", "trunc", "round"):
        t = t                                            # identity on integers
    fe = getattr(ember, name)
    want = getattr(torch, name)(t)
    oracle.assert_matches(fe(e), want, rtol=2e-2 if dt in ("float16", "bfloat16") else 1e-5)
    oracle.assert_matches(getattr(e, name)(), want,
                          rtol=2e-2 if dt in ("float16", "bfloat16") else 1e-5)


def test_round_decimals_and_halves(device, oracle):
    t = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 1.2345, 123.456])
    e = oracle.from_torch(t, device)
    oracle.assert_matches(ember.round(e), torch.round(t))
    oracle.assert_matches(ember.round(e, decimals=2), torch.round(t, decimals=2))
    oracle.assert_matches(e.round(decimals=-1), t.round(decimals=-1))


MORE_BINARY = ["atan2", "fmod", "remainder", "floor_divide", "fmax", "fmin"]


@pytest.mark.parametrize("name", MORE_BINARY)
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "int8"])
def test_more_binary(name, dt, device, oracle):
    a, ta = pair((3, 4), dt, device, seed=12)
    b, tb = pair((4,), dt, device, positive=True, seed=13)
    b, tb = b * (-1) ** ember.arange(4, device=device), tb * (-1) ** torch.arange(4)
    if name == "atan2" and not dt.startswith("float"):
        oracle.assert_matches(ember.atan2(a, b), torch.atan2(ta, tb))
        return
    oracle.assert_matches(getattr(ember, name)(a, b), getattr(torch, name)(ta, tb))
    oracle.assert_matches(getattr(a, name)(b), getattr(ta, name)(tb))


def test_operators_floor_mod_bitwise(device, oracle):
    a, ta = pair((3, 4), "int32", device, seed=14)
    b, tb = pair((3, 4), "int32", device, positive=True, seed=15)
    for expr in ["a // b", "a % b", "7 // b", "-7 % b", "a // 3", "a % -3", "a & b", "a | b",
                 "a ^ b", "~a", "a << 2", "a >> 1", "b << b", "3 & a", "(a > 0) & (b > 2)",
                 "~(a > 0)", "(a > 0) | True"]:
        oracle.assert_matches(eval(expr, {"a": a, "b": b}), eval(expr, {"a": ta, "b": tb}))
    f, tf = pair((3, 4), "float32", device, seed=16)
    oracle.assert_matches(f // 0.7, tf // 0.7)
    oracle.assert_matches(f % -0.7, tf % -0.7)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a // ember.zeros(3, 4, dtype=ember.int32, device=device)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):
        ~f                            # PyTorch's operator message and type


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dt", ["float32", "int64", "int32"])
def test_div_rounding_modes(mode, dt, device, oracle):
    a, ta = pair((3, 4), dt, device, seed=17)
    b, tb = pair((4,), dt, device, positive=True, seed=18)
    b, tb = b * (-1) ** ember.arange(4, device=device), tb * (-1) ** torch.arange(4)
    oracle.assert_matches(ember.div(a, b, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))
    oracle.assert_matches(a.div(3, rounding_mode=mode), ta.div(3, rounding_mode=mode))
    x, tx = a.clone(), ta.clone()
    x.div_(b, rounding_mode=mode)
    tx.div_(tb, rounding_mode=mode)
    oracle.assert_matches(x, tx)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        ember.div(a, b, rounding_mode="nearest")


@pytest.mark.parametrize("expr", [
    "F.argmax(a)", "F.argmax(a, 1)", "F.argmin(a, 0, keepdim=True)", "a.argmax(-1)",
    "F.argmax(a, keepdim=True)", "F.argmax(a.t(), 1)", "F.argmin(i)", "F.argmax(i, 0)",
    "F.max(a)", "F.min(a)", "F.max(a, b)", "F.min(a, 1).values", "F.min(a, 1).indices",
    "F.max(a, 0, keepdim=True)[0]", "a.max(1)[1]", "F.max(a.t(), 1).indices",
    "F.cumsum(a, 0)", "F.cumsum(a, 1)", "F.cumsum(i, 0)", "F.cumsum(a.t(), -1)",
    "F.cumsum(i.int(), 1)", "F.cumsum(a, 0, dtype=F.float64)", "F.cumprod(a / 3, 1)",
    "F.cumprod(i, 0)", "F.cummax(a, 0).values", "F.cummax(a, 1).indices",
    "F.cummin(a.t(), 1).values", "F.cummin(a.t(), 1).indices", "F.cummax(i, 1).indices",
    "a.cumsum(1)", "F.cumsum(F.tensor(3.0), 0)", "F.cummax(i.bool(), 0).values",
])
def test_arg_reductions_and_scans(expr, device, oracle):
    a, ta = pair((4, 5), "float32", device, seed=31)
    b, tb = pair((4, 5), "float32", device, seed=32)
    i, ti = pair((4, 5), "int64", device, seed=33)
    got = eval(expr, {"F": ember, "a": a, "b": b, "i": i})
    want = eval(expr, {"F": torch, "a": ta, "b": tb, "i": ti})
    oracle.assert_matches(got, want, rtol=1e-5, atol=1e-5)


def test_arg_and_scan_edge_cases(device, oracle):
    nan = ember.tensor([1.0, float("nan"), 5.0, float("nan")], device=device)
    tnan = torch.tensor([1.0, float("nan"), 5.0, float("nan")])
    oracle.assert_matches(ember.argmax(nan), torch.argmax(tnan))
    oracle.assert_matches(ember.argmin(nan), torch.argmin(tnan))
    for f in ("cummax", "cummin"):
        got, want = getattr(ember, f)(nan, 0), getattr(torch, f)(tnan, 0)
        oracle.assert_matches(got.values, want.values)
        oracle.assert_matches(got.indices, want.indices)
    ties = ember.tensor([2, 2, 1, 2], device=device)
    oracle.assert_matches(ember.cummax(ties, 0).indices, torch.cummax(torch.tensor([2, 2, 1, 2]), 0).indices)
    oracle.assert_matches(ember.argmax(ties), torch.argmax(torch.tensor([2, 2, 1, 2])))
    with pytest.raises(IndexError, match="Expected reduction dim to be specified"):
        ember.argmax(ember.zeros(0, device=device))
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        ember.max(ember.zeros(0, device=device))
    with pytest.raises(IndexError, match="non-zero size"):
        ember.argmax(ember.zeros(0, 3, device=device), 0)
    e = ember.zeros(0, 3, device=device)
    oracle.assert_matches(ember.cumsum(e, 0), torch.cumsum(torch.zeros(0, 3), 0))


@pytest.mark.parametrize("data, dtype, decimals", [
    ([1000.5, 123.45], "float16", 2), ([123.45], "bfloat16", 1), ([1234.5, 15.0, -25.], "float32", -1),
    ([1.005, 2.675], "float32", 2), ([0.5, 1.5, 2.5], "float64", 0), ([12345.678], "float64", -2)])
def test_round_decimals_as_torch(data, dtype, decimals):
    e = ember.tensor(data, dtype=getattr(ember, dtype)).round(decimals=decimals)
    t = torch.tensor(data, dtype=getattr(torch, dtype)).round(decimals=decimals)
    assert e.tolist() == t.tolist() and str(e.dtype)[6:] == str(t.dtype)[6:]


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_with_rounding_has_zero_gradients(mode):
    x = ember.tensor([1.5, -2.5, 3.], requires_grad=True)
    y = ember.tensor([2., 2., -2.], requires_grad=True)
    r = ember.div(x, y, rounding_mode=mode)
    r.sum().backward()
    want = torch.div(torch.tensor([1.5, -2.5, 3.]), torch.tensor([2., 2., -2.]),
                     rounding_mode=mode)
    assert r.tolist() == want.tolist()
    assert x.grad.tolist() == [0., 0., 0.] and y.grad.tolist() == [0., 0., 0.]
    with pytest.raises(RuntimeError, match="floor_divide is not implemented"):
        ember.floor_divide(x, y).sum().backward()       # as torch's floor_divide


@pytest.mark.parametrize("make", [
    lambda L: L.randn(2, 3, 4, 4).contiguous(memory_format=L.channels_last),
    lambda L: L.randn(3, 4).t(), lambda L: L.randn(3, 4).t()[:, :2],
    lambda L: L.randn(4, 6)[:, ::2], lambda L: L.randn(3, 4)])
def test_elementwise_results_keep_a_dense_inputs_layout(make):
    """As PyTorch's TensorIterator: an input laid out densely in another order (channels_last,
    a transpose) gives its layout to the result; a sliced one gives a contiguous result."""
    def strides(L):
        L.manual_seed(0)
        x = make(L)
        return [r.stride() for r in (L.relu(x), x + 1, 1 + x, x * x, x.exp(),
                                     x + L.randn(x.shape[-1]), L.zeros(x.shape) + x)]
    assert strides(ember) == strides(torch)
    x = ember.randn(2, 3, 4, 4).contiguous(memory_format=ember.channels_last)
    assert ember.relu(x).permute(0, 2, 3, 1).view(-1, 3).shape == (32, 3)


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, 2.0, 1, 1.0, -2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_common_scalar_exponents_match_torch(exponent, dtype):
    # x ** 2 and the like take PyTorch's forms (a multiply, sqrt, rsqrt, reciprocal), ~100x
    # faster than pow per element, with its values at -0, inf and nan
    import torch
    x = np.array([-2.0, -0.0, 0.0, 1.5, np.inf, -np.inf, np.nan, 3.0, 1e-3], dtype=dtype)
    got = (ember.tensor(x) ** exponent).numpy()
    want = (torch.tensor(x) ** exponent).numpy()
    np.testing.assert_array_equal(got, want)
    zero = got[(x == 0) & ~np.isnan(got)]
    assert np.array_equal(np.signbit(zero), np.signbit(want[(x == 0) & ~np.isnan(want)]))
    y = ember.tensor(x)
    version = y._version
    assert y.pow_(exponent) is y and np.array_equal(y.numpy(), want, equal_nan=True)
    assert y._version == version + 1            # pow_(1) writes nothing, yet bumps, as torch
    g = ember.tensor(x[[0, 3, 7, 8]], requires_grad=True)
    (g.abs() ** exponent).sum().backward()
    t = torch.tensor(x[[0, 3, 7, 8]], requires_grad=True)
    (t.abs() ** exponent).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-3)
