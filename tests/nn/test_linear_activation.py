"""Layers against torch: the same weights give the same outputs and gradients, the
default initialisation has PyTorch's bounds, and reprs are identical."""
import math

import numpy as np
import pytest
import torch

import ember
from ember import nn

ACTIVATIONS = [("ReLU", ()), ("ReLU", (True,)), ("GELU", ()), ("GELU", ("tanh",)),
               ("SiLU", ()), ("Sigmoid", ()), ("Tanh", ()), ("Softmax", (1,)),
               ("LogSoftmax", (0,)), ("LeakyReLU", (0.2,)), ("ELU", (0.5,)),
               ("Softplus", (2.0, 5.0)), ("Mish", ()), ("Hardtanh", (-0.5, 2.0)),
               ("ReLU6", ()), ("SELU", ()), ("CELU", (0.7,)), ("Hardsigmoid", ()),
               ("Hardswish", ()), ("Softsign", ()), ("Tanhshrink", ()), ("LogSigmoid", ()),
               ("Threshold", (0.1, 20.0)), ("GLU", ()), ("Softmin", (1,)),
               ("Hardshrink", (0.3,)), ("Softshrink", ()), ("Identity", ())]


@pytest.mark.parametrize("name,args", ACTIVATIONS)
def test_activation_modules(bridge, name, args):
    t_mod, e_mod = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert bridge.torch_text(repr(e_mod)) == repr(t_mod)
    data = np.random.default_rng(0).standard_normal((4, 6)) * 3
    xt = torch.tensor(data, requires_grad=True)
    xe = ember.tensor(data, requires_grad=True)
    inplace = args == (True,)
    yt = t_mod(xt * 1 if inplace else xt)
    ye = e_mod(xe * 1 if inplace else xe)
    bridge.close(ye, yt, 1e-10)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g, device=ye.device))
    bridge.close(xe.grad, xt.grad, 1e-8)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(bridge, bias):
    t, e = torch.nn.Linear(5, 3, bias=bias), nn.Linear(5, 3, bias=bias)
    bridge.copy_weights(t, e)
    assert repr(e) == repr(t) and list(e.state_dict()) == list(t.state_dict())
    for shape in [(4, 5), (2, 3, 5), (5,)]:
        xt = torch.randn(*shape, requires_grad=True)
        xe = bridge.from_torch(xt).requires_grad_()
        yt, ye = t(xt), e(xe)
        bridge.close(ye, yt)
        yt.sum().backward()
        ye.sum().backward()
        bridge.close(xe.grad, xt.grad)
    bridge.close(e.weight.grad, t.weight.grad, 1e-4)
    if bias:
        bridge.close(e.bias.grad, t.bias.grad, 1e-4)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        e(ember.ones(2, 4))


def test_linear_folds_contiguous_3d_input_like_torch(bridge):
    # a contiguous input of other than 2 dims with a 1-D bias: one addmm over the rows, then
    # a view, as PyTorch (a transposed input keeps matmul + add); values and gradients agree
    t, e = torch.nn.Linear(6, 4), nn.Linear(6, 4)
    bridge.copy_weights(t, e)
    base = torch.randn(3, 5, 6)
    for make in [lambda x: x, lambda x: x.transpose(0, 1), lambda x: x.reshape(3, 5, 2, 3)
                 .transpose(2, 3).reshape(3, 5, 6), lambda x: x.reshape(1, 3, 5, 6),
                 lambda x: x[0, 0], lambda x: x[:, :0]]:
        xt = make(base.clone().requires_grad_())
        xe = make(bridge.from_torch(base).requires_grad_())
        yt, ye = t(xt), e(xe)
        assert ye.grad_fn.name() == yt.grad_fn.name()
        bridge.close(ye, yt)
        g = torch.randn(yt.shape)
        yt.backward(g)
        ye.backward(bridge.from_torch(g))
    bridge.close(e.weight.grad, t.weight.grad, 1e-4)
    bridge.close(e.bias.grad, t.bias.grad, 1e-4)


def test_linear_default_init_bounds():
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)          # kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in)
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    b = m.bias.detach().numpy()
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    assert m.weight.dtype == ember.float32 and m.weight.requires_grad
    assert nn.Linear(2, 2, dtype=ember.float64).weight.dtype == ember.float64


def test_bilinear_matches_torch(bridge):
    t, e = torch.nn.Bilinear(3, 4, 5), nn.Bilinear(3, 4, 5)
    bridge.copy_weights(t, e)
    assert repr(e) == repr(t)
    x1, x2 = torch.randn(2, 6, 3, requires_grad=True), torch.randn(2, 6, 4)
    e1 = bridge.from_torch(x1).requires_grad_()
    yt, ye = t(x1, x2), e(e1, bridge.from_torch(x2))
    bridge.close(ye, yt, 1e-4)
    yt.sum().backward()
    ye.sum().backward()
    bridge.close(e1.grad, x1.grad, 1e-4)
    bridge.close(e.weight.grad, t.weight.grad, 1e-4)
    assert abs(e.weight).max().item() <= 1 / math.sqrt(3)
    with pytest.raises(RuntimeError, match="input1 size does not match"):
        e(ember.ones(2, 2), ember.ones(2, 4))


def test_flatten_unflatten(bridge):
    x = torch.randn(2, 3, 4, 5)
    for t, e in [(torch.nn.Flatten(), nn.Flatten()), (torch.nn.Flatten(0, 2), nn.Flatten(0, 2)),
                 (torch.nn.Unflatten(1, (3, 1)), nn.Unflatten(1, (3, 1)))]:
        assert repr(e) == repr(t)
        bridge.close(e(bridge.from_torch(x)), t(x))
    with pytest.raises(TypeError, match="tuple of ints"):
        nn.Unflatten(1, 3)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1},
                                    {"max_norm": 1.0}, {"scale_grad_by_freq": True}])
def test_embedding_matches_torch(bridge, kwargs):
    t, e = torch.nn.Embedding(6, 3, **kwargs), nn.Embedding(6, 3, **kwargs)
    assert repr(e) == repr(t)
    if "padding_idx" in kwargs:
        assert e.weight[e.padding_idx].abs().sum().item() == 0
    bridge.copy_weights(t, e)
    idx = [[0, 2, 2, 5], [5, 1, 2, 0]]
    yt, ye = t(torch.tensor(idx)), e(ember.tensor(idx))
    bridge.close(ye, yt)
    g = torch.randn(2, 4, 3)
    yt.backward(g)
    ye.backward(bridge.from_torch(g))
    bridge.close(e.weight.grad, t.weight.grad)
    bridge.close(e.weight, t.weight)                 # max_norm renormalised the same rows


def test_embedding_from_pretrained_and_errors(bridge):
    w = ember.randn(4, 2)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and ember.equal(e.weight, w)
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="Padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(RuntimeError, match="Long, Int"):
        e(ember.ones(2))
    with pytest.raises(IndexError):
        e(ember.tensor([7]))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(3, 2, sparse=True)(ember.tensor([1]))


def test_dropout_modules():
    assert repr(nn.Dropout()) == repr(torch.nn.Dropout())
    assert repr(nn.Dropout2d(0.2, True)) == repr(torch.nn.Dropout2d(0.2, True))
    d = nn.Dropout(0.5)
    x = ember.ones(100, 100)
    y = d(x)
    zeros = (y == 0).float().mean().item()
    assert 0.45 < zeros < 0.55 and set(np.unique(y.numpy())) <= {0.0, 2.0}
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
