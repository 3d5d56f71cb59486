"""float16/bfloat16 as PyTorch computes them: a tensor times or over a Python number in
float32 (its opmath type) with the number unrounded, a number over the tensor as the
tensor's reciprocal times it, the other ops with the number rounded to the tensor's dtype;
and the activations in float32, rounded once.  Bit for bit against torch."""
import math

import numpy as np
import pytest
import torch

import ember

FORMS = {
    "mul": lambda t, s: t * s, "rmul": lambda t, s: s * t, "div": lambda t, s: t / s,
    "rdiv": lambda t, s: s / t, "mul_": lambda t, s: t.clone().mul_(s),
    "div_": lambda t, s: t.clone().div_(s), "add": lambda t, s: t + s,
    "sub": lambda t, s: t - s, "rsub": lambda t, s: s - t,
    "pow": lambda t, s: t.abs() ** s, "gt": lambda t, s: t > s,
    "mul_int": lambda t, s: t * 3, "mul_method": lambda t, s: t.mul(s),
    "div_trunc": lambda t, s: t.div(s, rounding_mode="trunc"),
    "div_floor": lambda t, s: t.div(s, rounding_mode="floor"), "floordiv": lambda t, s: t // s,
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_matches_torch_bit_for_bit(form, dtype):
    x = (np.random.default_rng(0).standard_normal(20000) * 3).astype(np.float32)
    t = torch.tensor(x).to(getattr(torch, dtype))
    e = ember.tensor(t.float().numpy()).to(getattr(ember, dtype))
    for s in (1.7, 0.1, 3.3e-3):
        got, want = FORMS[form](e, s), FORMS[form](t, s)
        assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(got.float().numpy() if got.is_floating_point()
                                      else got.numpy(), want.float().numpy()
                                      if want.is_floating_point() else want.numpy())


def test_out_and_gradient_keep_opmath():
    x = np.array([1.1, 2.7, 3.3, -0.7], np.float32)
    t = torch.tensor(x, dtype=torch.bfloat16, requires_grad=True)
    e = ember.tensor(t.detach().float().numpy()).to(ember.bfloat16).requires_grad_()
    (t * 1.7).sum().backward()
    (e * 1.7).sum().backward()
    np.testing.assert_array_equal(e.grad.float().numpy(), t.grad.float().numpy())
    o_t, o_e = torch.empty(4, dtype=torch.bfloat16), ember.empty(4, dtype=ember.bfloat16)
    torch.mul(t.detach(), 1.7, out=o_t)
    ember.mul(e.detach(), 1.7, out=o_e)
    np.testing.assert_array_equal(o_e.float().numpy(), o_t.float().numpy())


ACTIVATIONS = [("silu", {}), ("gelu", {}), ("softplus", {"beta": 2.0}), ("mish", {}),
               ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 0.7}),
               ("hardsigmoid", {}), ("hardswish", {}), ("logsigmoid", {}),
               ("leaky_relu", {"negative_slope": 0.2})]


def _gelu_exact(x, g=None):
    """GELU (or its gradient times ``g``) in float64, and the error bound of a float32
    evaluation with an erf within 1.5e-7 (PyTorch's AVX2 formula, ember's)."""
    xs = x.ravel()
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in xs]).reshape(x.shape)
    if g is None:
        return x * cdf, 0.5 * np.abs(x) * 1.5e-7
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return g * (cdf + x * pdf), 0.5 * np.abs(g) * 1.5e-7


def _assert_rounded_once(got, want, name, dtype, exact):
    """Bit for bit, except GELU's far tails: PyTorch's AVX-512 GELU evaluates erf
    otherwise than its AVX2 one (ember's formula is the AVX2 one), and where 1 + erf(x)
    cancels (x < -3.5) the two round a few elements to neighbouring narrow values; there
    ember's must be within erf's error and a narrow step of the exact value."""
    if name != "gelu":
        np.testing.assert_array_equal(got, want)
        return
    value, err = exact()
    differ = got != want
    assert np.mean(differ) < 0.05
    step = 2.0 ** (-7 if dtype == "bfloat16" else -10)
    bound = err + step * np.abs(value)
    assert np.all(np.abs(got - value)[differ] <= bound[differ])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kwargs", ACTIVATIONS)
def test_activations_compute_in_float32_and_round_once(name, kwargs, dtype):
    """PyTorch's half kernels compute in float32 and round once; a composite rounding each
    step in the narrow dtype differed in up to a quarter of the elements.  The forward
    is bit for bit PyTorch's; the gradient too except logsigmoid's (PyTorch's backward
    reads a rounded buffer of its forward) and GELU's far tails (see _assert_rounded_once)."""
    x = (np.random.default_rng(0).standard_normal((32, 48)) * 3).astype(np.float32)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    t = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    e = ember.tensor(t.detach().float().numpy()).to(getattr(ember, dtype)).requires_grad_()
    tt = getattr(torch.nn.functional, name)(t, **kwargs)
    ee = getattr(ember.nn.functional, name)(e, **kwargs)
    assert ee.dtype == getattr(ember, dtype)
    xd = t.detach().double().numpy()
    _assert_rounded_once(ee.detach().float().numpy(), tt.detach().float().numpy(), name,
                         dtype, lambda: _gelu_exact(xd))
    gt = torch.tensor(g).to(t.dtype)
    tt.backward(gt)
    ee.backward(ember.tensor(g).to(e.dtype))
    assert e.grad.dtype == e.dtype
    if name != "logsigmoid":
        _assert_rounded_once(e.grad.float().numpy(), t.grad.float().numpy(), name, dtype,
                             lambda: _gelu_exact(xd, gt.double().numpy()))
    else:
        np.testing.assert_allclose(e.grad.float().numpy(), t.grad.float().numpy(),
                                   rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("positional", [False, True])
def test_half_activation_in_place(positional):
    x = ember.tensor([-2.0, -0.5, 0.0, 1.5]).to(ember.bfloat16)
    ref = ember.nn.functional.silu(x.clone())
    y = ember.nn.functional.silu(x, True) if positional else \
        ember.nn.functional.silu(x, inplace=True)
    assert y is x and x.dtype == ember.bfloat16
    np.testing.assert_array_equal(x.float().numpy(), ref.float().numpy())
    z = ember.tensor([-2.0, 0.5]).to(ember.float16)
    assert ember.nn.functional.elu(z, 1.0, True) is z


REDUCTIONS = {
    "var": lambda l, a: a.var(1), "std": lambda l, a: a.std(0),
    "var_mean": lambda l, a: l.var_mean(a, 1)[0], "std_mean": lambda l, a: l.std_mean(a, 0)[0],
    "norm": lambda l, a: a.norm(dim=1), "norm3": lambda l, a: a.norm(p=3, dim=0),
    "vector_norm": lambda l, a: l.linalg.vector_norm(a),
    "addcdiv": lambda l, a: l.addcdiv(a, a, a.flip(0).abs() + 1, value=0.3),
    "addcdiv_": lambda l, a: a.clone().addcdiv_(a, a.flip(0).abs() + 1, value=0.3),
    "addcmul": lambda l, a: l.addcmul(a, a.flip(1), a.flip(0), value=0.3),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_moments_norms_ternaries_in_float32(name, dtype):
    """var/std (their root taken before rounding), p-norms and addcmul/addcdiv of half
    tensors in float32, rounded once, as PyTorch's kernels."""
    x = (np.random.default_rng(2).standard_normal((64, 96)) * 2).astype(np.float32)
    t = torch.tensor(x).to(getattr(torch, dtype))
    e = ember.tensor(t.float().numpy()).to(getattr(ember, dtype))
    got, want = REDUCTIONS[name](ember, e), REDUCTIONS[name](torch, t)
    assert got.dtype == e.dtype
    same = (got.float().numpy() == want.float().numpy()).mean()
    assert same >= (0.99 if name == "addcmul" else 1.0)     # addcmul: float32 order, 1e-3


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("beta", [0.7, 1.0, 0.0])
def test_smooth_l1_elements_match_torch(dtype, beta):
    """smooth_l1_loss per element in PyTorch's order (0.5 * d * d / beta), a bfloat16 one
    in float32 rounded once."""
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal((2, 64, 10)) * 2).astype(np.float32)
    t = [torch.tensor(v).to(getattr(torch, dtype)) for v in (x, y)]
    e = [ember.tensor(v.float().numpy()).to(getattr(ember, dtype)) for v in t]
    got = ember.nn.functional.smooth_l1_loss(*e, reduction="none", beta=beta)
    want = torch.nn.functional.smooth_l1_loss(*t, reduction="none", beta=beta)
    assert got.dtype == e[0].dtype
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_glu_in_float32(dtype):
    x = (np.random.default_rng(5).standard_normal((16, 12)) * 3).astype(np.float32)
    t = torch.tensor(x).to(getattr(torch, dtype))
    e = ember.tensor(t.float().numpy()).to(getattr(ember, dtype))
    np.testing.assert_array_equal(ember.nn.functional.glu(e).float().numpy(),
                                  torch.nn.functional.glu(t).float().numpy())
