"""Elementwise ops, where, casts and fills on the GPU against PyTorch on the GPU: every dtype,
broadcasting, Python scalars on either side, non-contiguous and empty operands, out= and
in-place forms."""
import numpy as np
import pytest

import ember

F = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
I = [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64]
UNARY_FLOAT = ["neg", "exp", "relu", "abs", "log", "sqrt", "sin", "cos", "tanh", "sigmoid",
               "reciprocal", "square", "floor", "ceil", "trunc", "round", "exp2", "expm1",
               "log2", "log10", "log1p", "erf", "erfc", "asin", "acos", "atan", "sinh", "cosh",
               "rsqrt", "tan", "erfinv", "lgamma", "digamma", "sign"]
UNARY_INT = ["neg", "abs", "relu", "square", "floor", "ceil", "trunc", "round", "bitwise_not",
             "sign"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "fmod",
          "remainder", "floor_divide", "fmax", "fmin"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift"]


def values(shape, dt, rng, positive=False, small=False):
    if dt == ember.bool:
        return rng.random(shape) > 0.5
    if dt.is_floating_point:
        v = rng.standard_normal(shape) * (1 if small else 3)
        return np.abs(v) + 0.1 if positive else v
    lo = 1 if positive else (0 if dt == ember.uint8 else -20)
    return rng.integers(lo, 20 if not small else 5, size=shape)


def pair(arr, dt, oracle):
    """The same values as an ember tensor on cuda and a torch tensor on the oracle device."""
    e = ember.tensor(arr).to(dt).cuda()
    t = oracle.torch.tensor(arr).to(oracle.tdtype(dt)).to(oracle.device)
    return e, t


def layouts(e, t):
    """(name, ember view, torch view) of one tensor: contiguous, transposed, strided."""
    yield "contiguous", e, t
    if e.ndim >= 2:
        yield "transposed", e.transpose(0, 1), t.transpose(0, 1)
        yield "sliced", e[::2, 1:], t[::2, 1:]


@pytest.mark.parametrize("dt", F)
@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary_float(name, dt, oracle):
    rng = np.random.default_rng(0)
    positive = name in ("log", "sqrt", "rsqrt", "log2", "log10", "lgamma", "digamma")
    arr = values((6, 9), dt, rng, positive=positive)
    if name in ("asin", "acos", "erfinv"):
        arr = np.tanh(arr)
    e, t = pair(arr, dt, oracle)
    for _, ev, tv in layouts(e, t):
        tol = 1e-2 if name in ("lgamma", "digamma", "tan", "erfinv") and dt == ember.float16 \
            else None
        oracle.assert_matches(getattr(ember, name)(ev), getattr(oracle.torch, name)(tv),
                              rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", I + [ember.bool])
@pytest.mark.parametrize("name", UNARY_INT)
def test_unary_integer(name, dt, oracle):
    if dt == ember.bool and name != "bitwise_not":
        pytest.skip("bool takes bitwise_not only")
    if dt == ember.uint8 and name == "neg":
        pytest.skip("PyTorch's uint8 negation wraps; so does ember's, checked in core tests")
    e, t = pair(values((5, 7), dt, np.random.default_rng(1)), dt, oracle)
    for _, ev, tv in layouts(e, t):
        oracle.assert_matches(getattr(ember, name)(ev), getattr(oracle.torch, name)(tv))


@pytest.mark.parametrize("dt", F + I)
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, dt, oracle):
    if not dt.is_floating_point and name in ("div", "atan2"):
        pytest.skip("integer inputs promote to float (checked with the float dtypes)")
    rng = np.random.default_rng(2)
    positive = name in ("pow", "fmod", "remainder", "floor_divide")
    a = values((4, 1, 6), dt, rng, positive=name == "pow", small=name == "pow")
    b = values((5, 6), dt, rng, positive=positive, small=name == "pow")
    ea, ta = pair(a, dt, oracle)
    eb, tb = pair(b, dt, oracle)
    fn_e, fn_t = getattr(ember, name), getattr(oracle.torch, name)
    tol = 5e-3 if name == "pow" and dt in (ember.float16, ember.bfloat16) else None
    oracle.assert_matches(fn_e(ea, eb), fn_t(ta, tb), rtol=tol, atol=tol)        # broadcast
    # strided: a sliced with a step, b column-major
    oracle.assert_matches(fn_e(ea[:, :, ::2], eb.t().contiguous().t()[:, ::2]),
                          fn_t(ta[:, :, ::2], tb.t().contiguous().t()[:, ::2]), rtol=tol, atol=tol)
    s = 2 if not dt.is_floating_point else 1.5
    if name not in ("atan2", "fmax", "fmin", "maximum", "minimum"):
        oracle.assert_matches(fn_e(ea, s), fn_t(ta, s), rtol=tol, atol=tol)          # scalar b
    if name in ("add", "sub", "mul", "div"):
        oracle.assert_matches(fn_e(s, eb), fn_t(s, tb), rtol=tol, atol=tol)          # scalar a


@pytest.mark.parametrize("dt", F + I + [ember.bool])
@pytest.mark.parametrize("name", COMPARE)
def test_comparisons(name, dt, oracle):
    rng = np.random.default_rng(3)
    ea, ta = pair(values((3, 8), dt, rng, small=True), dt, oracle)
    eb, tb = pair(values((8,), dt, rng, small=True), dt, oracle)
    fe, ft = getattr(ember, name), getattr(oracle.torch, name)
    oracle.assert_matches(fe(ea, eb), ft(ta, tb))
    oracle.assert_matches(fe(ea.t(), eb[:3]), ft(ta.t(), tb[:3]))
    if dt != ember.bool and not name.startswith("logical"):
        oracle.assert_matches(fe(ea, 1), ft(ta, 1))


@pytest.mark.parametrize("dt", I + [ember.bool])
@pytest.mark.parametrize("name", BITWISE)
def test_bitwise(name, dt, oracle):
    if dt == ember.bool and "shift" in name:
        pytest.skip("shifts take integers")
    rng = np.random.default_rng(4)
    a, b = values((4, 5), dt, rng), values((4, 5), dt, rng)
    if "shift" in name:
        b = np.abs(b) % 7
    ea, ta = pair(a, dt, oracle)
    eb, tb = pair(b, dt, oracle)
    oracle.assert_matches(getattr(ember, name)(ea, eb), getattr(oracle.torch, name)(ta, tb))


def test_nan_and_special_values(oracle):
    torch = oracle.torch
    arr = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5], dtype=np.float32)
    e, t = pair(arr, ember.float32, oracle)
    for name in ("maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "add", "mul"):
        oracle.assert_matches(getattr(ember, name)(e, e.flip(0)),
                              getattr(torch, name)(t, t.flip(0)))
    for name in ("relu", "abs", "sigmoid", "floor", "round", "exp", "tanh", "sign"):
        oracle.assert_matches(getattr(ember, name)(e), getattr(torch, name)(t))
    oracle.assert_matches(ember.nan_to_num(e), torch.nan_to_num(t))


def test_large_contiguous_and_unaligned(oracle):
    n = 10_000_003                                   # not a multiple of the vector width
    a = ember.randn(n, device="cuda")
    b = ember.randn(n, device="cuda")
    ta, tb = oracle.to_torch(a), oracle.to_torch(b)
    oracle.assert_matches(a + b, ta + tb)
    oracle.assert_matches(a[1:] * b[:-1], ta[1:] * tb[:-1])   # unaligned: the scalar path
    out = ember.empty(n, device="cuda")
    ember.add(a, b, out=out)
    oracle.assert_matches(out, ta + tb)
    h = a.half()
    oracle.assert_matches(h[3:] - h[:-3], ta.half()[3:] - ta.half()[:-3])


def test_inplace_out_and_empty(oracle):
    torch = oracle.torch
    arr = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    e, t = pair(arr, ember.float32, oracle)
    e2, t2 = e.clone(), t.clone()
    e2.mul_(2).add_(1).clamp_(-1, 1).exp_()
    t2.mul_(2).add_(1).clamp_(-1, 1).exp_()
    oracle.assert_matches(e2, t2)
    ev, tv = e.clone(), t.clone()
    ev.t()[1:3].sub_(e.t()[0])                        # in place through a strided view
    tv.t()[1:3].sub_(t.t()[0])
    oracle.assert_matches(ev, tv)
    out = ember.empty(6, 4, device="cuda")
    ember.mul(e, e, out=out)
    oracle.assert_matches(out, t * t)
    z = ember.empty(0, 4, device="cuda")
    assert (z + 1).shape == (0, 4) and ember.exp(z).shape == (0, 4)
    oracle.assert_matches(e[:, :0] * e[:, :0], t[:, :0] * t[:, :0])
    s0 = ember.tensor(3.0, device="cuda")
    oracle.assert_matches(s0 * e, torch.tensor(3.0, device=t.device) * t)


@pytest.mark.parametrize("dt", [ember.bool, ember.int8, ember.int64, ember.float16,
                                ember.bfloat16, ember.float32, ember.float64])
def test_where_and_masked_fill(dt, oracle):
    torch = oracle.torch
    rng = np.random.default_rng(6)
    cond = rng.random((5, 6)) > 0.4
    ec, tc = pair(cond, ember.bool, oracle)
    ea, ta = pair(values((5, 6), dt, rng), dt, oracle)
    eb, tb = pair(values((6,), dt, rng), dt, oracle)
    oracle.assert_matches(ember.where(ec, ea, eb), torch.where(tc, ta, tb))
    oracle.assert_matches(ember.where(ec.t(), ea.t(), eb[None, :5]),
                          torch.where(tc.t(), ta.t(), tb[None, :5]))
    fill = True if dt == ember.bool else 2
    oracle.assert_matches(ember.where(ec, ea, fill), torch.where(tc, ta, fill))
    oracle.assert_matches(ea.masked_fill(ec, fill), ta.masked_fill(tc, fill))


@pytest.mark.parametrize("src", F + I + [ember.bool])
def test_casts_and_fills(src, oracle):
    rng = np.random.default_rng(7)
    arr = values((7, 5), src, rng) * (1 if src in (ember.bool, ember.uint8) else 1)
    e, t = pair(arr, src, oracle)
    for dst in F + I + [ember.bool]:
        if src.is_floating_point and not dst.is_floating_point and dst != ember.bool:
            ev, tv = e.abs(), t.abs()                  # out-of-range float->int is undefined
        else:
            ev, tv = e, t
        oracle.assert_matches(ev.to(dst), tv.to(oracle.tdtype(dst)))
        oracle.assert_matches(ev.t().to(dst), tv.t().to(oracle.tdtype(dst)))
    f = ember.empty(3, 4, dtype=src, device="cuda")
    value = True if src == ember.bool else 3
    f.fill_(value)
    oracle.assert_matches(f, torch_full(oracle, (3, 4), value, src))
    f.t()[1].fill_(0)
    g = torch_full(oracle, (3, 4), value, src)
    g.t()[1].fill_(0)
    oracle.assert_matches(f, g)


def torch_full(oracle, shape, value, dt):
    return oracle.torch.full(shape, value, dtype=oracle.tdtype(dt), device=oracle.device)


def test_factories_on_cuda(oracle):
    torch = oracle.torch
    oracle.assert_matches(ember.arange(10, device="cuda"), torch.arange(10, device=oracle.device))
    oracle.assert_matches(ember.zeros(3, 2, dtype=ember.int32, device="cuda"),
                          torch.zeros(3, 2, dtype=torch.int32, device=oracle.device))
    oracle.assert_matches(ember.full((2, 2), 7.5, device="cuda"),
                          torch.full((2, 2), 7.5, device=oracle.device))
    oracle.assert_matches(ember.eye(4, device="cuda"), torch.eye(4, device=oracle.device))
    oracle.assert_matches(ember.linspace(0, 1, 7, device="cuda"),
                          torch.linspace(0, 1, 7, device=oracle.device))
    x = ember.ones(3, device="cuda")
    assert ember.zeros_like(x).device == x.device and ember.empty_like(x).is_cuda


@pytest.mark.parametrize("dt", F)
def test_gelu_is_one_kernel_each_way(dt, oracle):
    torch = oracle.torch
    arr = np.random.default_rng(8).standard_normal((64, 33)) * 3
    e = ember.tensor(arr).to(dt).cuda().requires_grad_()
    t = torch.tensor(arr).to(oracle.tdtype(dt)).to(oracle.device).requires_grad_()
    with ember.cuda.profile_kernels() as prof:
        y = ember.nn.functional.gelu(e)
        y.backward(ember.ones_like(y))
    kernels = [name for name, calls, _ in prof.summary()]
    assert any(k.endswith("unary_flat") for k in kernels), kernels
    yt = torch.nn.functional.gelu(t)
    yt.backward(torch.ones_like(yt))
    tol = {ember.float16: 4e-3, ember.bfloat16: 3e-2}.get(dt)
    oracle.assert_matches(y.detach(), yt.detach(), rtol=tol, atol=tol)
    oracle.assert_matches(e.grad, t.grad, rtol=tol, atol=tol)
    assert y.grad_fn.name() == "GeluBackward0"


def test_gelu_second_derivative():
    x = ember.randn(4, 5, dtype=ember.float64, device="cuda", requires_grad=True)
    assert ember.autograd.gradgradcheck(ember.nn.functional.gelu, (x,))


# name: (out of place, in place) of ember's or PyTorch's module `m`
TERNARY = {
    "lerp": (lambda m, a, b, c: m.lerp(a, b, c), lambda x, b, c: x.lerp_(b, c)),
    "lerp_number": (lambda m, a, b, c: m.lerp(a, b, 0.3), lambda x, b, c: x.lerp_(b, 0.3)),
    "addcmul": (lambda m, a, b, c: m.addcmul(a, b, c, value=0.7),
                lambda x, b, c: x.addcmul_(b, c, value=0.7)),
    "addcdiv": (lambda m, a, b, c: m.addcdiv(a, b, c, value=-1.5),
                lambda x, b, c: x.addcdiv_(b, c, value=-1.5)),
}


@pytest.mark.parametrize("dt", F)
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary_ops_are_one_kernel_with_the_cpu_bits(name, dt, oracle):
    """lerp, addcmul and addcdiv run the ABI 6.5 entry: one kernel, the CPU plugin's bits
    (both compute abi.h's fused formulas), PyTorch's values; broadcast, strided, in place."""
    rng = np.random.default_rng(9)
    f, f_ = TERNARY[name]
    a, b = values((6, 9), dt, rng), values((9,), dt, rng)
    c = np.abs(values((6, 1), dt, rng)) + 0.5 if name == "addcdiv" else \
        rng.random((6, 1)) * 1.4 - 0.2          # weights on both sides of 0.5
    (ea, ta), (eb, tb), (ec, tc) = (pair(v, dt, oracle) for v in (a, b, c))
    for ev, tv in ((ea, ta), (ea.t().contiguous().t(), ta.t().contiguous().t())):
        with ember.cuda.profile_kernels() as prof:
            y = f(ember, ev, eb, ec)
        kernels = [(k.split(":")[-1], n) for k, n, _ in prof.summary()]
        assert kernels == [("ternary_kernel", 1)], kernels
        on_cpu = f(ember, ev.cpu(), eb.cpu(), ec.cpu())
        assert np.array_equal(y.cpu().float().numpy(), on_cpu.float().numpy(), equal_nan=True)
        oracle.assert_matches(y, f(oracle.torch, tv, tb, tc))
    x = ea.clone()
    f_(x, eb, ec)
    assert np.array_equal(x.cpu().float().numpy(), f(ember, ea, eb, ec).cpu().float().numpy())


def test_ternary_gradients_match_pytorch(oracle):
    torch = oracle.torch
    rng = np.random.default_rng(10)
    arrs = [rng.standard_normal((5, 7)), rng.standard_normal((7,)), rng.random((5, 1)) + 0.5]
    for f, _ in TERNARY.values():
        es = [ember.tensor(v, device="cuda", requires_grad=True) for v in arrs]
        ts = [torch.tensor(v, device=oracle.device, requires_grad=True) for v in arrs]
        f(ember, *es).sum().backward()
        f(torch, *ts).sum().backward()
        for e, t in zip(es, ts):
            if t.grad is None:
                assert e.grad is None
            else:
                oracle.assert_matches(e.grad, t.grad)


# the activations of the ABI 6.4 entry, as calls of ember's or PyTorch's module `m`
ACTIVATIONS = {
    "leaky_relu": lambda m, x, **k: m.nn.functional.leaky_relu(x, 0.05, **k),
    "hardtanh": lambda m, x, **k: m.nn.functional.hardtanh(x, -0.5, 2.0, **k),
    "clamp": lambda m, x, **k: x.clamp_(-1.0, 0.7) if k else x.clamp(-1.0, 0.7),
    "hardsigmoid": lambda m, x, **k: m.nn.functional.hardsigmoid(x, **k),
    "hardswish": lambda m, x, **k: m.nn.functional.hardswish(x, **k),
    "silu": lambda m, x, **k: m.nn.functional.silu(x, **k),
    "elu": lambda m, x, **k: m.nn.functional.elu(x, 0.8, **k),
    "selu": lambda m, x, **k: m.nn.functional.selu(x, **k),
    "softplus": lambda m, x: m.nn.functional.softplus(x, 2.0, 5.0),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "hardshrink": lambda m, x: m.nn.functional.hardshrink(x, 0.4),
    "softshrink": lambda m, x: m.nn.functional.softshrink(x, 0.4),
    "mish": lambda m, x, **k: m.nn.functional.mish(x, **k),
}


def activation_and_grad(f, m, arr, garr, device, dt):
    x = m.tensor(arr, dtype=getattr(m, dt.name), device=device, requires_grad=True)
    y = f(m, x)
    y.backward(m.tensor(garr, dtype=x.dtype, device=device))
    return y.detach(), x.grad


@pytest.mark.parametrize("dt", [ember.float32, ember.float64])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_are_one_kernel_each_way(name, dt, oracle):
    """Forward and gradient each one launch of the entry's kernel; PyTorch's values on
    random inputs, the CPU plugin's (the same formulas) at the branch points and NaN."""
    f = ACTIVATIONS[name]
    rng = np.random.default_rng(11)
    arr, garr = rng.standard_normal(500) * 4, rng.standard_normal(500)
    x = ember.tensor(arr, dtype=dt, device="cuda", requires_grad=True)
    with ember.cuda.profile_kernels() as prof:
        y = f(ember, x)
    assert [(k.split(":")[-1], n) for k, n, _ in prof.summary()] == [("activation_kernel", 1)]
    g = ember.tensor(garr, dtype=dt, device="cuda")
    with ember.cuda.profile_kernels() as prof:
        y.backward(g)
    assert "activation_kernel" in [k.split(":")[-1] for k, _, _ in prof.summary()]
    ty, tgrad = activation_and_grad(f, oracle.torch, arr, garr, oracle.device, dt)
    # PyTorch's CUDA hardsigmoid and hardswish multiply by a float 1/6 where its CPU kernels
    # and abi.h divide by 6: float64 results differ from them in the 8th digit
    tol = 1e-7 if name in ("hardsigmoid", "hardswish") else None
    oracle.assert_matches(y.detach(), ty, rtol=tol, atol=tol)
    oracle.assert_matches(x.grad, tgrad)
    edges = np.array([0.0, -3.0, 3.0, 0.4, -0.4, -0.5, 2.0, 0.7, -1.0, 30.0, -30.0, np.nan])
    ones = np.ones(edges.size)
    for got, want in zip(activation_and_grad(f, ember, edges, ones, "cuda", dt),
                         activation_and_grad(f, ember, edges, ones, "cpu", dt)):
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    if "k" in f.__code__.co_varnames:                  # an in-place form: the same values
        z = x.detach().clone()
        f(ember, z, inplace=True)
        assert ember.equal(z, y.detach())


@pytest.mark.parametrize("dt", [ember.float16, ember.float32, ember.float64])
def test_ternary_and_activation_vector_paths(dt):
    """Long flat operands, aligned and not (offset by one element), through the vector
    loops and their tails: the ternary ops give the CPU's bits, silu its values."""
    n = 1_000_003
    a, b, c = (ember.randn(n + 2, device="cuda").to(dt) for _ in range(3))
    cases = [(a[:n], b[:n], c[:n]), (a[1:n + 1], b[2:], c[1:n + 1])]
    for x, y, w in cases:
        for f in (lambda m, x, y, w: m.lerp(x, y, w), lambda m, x, y, w: m.lerp(x, y, 0.7),
                  lambda m, x, y, w: m.addcmul(x, y, w, value=0.5)):
            got, want = f(ember, x, y, w).cpu(), f(ember, x.cpu(), y.cpu(), w.cpu())
            assert np.array_equal(got.float().numpy(), want.float().numpy())
        if dt != ember.float16:
            got, want = ember.nn.functional.silu(x).cpu(), ember.nn.functional.silu(x.cpu())
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
