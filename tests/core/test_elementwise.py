"""The elementwise composites of core/elementwise.py against PyTorch: clamp/clip, sign,
lerp, addcmul/addcdiv, rsub, the predicates (isnan, isinf, isfinite, isclose, allclose,
isin, ...), nan_to_num, the where family and the NumPy-style math (hypot, logaddexp,
xlogy, copysign, sinc, float_power, ...), values and gradients."""
import math
import re

import pytest
import torch

import ember


@pytest.mark.parametrize("expr", [
    "F.clamp(a, -1, 1)", "F.clamp(a, min=0.5)", "F.clamp(a, max=-0.5)", "F.clip(a, -1, 2)",
    "a.clamp(b, b + 1)", "F.rsqrt(p)", "F.log2(p)", "F.log10(p)", "F.sign(a)",
    "F.lerp(a, b, 0.3)", "F.lerp(a, b, p)", "F.addcmul(a, b, p, value=0.5)",
    "F.addcdiv(a, b, p, value=2)", "F.rsub(a, b)", "F.isclose(a, a + 1e-7)", "F.isclose(a, b)",
])
def test_composite_matches_torch(expr, device, oracle):
    oracle.expr_matches(expr, device)


def test_special_values(device, oracle):
    a, ta = oracle.uniform_pair((5, 4), device, "float64", seed=4)
    x = ember.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0], device=device)
    tx = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0])
    for name in ["isnan", "isinf", "isfinite"]:
        oracle.assert_matches(getattr(ember, name)(x), getattr(torch, name)(tx))
    oracle.assert_matches(ember.isclose(x, x, equal_nan=True), torch.isclose(tx, tx, equal_nan=True))
    oracle.assert_matches(ember.isinf(ember.tensor([1, 2], device=device)),
                          torch.isinf(torch.tensor([1, 2])))
    assert ember.allclose(a, a + 1e-9) and not ember.allclose(a, a + 1)


def test_composite_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        ember.clamp(a)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        ember.addcdiv(a, ember.tensor([1]), ember.tensor([2]))


@pytest.mark.parametrize("expr", [
    "F.where(a > 0, a, b)", "F.where(a > 0, a, 0.0)", "F.where(a > 0, 1, b)",
    "F.where(a[0] > 0, a, b[:, :1])", "F.where(a > 0, i, a)", "F.where(a > 0, i, 2)",
    "a.where(a > 0, b)", "F.masked_fill(a, a > 0, -1.0)", "a.masked_fill(a[0] > 0, 7)",
    "i.masked_fill(a > 0, 2.7)", "F.nan_to_num(s)", "F.nan_to_num(s, 1.0, 2.0, -2.0)",
    "F.nan_to_num(s.half())", "F.nonzero(a > 0)", "F.where(a > 0)[1]", "(a > 0).nonzero()",
])
def test_where_family(expr, device, oracle):
    oracle.expr_matches(expr, device, rtol=1e-5, atol=1e-6)


def test_where_errors_and_inplace(device, oracle):
    a, ta = oracle.uniform_pair((2, 3), device, seed=9)
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


@pytest.mark.parametrize("dtype,kwargs", [
    ("uint8", {"min": 0, "max": 300}), ("uint8", {"min": -1}), ("uint8", {"max": -255}),
    ("uint8", {"min": -256}), ("int8", {"min": -200, "max": 50}), ("int8", {"max": -129}),
    ("int16", {"min": -40000}), ("int32", {"max": 2 ** 31}), ("int64", {"max": 2 ** 63 - 1}),
    ("float16", {"max": 1e6}), ("float16", {"max": 70000}), ("float16", {"min": -math.inf}),
    ("bfloat16", {"max": 1e39}), ("float32", {"min": -1e39}), ("float64", {"max": 1e300}),
    ("uint8", {"min": 0, "max": 300.5}),
])
@pytest.mark.parametrize("form", ["clamp", "method", "inplace", "clamp_min", "clamp_max"])
def test_clamp_number_bounds_out_of_the_dtype_range_raise(dtype, kwargs, form, device):
    # torch converts a bound that does not promote the input with c10's checked conversion
    def call(m):
        x = m.tensor([1, 2, 100], device=device if m is ember else "cpu").to(
            getattr(m, dtype))
        if form in ("clamp_min", "clamp_max"):
            bound = kwargs.get(form[-3:])
            return None if bound is None else getattr(m, form)(x, bound)
        if form == "inplace":      # (a float bound on integers: another message's case)
            promotes = not x.is_floating_point() and any(
                isinstance(b, float) for b in kwargs.values())
            return None if promotes else x.clamp_(**kwargs)
        return m.clamp(x, **kwargs) if form == "clamp" else x.clamp(**kwargs)
    try:
        want = call(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(e))}$"):
            call(ember)
        return
    got = call(ember)
    assert (got is None) == (want is None)
    if want is not None:
        assert got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("form", ["scalar_min", "scalar_both", "scalar_max", "clamp_min",
                                  "clamp_max", "tensor_min", "tensor_max", "tensor_both",
                                  "clamp_min_tensor", "clamp_max_tensor", "broadcast"])
def test_clamp_gradient_includes_the_bounds(form, device, oracle):
    # torch passes the input's gradient where min <= x <= max (maximum's rule would give
    # half at a tie); a tensor bound gets it where x lies beyond it (min only if min < max)
    nan = float("nan")
    data = {"x": [1.0, 2.0, 3.0, nan, 0.0, 2.5], "lo": [1.0, 1.0, 4.0, 0.0, nan, 3.0],
            "hi": [2.0, 2.0, 2.0, 5.0, 1.0, 2.5]}
    calls = {
        "scalar_min": lambda m, x, lo, hi: m.clamp(x, min=1.0),
        "scalar_both": lambda m, x, lo, hi: m.clamp(x, 1.0, 2.0),
        "scalar_max": lambda m, x, lo, hi: x.clamp(max=2.0),
        "clamp_min": lambda m, x, lo, hi: m.clamp_min(x, 2.0),
        "clamp_max": lambda m, x, lo, hi: m.clamp_max(x, 2.0),
        "tensor_min": lambda m, x, lo, hi: m.clamp(x, min=lo),
        "tensor_max": lambda m, x, lo, hi: m.clamp(x, max=hi),
        "tensor_both": lambda m, x, lo, hi: m.clip(x, lo, hi),
        "clamp_min_tensor": lambda m, x, lo, hi: x.clamp_min(lo),
        "clamp_max_tensor": lambda m, x, lo, hi: m.clamp_max(x, hi),
        "broadcast": lambda m, x, lo, hi: m.clamp(x.reshape(2, 3), min=lo[:3].sum(0, True)),
    }
    e = [ember.tensor(data[k], device=device, requires_grad=True) for k in ("x", "lo", "hi")]
    t = [torch.tensor(data[k], requires_grad=True) for k in ("x", "lo", "hi")]
    got, want = calls[form](ember, *e), calls[form](torch, *t)
    oracle.assert_matches(got, want)
    assert got.grad_fn.name() == want.grad_fn.name()
    ge = ember.autograd.grad(got.sum(), e, allow_unused=True)
    gt = torch.autograd.grad(want.sum(), t, allow_unused=True)
    for g, w in zip(ge, gt):
        assert (g is None) == (w is None)
        if w is not None:
            oracle.assert_matches(g, w)


def test_clamp_forward_ad_matches_torch(device, oracle):
    x, lo, hi = [1.0, 2.0, 3.0, 0.0], [1.0, 1.0, 4.0, 2.0], [2.0, 2.0, 2.0, 5.0]
    results = []
    for m in (ember, torch):
        dev = device if m is ember else "cpu"
        fw = m.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x, device=dev), m.full((4,), 3.0, device=dev))
            dlo = fw.make_dual(m.tensor(lo, device=dev), m.full((4,), 5.0, device=dev))
            hi_t = m.tensor(hi, device=dev)
            results.append([fw.unpack_dual(r).tangent for r in (
                m.clamp(d, 1.0, 2.0), m.clamp(d, dlo, hi_t), m.clamp(d, min=dlo),
                m.clamp_min(d, dlo), m.clamp_max(d, hi_t))])
    for g, w in zip(*results):
        oracle.assert_matches(g, w)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_lerp_uses_torchs_two_sided_formula(dtype, device, oracle):
    # weight >= 1/2 is computed from end (weight 1 gives end exactly), in float32 for the
    # reduced-precision dtypes
    start, end = [1e8, 1000.0, 0.1, -3.3, 7.77], [1.0, 1.0, 0.3, 4.4, -7.1]
    weights = [0.3, 0.7, 0.5, -2.0, 1.0]
    a, b = (ember.tensor(v, device=device).to(getattr(ember, dtype)) for v in (start, end))
    ta, tb = (torch.tensor(v).to(getattr(torch, dtype)) for v in (start, end))
    for w in (0.3, 0.5, 1.0, -2.0):
        oracle.assert_matches(ember.lerp(a, b, w), torch.lerp(ta, tb, w))
    if dtype != "float16":                        # (1e8 is inf there: NaN, as torch)
        assert ember.lerp(a, b, 1.0).cpu().tolist() == b.cpu().tolist()
    w = ember.tensor(weights, device=device).to(a.dtype)
    tw = torch.tensor(weights).to(ta.dtype)
    oracle.assert_matches(a.lerp(b, w), ta.lerp(tb, tw))
    oracle.assert_matches(a.clone().lerp_(b, w), ta.clone().lerp_(tb, tw))
    assert a.lerp(b, w)[-1].item() == b[-1].item()


# values and gradients over dtypes, broadcasting, non-contiguous and empty inputs, one
# row per case (conftest.py's check_table_case)
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("hypot", lambda m, a, b: m.hypot(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("hypot_f32", lambda m, a, b: m.hypot(a, b), [((3, 4), F, "n"), ((3, 4), F, "n")], False),
    ("logaddexp", lambda m, a, b: m.logaddexp(a, b), [((3, 4), D, "n"), ((3, 1), D, "n")], True),
    ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), [((3, 4), D, "n"), ((4,), D, "n")],
     True),
    ("xlogy", lambda m, a, b: m.xlogy(a, b), [((3, 4), D, "int"), ((3, 4), D, "pos")], True),
    ("xlogy_scalar", lambda m, a: m.xlogy(2, a), [((3, 4), D, "pos")], True),
    ("xlogy_int", lambda m, a, b: m.xlogy(a, b), [((6,), L, "int"), ((6,), L, "idx")], False),
    ("copysign", lambda m, a, b: m.copysign(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("copysign_int", lambda m, a, b: m.copysign(a, b), [((3,), L, "int"), ((3,), L, "int")],
     False),
    ("signbit", lambda m, a: m.signbit(a), [((3, 4), D, "n")], False),
    ("signbit_int", lambda m, a: m.signbit(a), [((7,), L, "int")], False),
    ("heaviside", lambda m, a, b: m.heaviside(a, b), [((3, 4), D, "int"), ((4,), D, "n")],
     False),
    ("sinc", lambda m, a: m.sinc(a), [((3, 4), D, "int")], True),
    ("sinc_n", lambda m, a: m.sinc(a), [((3, 4), D, "n")], True),
    ("deg2rad", lambda m, a: m.deg2rad(a), [((3, 4), D, "n")], True),
    ("rad2deg", lambda m, a: m.rad2deg(a), [((3, 4), F, "n")], False),
    ("float_power", lambda m, a: m.float_power(a, 2.5), [((3, 4), F, "pos")], False),
    ("float_power_t", lambda m, a, b: m.float_power(a, b), [((3, 4), D, "pos"), ((4,), D, "n")],
     True),
    ("float_power_int", lambda m, a: m.float_power(a, 2), [((5,), L, "int")], False),
    ("absolute", lambda m, a: m.absolute(a), [((3, 4), L, "int")], False),
    ("arctan2", lambda m, a, b: m.arctan2(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("sgn", lambda m, a: m.sgn(a), [((3, 4), D, "int")], False),
    ("positive", lambda m, a: m.positive(a), [((3,), D, "n")], True),
    ("clamp_min", lambda m, a: m.clamp_min(a, 0.1), [((3, 4), D, "n")], True),
    ("clamp_max_t", lambda m, a, b: m.clamp_max(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("isposinf", lambda m, a: m.isposinf(a / 0), [((3, 4), D, "int")], False),
    ("isneginf", lambda m, a: m.isneginf(a / 0), [((3, 4), D, "int")], False),
    ("isreal", lambda m, a: m.isreal(a), [((3,), L, "int")], False),
    ("isin", lambda m, a, b: m.isin(a, b), [((3, 4), L, "int"), ((5,), L, "int")], False),
    ("isin_invert", lambda m, a, b: m.isin(a, b, invert=True), [((3, 4), D, "int"),
                                                                 ((2, 2), L, "int")], False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device, table_case):
    table_case(case, transpose, device)


@pytest.mark.parametrize("fn", [
    lambda L: L.isclose(L.tensor([2, 100]), L.tensor([3, 110]), rtol=0.1, atol=1),
    lambda L: L.allclose(L.tensor([2]), L.tensor([3]), atol=1),
    lambda L: L.isclose(L.tensor([2, 5], dtype=L.uint8), L.tensor([3, 5], dtype=L.uint8)),
    lambda L: L.isclose(L.tensor([True, False]), L.tensor([False, False]), atol=1),
    lambda L: L.isclose(L.tensor([True, False]), L.tensor([False, False]))])
def test_isclose_on_integers_and_bools_uses_the_tolerances(fn, oracle):
    assert oracle.outcome(ember, fn) == oracle.outcome(torch, fn)


# --- complex inputs; copysign's and hypot's derivatives as torch's ------------------------

def _complex_matches(got, want, rtol=1e-6):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), want.detach(),
                               rtol=rtol, atol=rtol, equal_nan=True)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sinc_of_complex(dtype):
    data = [0.3 + 0.4j, -1.2 + 0.5j, 2 - 1j, 0j, 1 + 0j, 1e-20 + 0j, 3j]
    _complex_matches(ember.sinc(ember.tensor(data, dtype=getattr(ember, dtype))),
                     torch.sinc(torch.tensor(data, dtype=getattr(torch, dtype))))


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_deg2rad_rad2deg_refuse_complex(name):
    with pytest.raises(RuntimeError, match=f"{name} is not supported for complex tensors"):
        getattr(ember, name)(ember.tensor([1 + 1j]))
    with pytest.raises(RuntimeError):
        getattr(torch, name)(torch.tensor([1 + 1j]))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("kw", [{}, {"nan": 1.0, "posinf": 2.0, "neginf": -3.0},
                                {"posinf": 5.0}])
def test_nan_to_num_of_complex_fixes_each_part(dtype, kw):
    inf, nan = math.inf, math.nan
    data = [complex(nan, inf), complex(-inf, nan), complex(1, -inf), 2 + 3j, complex(inf, inf)]
    a = ember.tensor(data, dtype=getattr(ember, dtype))
    ta = torch.tensor(data, dtype=getattr(torch, dtype))
    _complex_matches(ember.nan_to_num(a, **kw), torch.nan_to_num(ta, **kw), 0)
    out, tout = ember.empty(0, dtype=a.dtype), torch.empty(0, dtype=ta.dtype)
    ember.nan_to_num(a, out=out, **kw)
    torch.nan_to_num(ta, out=tout, **kw)
    _complex_matches(out, tout, 0)


def _grads_of(lib, fn, *data):
    leaves = [lib.tensor(d, requires_grad=True) for d in data]
    out = fn(lib, *leaves)
    out.sum().backward()
    return [out.detach()] + [x.grad for x in leaves], out.grad_fn.name()


@pytest.mark.parametrize("fn,data", [
    (lambda L, a, b: L.copysign(a, b),
     ([0.0, 3.0, -2.0, math.nan, math.inf, 0.0], [-1.0, 4.0, 0.0, -1.0, -0.0, -0.0])),
    (lambda L, a, b: L.copysign(a, b), ([[0.0, 3.0]], [[-1.0], [2.0]])),
    (lambda L, a: L.copysign(a, -1.0), ([1.0, 0.0, -3.0],)),
    (lambda L, a, b: L.hypot(a, b),
     ([0.0, 3.0, math.inf, 1e30, -2.0], [0.0, 4.0, 1.0, 1e30, 0.0])),
    (lambda L, a, b: L.hypot(a, b), ([[0.0, 3.0]], [[0.0], [4.0]])),
])
def test_copysign_and_hypot_gradients_match_torch(fn, data):
    # copysign: `other` gets zeros (not None), the input g * result / input (NaN at inf);
    # hypot: g * x / result, NaN at (0, 0)
    (got, got_name), (want, want_name) = _grads_of(ember, fn, *data), _grads_of(torch, fn, *data)
    assert got_name == want_name
    for g, w in zip(got, want):
        assert g is not None and w is not None
        torch.testing.assert_close(torch.from_numpy(g.numpy()), w, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8",
                                   "int32", "int64", "uint8", "bool"])
def test_sign_is_one_kernel_with_pytorch_values(dtype, device, oracle):
    # EMBER_UNARY_SIGN: NaN and -0.0 give +0 (PyTorch's (0 < x) - (x < 0)), integers keep
    # their dtype, bool stays bool; strided and empty inputs; SignBackward0 with zero grad
    vals = {"bool": [True, False]}.get(dtype, [3, 0, 1, 2] if dtype == "uint8" else
                                       [-2, 0, 5, -1, 127])
    if dtype.startswith(("float", "bfloat")):
        vals = [float("nan"), -0.0, 0.0, 2.5, -3.0, float("inf"), -float("inf"), 1e-30]
    e = ember.tensor(vals, dtype=getattr(ember, dtype), device=device)
    t = torch.tensor(vals, dtype=getattr(torch, dtype))
    oracle.assert_matches(e.sign(), t.sign())
    if e.is_floating_point():       # +0, not -0, for -0.0 and NaN: compare the sign bits
        assert ember.equal(ember.signbit(e.sign()).cpu(), ember.tensor(torch.signbit(t.sign())))
    e2, t2 = e.expand(3, -1).t(), t.expand(3, -1).t()
    oracle.assert_matches(ember.sign(e2), torch.sign(t2))
    assert ember.sign(e[:0]).shape == (0,)
    if dtype != "bool":
        c = e2.clone()
        c.sign_()
        oracle.assert_matches(c, t2.sign())


def test_sign_gradient_and_refusals(device):
    x = ember.randn(3, 4, device=device, requires_grad=True)
    y = x.sign()
    assert y.grad_fn.name() == "SignBackward0" and x.sgn().grad_fn.name() == "SgnBackward0"
    y.sum().backward()
    assert x.grad.abs().sum().item() == 0
    z = x * 1
    z.sign_()                                   # in place: PyTorch's node, not a copy's
    assert z.grad_fn.name() == "SignBackward0"
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.sign_()
    with pytest.raises(NotImplementedError, match="sign_cpu.*UInt16"):
        ember.tensor([1, 2], dtype=ember.uint16).sign()
    with pytest.raises(NotImplementedError, match="torch.sgn"):
        ember.sign(ember.tensor([1j]))
