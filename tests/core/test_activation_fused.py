"""The fused activations (core/_activation.pxi, abi.h's optional `activation` entry) against
torch.nn.functional: values and gradients at the kinks, at +-inf and NaN, over dtypes,
layouts and devices (a backend without the entry runs the composites), PyTorch's node names,
double backward, thread-count invariance, and the composite path under vmap and forward AD."""
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from ember.core import _fused

import ember

CASES = [("leaky_relu", {"negative_slope": 0.2}), ("relu6", {}),
         ("hardtanh", {"min_val": -2.0, "max_val": 0.5}), ("hardsigmoid", {}),
         ("hardswish", {}), ("silu", {}), ("elu", {"alpha": 0.7}), ("selu", {}),
         ("celu", {"alpha": 1.3}), ("softplus", {"beta": 2.0, "threshold": 5.0}),
         ("logsigmoid", {}), ("hardshrink", {"lambd": 0.5}), ("softshrink", {"lambd": 0.5}),
         ("mish", {})]

SPECIAL = [float("nan"), float("inf"), -float("inf"), -3.0, 3.0, -2.0, 0.5, -0.5, 0.0, -0.0,
           6.0, 2.5, 20.0, -20.0, 90.0, -110.0]


def _data(dtype):
    rng = np.random.default_rng(7)
    values = np.concatenate([SPECIAL, np.linspace(-9, 9, 81), rng.standard_normal(47) * 4])
    return values.astype(dtype).reshape(12, 12)


def _run(lib, fn, x, g, create_graph=False):
    y = fn(x)
    (gx,) = lib.autograd.grad(y, x, g, create_graph=create_graph)
    return y, gx


def _np(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "empty"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES)
def test_matches_torch(device, name, kwargs, dtype, layout):
    data = _data(dtype)
    if layout == "empty":
        data = data[:0]
    grad = np.random.default_rng(3).standard_normal(data.shape).astype(dtype)
    xt = torch.tensor(data, requires_grad=True)
    xe = ember.tensor(data, device=device, requires_grad=True)
    gt, ge = torch.tensor(grad), ember.tensor(grad, device=device)
    if layout == "transposed":
        xt, xe = xt.t(), xe.t()
        gt, ge = gt.t().contiguous(), ge.t().contiguous()
    yt, dt = _run(torch, lambda x: getattr(TF, name)(x, **kwargs), xt, gt)
    ye, de = _run(ember, lambda x: getattr(F, name)(x, **kwargs), xe, ge)
    tol = dict(rtol=4e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_np(ye), _np(yt), equal_nan=True, **tol)
    # at NaN PyTorch's own gradients differ between its vector loop and its scalar tail
    number = ~np.isnan(_np(xt))
    if dtype == "float64" and name in ("hardsigmoid", "celu") and device != "cpu":
        # torch's backward rounds 1/6 (hardsigmoid) and alpha (celu) to float32; the fused
        # kernel does too, the composites' derivatives do not
        tol = dict(rtol=1e-6, atol=1e-14)
    np.testing.assert_allclose(_np(de)[number], _np(dt)[number], **tol)
    assert ye.dtype == xe.dtype and tuple(ye.shape) == tuple(yt.shape)
    if device == "cpu" and layout != "empty":            # the fused node, PyTorch's name
        assert ye.grad_fn.name() == yt.grad_fn.name()


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[0] != "hardsigmoid"])
def test_double_backward_matches_torch(name, kwargs):
    # (torch has no derivative of hardsigmoid_backward; ember's is 0)
    data = np.linspace(-5, 5, 37) + 0.013          # off the kinks
    grad = np.cos(np.arange(37.0))
    outs = []
    for lib, F_ in ((torch, TF), (ember, F)):
        x = lib.tensor(data, requires_grad=True)
        g = lib.tensor(grad, requires_grad=True)
        _, gx = _run(lib, lambda v: getattr(F_, name)(v, **kwargs), x, g, create_graph=True)
        xx, gg = lib.autograd.grad((gx * gx).sum(), (x, g), allow_unused=True,
                                   materialize_grads=True)
        outs.append((_np(gx), _np(xx), _np(gg)))
    for e, t in zip(outs[1], outs[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [("silu", {}), ("leaky_relu", {}), ("mish", {}),
                                         ("hardswish", {})])
def test_threads_do_not_change_bits(name, kwargs):
    x = ember.randn(600, 700, generator=ember.Generator().manual_seed(1), requires_grad=True)
    g = ember.randn(600, 700, generator=ember.Generator().manual_seed(2))
    saved = ember.get_num_threads()
    results = []
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            y, gx = _run(ember, lambda v: getattr(F, name)(v, **kwargs), x, g)
            results.append((_np(y), _np(gx)))
    finally:
        ember.set_num_threads(saved)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_in_place_forms_write_the_input_and_differentiate():
    data = np.linspace(-4, 4, 24).reshape(4, 6)
    for lib, F_ in ((torch, TF), (ember, F)):
        x = lib.tensor(data, requires_grad=True)
        h = x * 1.0
        y = F_.leaky_relu(h, 0.3, inplace=True)
        assert y is h
        y.pow(2).sum().backward()
        if lib is torch:
            want = x.grad.numpy()
        else:
            np.testing.assert_allclose(_np(x.grad), want, rtol=1e-12)


def test_composite_path_under_vmap_and_forward_ad():
    data = np.linspace(-3, 3, 20).reshape(4, 5)
    x, t = ember.tensor(data), ember.tensor(np.ones_like(data) * 0.5)
    batched = ember.func.vmap(lambda r: F.softplus(r, beta=2.0))(x)
    np.testing.assert_allclose(_np(batched), _np(F.softplus(x, beta=2.0)), rtol=1e-12)
    _, tangent = ember.func.jvp(lambda v: F.hardswish(v), (x,), (t,))
    xt = torch.tensor(data)
    want = torch.func.jvp(TF.hardswish, (xt,), (torch.full_like(xt, 0.5),))[1]
    np.testing.assert_allclose(_np(tangent), want.numpy(), rtol=1e-12)


def test_entry_declines_what_it_does_not_take():
    assert _fused._activation("leaky_relu", ember.arange(5)) is None           # integers
    assert _fused._activation("leaky_relu", ember.ones(3, dtype=ember.float16)) is None
    assert _fused._activation("leaky_relu", ember.ones(3, device="meta")) is None
    # the composites take over: float16 gives torch's values
    h = ember.tensor([-2.0, 0.0, 3.0], dtype=ember.float16)
    np.testing.assert_array_equal(_np(F.leaky_relu(h, 0.5)).astype(np.float32), [-1, 0, 3])


def test_cpu_and_reference_fill_the_entry_and_a_memory_core_device_leaves_it():
    from ember import backends
    assert backends.coverage("cpu")["abi"] == "6.5"
    assert "activation" not in backends.coverage("cpu")["composite"]
    if ember.get_device_module("reference").is_available():
        assert "activation" not in backends.coverage("reference")["composite"]
    if ember.get_device_module("memcore").is_available():
        assert "activation" in backends.coverage("memcore")["composite"]


INPLACE = [("leaky_relu", {"negative_slope": 0.2}), ("relu6", {}),
           ("hardtanh", {"min_val": -2.0, "max_val": 0.5}), ("hardsigmoid", {}),
           ("hardswish", {}), ("silu", {}), ("elu", {"alpha": 0.7}), ("selu", {}),
           ("celu", {"alpha": 1.3}), ("mish", {})]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", INPLACE)
def test_in_place_forms_write_self_in_one_pass(name, kwargs, dtype, layout, device):
    # the kernel writes into the input itself (out may be a), or the composite's copy_
    # where it does not apply (a transposed view): the out-of-place bits either way
    data = _data(dtype)
    x = ember.tensor(data, device=device)
    if layout == "transposed":
        x = x.t()
    want = getattr(F, name)(x, **kwargs)
    v = x._version
    r = getattr(F, name)(x, inplace=True, **kwargs)
    assert r is x and x._version > v
    np.testing.assert_array_equal(_np(x), _np(want))
    t = torch.tensor(data)
    got_torch = getattr(TF, name)(t.t() if layout == "transposed" else t, **kwargs)
    np.testing.assert_allclose(_np(x), got_torch.numpy(), rtol=1e-6, atol=1e-7)


def test_in_place_under_autograd_keeps_its_node_and_refuses_leaves():
    x = ember.tensor(_data("float64"), requires_grad=True)
    h = x * 1
    F.leaky_relu(h, 0.2, inplace=True)
    h.sum().backward()
    want = torch.tensor(_data("float64"), requires_grad=True)
    TF.leaky_relu(want * 1, 0.2, inplace=True).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), want.grad.numpy())
    for m, f in ((ember, F), (torch, TF)):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            f.hardtanh(m.ones(3, requires_grad=True), inplace=True)


@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (None, 0.25), (-1, None), (0, 1e300)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_clamp_in_place_and_into_out(bounds, dtype):
    data = _data(dtype)
    lo, hi = bounds
    want = torch.tensor(data)
    results = []
    for m in (ember, torch):
        x = m.tensor(data)
        if dtype != "float64" and hi == 1e300:       # torch: out of float's range
            with pytest.raises(RuntimeError, match="without overflow"):
                x.clamp_(lo, hi)
            return
        v = x._version
        assert x.clamp_(lo, hi) is x and x._version > v
        y = m.empty(data.shape, dtype=getattr(m, dtype))
        assert m.clamp(m.tensor(data), lo, hi, out=y) is y
        xt = m.tensor(data).t().clip_(lo, hi)          # strided: the general path
        results.append((x, y, xt))
    for e, t in zip(results[0], results[1]):
        np.testing.assert_array_equal(_np(e).astype(np.float64), t.numpy().astype(np.float64))
    np.testing.assert_array_equal(_np(results[0][0]).astype(np.float64),
                                  want.clamp(lo, hi).numpy().astype(np.float64))


def test_clamp_in_place_respects_inference_and_captured_tensor_rules():
    with ember.inference_mode():
        x = ember.ones(4)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x.clamp_(0, 0.5)
    buf = ember.ones(4)
    with pytest.raises(RuntimeError, match="captured Tensor"):
        ember.func.grad(lambda v: (buf.clamp_(0, 0.5), (v * v).sum())[1])(ember.ones(4))
    assert buf.tolist() == [1.0] * 4
