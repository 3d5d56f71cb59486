"""Lazy modules against PyTorch: UninitializedParameter/UninitializedBuffer, LazyLinear,
LazyConv1d/2d, LazyBatchNorm1d/2d (and the lazy instance norms) — inference of the input
size on the first forward, the class they become, state_dicts before and after, dtype moves
before initialisation, optimizers built before the first forward, and the error cases."""
import copy
import math
import pickle

import numpy as np
import pytest
import torch
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.parameter import (
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
    is_lazy,
)

import ember
from ember import nn


def e2t(t):
    return torch.tensor(t.detach().numpy())


def t2e(t):
    return ember.tensor(t.detach().numpy())


def match(e, t, tol=1e-5):
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


# --- the uninitialized tensors ----------------------------------------------------------------

def test_uninitialized_parameter_refuses_use():
    p = UninitializedParameter()
    assert isinstance(p, Parameter) and is_lazy(p) and p.requires_grad
    assert repr(p) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        p.shape
    for use in (lambda: p + 1, lambda: p.sum(), lambda: p.mul_(2), lambda: p @ p,
                lambda: p.uniform_(), lambda: p[0]):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            use()
    with pytest.raises(RuntimeError, match="share memory"):
        p.share_memory_()
    assert not is_lazy(Parameter(ember.ones(2))) and not is_lazy(ember.ones(2))


def test_uninitialized_moves_and_materialize():
    p = UninitializedParameter(requires_grad=False, dtype=ember.float64)
    assert p.dtype == ember.float64 and not p.requires_grad
    q = p.float()
    assert is_lazy(q) and q.dtype == ember.float32 and p.double() is p
    p.materialize((2, 3))
    assert type(p) is Parameter and tuple(p.shape) == (2, 3) and p.dtype == ember.float64
    assert not p.requires_grad
    b = UninitializedBuffer()
    assert isinstance(b, nn.Buffer) and not b.requires_grad
    assert is_lazy(b.to(ember.float64)) and b.to(ember.float64).dtype == ember.float64
    b.materialize(4, dtype=ember.float64)
    assert type(b) is ember.Tensor and tuple(b.shape) == (4,) and b.dtype == ember.float64


def test_uninitialized_copy_and_pickle():
    p = UninitializedParameter(requires_grad=False, dtype=ember.float64)
    d = copy.deepcopy(p)
    assert is_lazy(d) and d is not p and d.dtype == ember.float64 and not d.requires_grad
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is UninitializedParameter and not r.requires_grad


# --- LazyLinear -------------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
def test_lazy_linear_infers_and_becomes_linear(bias):
    m = nn.LazyLinear(3, bias=bias)
    tm = torch.nn.LazyLinear(3, bias=bias)
    assert repr(m) == repr(tm)
    assert m.has_uninitialized_params() and is_lazy(m.weight)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert all(is_lazy(v) for v in m.state_dict().values())
    x = ember.randn(2, 5, 4)
    y = m(x)
    assert type(m) is nn.Linear and type(m.weight) is Parameter
    assert m.in_features == 4 and tuple(m.weight.shape) == (3, 4)
    assert not hasattr(m, "_initialize_hook") and not hasattr(m, "_load_hook")
    bound = 1 / math.sqrt(4)                   # Linear's default init ran
    assert float(m.weight.abs().max()) <= bound
    if bias:
        assert float(m.bias.abs().max()) <= bound
    assert repr(m) == f"Linear(in_features=4, out_features=3, bias={bias})"
    # forward and gradients as torch's Linear with the same weights
    tl = torch.nn.Linear(4, 3, bias=bias)
    with torch.no_grad():
        tl.weight.copy_(e2t(m.weight))
        if bias:
            tl.bias.copy_(e2t(m.bias))
    tx = e2t(x)
    ty = tl(tx)
    match(y, ty)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    match(m.weight.grad, tl.weight.grad)
    m(ember.randn(1, 4))                       # later calls: a plain Linear


def test_lazy_linear_float64_before_forward():
    m = nn.LazyLinear(2).double()
    assert is_lazy(m.weight) and m.weight.dtype == ember.float64
    y = m(ember.ones(1, 3, dtype=ember.float64))
    assert y.dtype == ember.float64 and m.weight.dtype == ember.float64
    m32 = nn.LazyLinear(2, dtype=ember.float64)
    m32(ember.ones(1, 3, dtype=ember.float64))
    assert m32.weight.dtype == ember.float64


def test_optimizer_built_before_the_first_forward():
    # the parameters materialise in place: the optimizer sees the initialised tensors
    m = nn.LazyLinear(2)
    opt = ember.optim.SGD(m.parameters(), lr=0.5)
    x = ember.randn(3, 4)
    m(x).sum().backward()
    w0, g = m.weight.detach().clone(), m.weight.grad.clone()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().numpy(), (w0 - 0.5 * g).numpy(), rtol=1e-6)
    # torch behaves the same way
    tm = torch.nn.LazyLinear(2)
    topt = torch.optim.SGD(tm.parameters(), lr=0.5)
    tm(torch.randn(3, 4)).sum().backward()
    topt.step()


def test_lazy_state_dicts():
    # initialized -> lazy: the lazy entries take the saved shapes
    tl = torch.nn.Linear(4, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict({k: t2e(v) for k, v in tl.state_dict().items()})
    assert not m.has_uninitialized_params() and tuple(m.weight.shape) == (3, 4)
    assert type(m) is nn.LazyLinear                   # as torch: still lazy until forward
    x = ember.randn(2, 4)
    match(m(x), tl(e2t(x)))
    assert type(m) is nn.Linear
    # lazy -> lazy: nothing to copy, no missing keys
    m2 = nn.LazyLinear(3)
    keys = m2.load_state_dict(nn.LazyLinear(3).state_dict())
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    assert m2.has_uninitialized_params()
    # lazy -> initialized: torch reports the shape problem
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        nn.Linear(4, 3).load_state_dict(nn.LazyLinear(3).state_dict())
    # saved after initialisation: plain tensors
    sd = m.state_dict()
    assert not any(is_lazy(v) for v in sd.values())


def test_lazy_module_in_a_container():
    net = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(2))
    out = net(ember.randn(3, 7))
    assert tuple(out.shape) == (3, 2)
    assert [type(net[0]), type(net[2])] == [nn.Linear, nn.Linear]
    assert (net[0].in_features, net[2].in_features) == (7, 5)
    assert len(list(net.parameters())) == 4


def test_lazy_linear_errors():
    m = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="uninitialized parameter"):
        m.weight.add_(1)
    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented"):
        LazyModuleMixin.initialize_parameters(m)


# --- LazyConv1d / LazyConv2d -----------------------------------------------------------------

@pytest.mark.parametrize("name,shape,kw", [
    ("Conv1d", (2, 4, 9), {"kernel_size": 3, "padding": 1}),
    ("Conv1d", (4, 9), {"kernel_size": 2, "groups": 2, "bias": False}),
    ("Conv2d", (2, 3, 6, 5), {"kernel_size": (3, 2), "stride": 2}),
    ("Conv2d", (3, 6, 5), {"kernel_size": 3, "padding": "same"}),
])
def test_lazy_conv_matches_torch(name, shape, kw):
    m = getattr(nn, "Lazy" + name)(6, **kw)
    tm = getattr(torch.nn, "Lazy" + name)(6, **kw)
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    x = ember.randn(*shape)
    y = m(x)
    assert type(m) is getattr(nn, name)
    in_channels = shape[1] if len(shape) == len(m.kernel_size) + 2 else shape[0]
    assert m.in_channels == in_channels
    tx = e2t(x).requires_grad_(True)
    tm(tx)
    assert repr(m) == repr(tm) and tuple(m.weight.shape) == tuple(tm.weight.shape)
    tm.load_state_dict({k: e2t(v) for k, v in m.state_dict().items()})
    x.requires_grad_(True)
    y = m(x)
    ty = tm(tx)
    match(y, ty, 1e-4)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    match(x.grad, tx.grad, 1e-4)
    match(m.weight.grad, tm.weight.grad, 1e-4)


def test_lazy_conv_errors():
    with pytest.raises(RuntimeError, match=r"Expected 2D \(unbatched\) or 3D \(batched\) input "
                                           r"to LazyConv1d"):
        nn.LazyConv1d(2, 3)(ember.randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(ember.randn(1, 3, 5, 5))


# --- LazyBatchNorm ----------------------------------------------------------------------------

@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)),
                                        ("BatchNorm2d", (2, 3, 4, 4))])
@pytest.mark.parametrize("affine,track", [(True, True), (False, True), (True, False)])
def test_lazy_batch_norm_matches_torch(name, shape, affine, track):
    m = getattr(nn, "Lazy" + name)(affine=affine, track_running_stats=track, momentum=0.3)
    tm = getattr(torch.nn, "Lazy" + name)(affine=affine, track_running_stats=track,
                                          momentum=0.3)
    assert repr(m) == repr(tm)
    sd, tsd = m.state_dict(), tm.state_dict()
    assert list(sd) == list(tsd)
    assert [is_lazy(v) for v in sd.values()] == [isinstance(
        v, torch.nn.parameter.UninitializedTensorMixin) for v in tsd.values()]
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape) * 2 + 1
    ex, tx = ember.tensor(x).float().requires_grad_(True), torch.tensor(x).float()
    tx.requires_grad_(True)
    y, ty = m(ex), tm(tx)
    assert type(m) is getattr(nn, name) and m.num_features == 3
    assert repr(m) == repr(tm)
    match(y, ty)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    match(ex.grad, tx.grad)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(m.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)
    if affine:
        match(m.weight.grad, tm.weight.grad)
    m.eval()
    tm.eval()
    match(m(ex), tm(tx))


def test_lazy_batch_norm_loads_an_initialized_state_dict():
    t = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        t.running_mean.uniform_()
        t.weight.uniform_()
    t.num_batches_tracked.fill_(7)
    m = nn.LazyBatchNorm2d()
    m.load_state_dict({k: t2e(v) for k, v in t.state_dict().items()})
    assert not m.has_uninitialized_params()
    match(m.running_mean, t.running_mean)
    match(m.weight, t.weight)
    assert int(m.num_batches_tracked) == 7
    m.eval()
    t.eval()
    x = ember.randn(2, 3, 2, 2)
    match(m(x), t(e2t(x)))
    assert type(m) is nn.BatchNorm2d


def test_lazy_instance_norm():
    m, tm = nn.LazyInstanceNorm1d(), torch.nn.LazyInstanceNorm1d()
    assert list(m.state_dict()) == list(tm.state_dict())
    x = ember.randn(2, 3, 6)
    match(m(x), tm(e2t(x)))
    assert type(m) is nn.InstanceNorm1d and m.num_features == 3
    match(m.running_mean, tm.running_mean)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copied_lazy_module_initialises_on_its_own(how):
    m = nn.LazyBatchNorm1d()
    c = copy.deepcopy(m) if how == "deepcopy" else pickle.loads(pickle.dumps(m))
    assert type(c) is nn.LazyBatchNorm1d and c.has_uninitialized_params()
    c(ember.randn(4, 3))
    c(ember.randn(4, 3))                 # the hooks were removed from the copy's own tables
    assert type(c) is nn.BatchNorm1d and int(c.num_batches_tracked) == 2
    assert type(m) is nn.LazyBatchNorm1d and m.has_uninitialized_params()
    assert is_lazy(m.state_dict()["running_mean"])
