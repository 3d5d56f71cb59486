"""nn.functional (activations, linear, dropout, embedding) against torch.nn.functional:
values, gradients, dtypes, non-contiguous and empty inputs, errors."""
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember

UNARY = [("relu", {}), ("relu6", {}), ("gelu", {}), ("gelu", {"approximate": "tanh"}),
         ("silu", {}), ("sigmoid", {}), ("tanh", {}), ("softmax", {"dim": 0}),
         ("softmax", {"dim": -1, "dtype": torch.float64}), ("log_softmax", {"dim": 1}),
         ("softmin", {"dim": 1}), ("leaky_relu", {"negative_slope": 0.1}),
         ("elu", {"alpha": 0.4}), ("softplus", {"beta": 2}), ("mish", {}),
         ("hardtanh", {}), ("logsigmoid", {}), ("glu", {"dim": 0}), ("selu", {}),
         ("celu", {}), ("hardsigmoid", {}), ("hardswish", {}), ("softsign", {}),
         ("tanhshrink", {}), ("hardshrink", {}), ("softshrink", {"lambd": 0.2}),
         ("normalize", {}), ("normalize", {"p": 1, "dim": 0})]


def _kw(kwargs):
    return {k: (ember.float64 if v is torch.float64 else v) for k, v in kwargs.items()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", UNARY)
def test_unary(bridge, name, kwargs, dtype):
    data = np.random.default_rng(0).standard_normal((6, 4)).astype(dtype) * 3
    tol = 1e-5 if dtype == "float32" else 1e-10
    for view in (lambda a: a, lambda a: a.t()):        # contiguous and transposed
        xt = view(torch.tensor(data)).requires_grad_()
        xe = view(ember.tensor(data)).requires_grad_()
        yt = getattr(TF, name)(xt, **kwargs)
        ye = getattr(F, name)(xe, **_kw(kwargs))
        bridge.close(ye, yt, tol)
        assert ye.dtype.name == str(yt.dtype)[6:]
        yt.square().sum().backward()
        ye.square().sum().backward()
        # torch's hardsigmoid backward scales by a float32 1/6 even for float64
        bridge.close(xe.grad, xt.grad, 1e-7 if name == "hardsigmoid" else tol * 10)
    empty = getattr(F, name)(ember.zeros(0, 4, dtype=getattr(ember, dtype)), **_kw(kwargs))
    assert tuple(empty.shape) == tuple(getattr(TF, name)(torch.zeros(0, 4), **kwargs).shape)


def test_inplace_variants(bridge):
    data = np.random.default_rng(0).standard_normal((3, 3))
    for name in ("relu", "relu6", "selu", "celu", "hardsigmoid", "hardswish", "elu",
                 "leaky_relu", "hardtanh", "silu", "mish"):
        xe, xt = ember.tensor(data), torch.tensor(data)
        assert getattr(F, name)(xe, inplace=True) is xe
        getattr(TF, name)(xt, inplace=True)
        bridge.close(xe, xt, 1e-10)
    xe = ember.tensor(data)
    assert F.relu_(xe) is xe and xe.min().item() >= 0
    xe, xt = ember.tensor(data), torch.tensor(data)
    bridge.close(F.threshold(xe, 0.2, -1.0, True), TF.threshold(xt, 0.2, -1.0, True))


def test_softmax_implicit_dim(bridge):
    for shape in [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        xt = torch.randn(*shape)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            ye = F.softmax(bridge.from_torch(xt))
        with pytest.warns(UserWarning):
            yt = TF.softmax(xt)
        bridge.close(ye, yt)
        with pytest.warns(UserWarning, match="log_softmax"):
            bridge.close(F.log_softmax(bridge.from_torch(xt)), TF.log_softmax(xt, 0 if len(
                shape) in (1, 3) else 1))


def test_activation_errors():
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(ember.ones(3, 2), 0)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.relu([1.0])
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(ember.ones(2), -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater"):
        F.hardtanh(ember.ones(2), 2.0, 1.0)


def test_linear_functional(bridge):
    x, w, b = torch.randn(3, 4), torch.randn(2, 4), torch.randn(2)
    bridge.close(F.linear(bridge.from_torch(x), bridge.from_torch(w)), TF.linear(x, w))
    bridge.close(F.linear(bridge.from_torch(x.t()).t(), bridge.from_torch(w),
                          bridge.from_torch(b)), TF.linear(x, w, b))
    v = torch.randn(4)
    bridge.close(F.linear(bridge.from_torch(x), bridge.from_torch(v)), TF.linear(x, v))
    with pytest.raises(RuntimeError):
        F.linear(ember.ones(2, 3), ember.ones(2, 3, 4))


def test_dropout_statistics_and_grad():
    ember.manual_seed(0)
    x = ember.ones(200, 200, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.02
    np.testing.assert_allclose(np.unique(y.detach().numpy()), [0.0, 1 / 0.7], rtol=1e-6)
    y.sum().backward()
    assert ember.equal(x.grad, y.detach())             # the gradient is the same mask
    assert F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    z = ember.ones(10, 10)
    assert F.dropout(z, 0.5, inplace=True) is z
    for p in (-0.1, 1.1):
        with pytest.raises(ValueError, match=f"between 0 and 1, but got {p}"):
            F.dropout(x, p)
    h = F.dropout(ember.ones(50, 50, dtype=ember.float16), 0.5)
    assert h.dtype == ember.float16


@pytest.mark.parametrize("fn,shape", [(F.dropout1d, (8, 16, 5)), (F.dropout1d, (16, 5)),
                                      (F.dropout2d, (8, 16, 3, 3)),
                                      (F.dropout3d, (8, 16, 2, 2, 2)),
                                      (F.dropout3d, (16, 2, 2, 2))])
def test_channel_dropout_zeroes_whole_channels(fn, shape):
    y = fn(ember.ones(*shape), 0.5).numpy()
    lead = 1 if len(shape) in (2, 4) and fn is not F.dropout2d else 2
    per_channel = y.reshape(int(np.prod(shape[:lead])), -1)
    assert all(len(set(row)) == 1 for row in per_channel)
    assert 0.2 < (per_channel[:, 0] == 0).mean() < 0.8
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(2), 0.5)


def test_embedding_functional(bridge):
    w = torch.randn(5, 3, requires_grad=True)
    we = bridge.from_torch(w).requires_grad_()
    idx = [[4, 1], [1, 1]]
    yt = TF.embedding(torch.tensor(idx), w, padding_idx=1, scale_grad_by_freq=True)
    ye = F.embedding(ember.tensor(idx), we, padding_idx=1, scale_grad_by_freq=True)
    bridge.close(ye, yt)
    yt.sum().backward()
    ye.sum().backward()
    bridge.close(we.grad, w.grad)
    assert we.grad[1].abs().sum().item() == 0
    out = F.embedding(ember.tensor([0, 3], dtype=ember.int32), we.detach())
    assert tuple(out.shape) == (2, 3)


_KINKS = [-7.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 8.0, float("nan")]


@pytest.mark.parametrize("name,kwargs", [
    ("relu6", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -3.0, "max_val": 0.5}),
    ("hardswish", {}), ("hardsigmoid", {}), ("softshrink", {}), ("softshrink", {"lambd": 1.0}),
    ("softplus", {"threshold": 3.0}), ("leaky_relu", {}), ("elu", {})])
def test_gradient_at_the_kinks(bridge, name, kwargs):
    # exactly at the bounds PyTorch's backward formulas pass all or nothing, never the half
    # that a max/min tie would
    xt = torch.tensor(_KINKS, requires_grad=True)
    xe = ember.tensor(_KINKS, requires_grad=True)
    yt, ye = getattr(TF, name)(xt, **kwargs), getattr(F, name)(xe, **kwargs)
    bridge.close(ye, yt)
    yt.sum().backward()
    ye.sum().backward()
    finite = np.isfinite(_KINKS)       # nan's gradient: hardswish/hardsigmoid differ there
    np.testing.assert_allclose(xe.grad.numpy()[finite], xt.grad.numpy()[finite], atol=1e-7)
    if name in ("relu6", "hardtanh", "softshrink"):
        np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


def test_hardtanh_integer_input_keeps_dtype(bridge):
    xe, xt = ember.tensor([-3, 0, 2, 9]), torch.tensor([-3, 0, 2, 9])
    ye, yt = F.hardtanh(xe, -1, 6), TF.hardtanh(xt, -1, 6)
    assert ye.dtype == ember.int64
    bridge.close(ye, yt)


@pytest.mark.parametrize("name,kwargs", [
    ("relu", {}), ("relu6", {}), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("leaky_relu", {"negative_slope": 0.2}), ("silu", {}), ("hardswish", {}), ("mish", {}),
    ("celu", {"alpha": 0.7}), ("elu", {}), ("selu", {}), ("hardsigmoid", {}),
    ("threshold", {"threshold": 0.1, "value": -2.0}), ("rrelu", {})])
def test_inplace_activation_backward(bridge, name, kwargs):
    # the in-place forms overwrite their input: what backward needs must not be it
    data = np.linspace(-4, 7, 12).reshape(3, 4)
    grads = []
    for lib, fn in ((torch, getattr(TF, name)), (ember, getattr(F, name))):
        x = lib.tensor(data, requires_grad=True)
        h = x * 1.5
        y = fn(h, inplace=True, **kwargs)
        assert y is h
        (y * y).sum().backward()
        grads.append(x.grad)
    bridge.close(grads[1], grads[0], 1e-7)     # torch computes celu's 1/alpha in float32
    xe = ember.tensor(data, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(F, name)(xe, inplace=True, **kwargs)


@pytest.mark.parametrize("module", ["ReLU6", "Hardtanh", "LeakyReLU", "SiLU", "Hardswish",
                                    "Mish", "CELU", "RReLU"])
def test_inplace_activation_module_backward(module):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), getattr(ember.nn, module)(inplace=True))
    m(ember.ones(2, 3)).sum().backward()
    assert m[0].weight.grad is not None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name,kwargs", [("elu", {}), ("elu", {"alpha": -0.5}), ("selu", {}),
                                         ("celu", {"alpha": 0.1}), ("celu", {"alpha": 2.0})])
def test_exponential_branch_does_not_overflow_the_gradient(name, kwargs, dtype):
    # the exp branch where() discards overflows for large x: its backward must not give NaN
    data = [1e4, 800.0, 100.0, 12.0, 9.0, 1.0, 0.0, -1.0, -30.0]
    grads = []
    for lib, fn in ((torch, getattr(TF, name)), (ember, getattr(F, name))):
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        fn(x, **kwargs).sum().backward()
        grads.append(x.grad.float().tolist())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-2, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_gelu_is_the_gelu_kernel_and_node(dtype):
    # the GELU codes compute half in float32 themselves: no cast around them (one kernel
    # each way on a GPU), PyTorch's node, PyTorch's values and gradients
    data = np.random.default_rng(0).standard_normal(2000) * 3
    res = []
    for lib, fn in ((torch, TF.gelu), (ember, F.gelu)):
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        y = fn(x)
        y.backward(lib.ones_like(y))
        res.append((y.grad_fn.name(), y.detach().float().numpy(), x.grad.float().numpy()))
    assert res[1][0] == res[0][0] == "GeluBackward0"
    tol = 4e-3 if dtype == "float16" else 2e-2
    for got, want in zip(res[1][1:], res[0][1:]):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
