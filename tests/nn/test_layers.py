"""Conv, pooling, norm and loss layers against PyTorch 2.13: the same weights give the same
outputs and gradients; state_dict keys, buffers, repr and constructor errors match."""
import ember.nn as enn
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def e_(t):
    return ember.tensor(t.detach().numpy())


def copy_weights(em, tm):
    """torch module tm's parameters and buffers into ember module em (same names)."""
    em.load_state_dict({k: e_(v) for k, v in tm.state_dict().items()})


def check_module(em, tm, *inputs, rtol=1e-5, atol=1e-5, grad=True):
    """Same forward, and same input/parameter gradients of sum(out * w)."""
    xs_t = [torch.tensor(x, requires_grad=grad and x.dtype.kind == "f") for x in inputs]
    xs_e = [ember.tensor(x, requires_grad=grad and x.dtype.kind == "f") for x in inputs]
    out_t, out_e = tm(*xs_t), em(*xs_e)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=rtol,
                               atol=atol)
    if not grad:
        return
    w = RNG.standard_normal(tuple(out_t.shape)).astype(out_t.detach().numpy().dtype)
    (out_t * torch.tensor(w)).sum().backward()
    (out_e * ember.tensor(w)).sum().backward()
    for xt, xe in zip(xs_t, xs_e):
        if xt.requires_grad:
            np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
    pe, pt = dict(em.named_parameters()), dict(tm.named_parameters())
    assert pe.keys() == pt.keys()
    for k in pt:
        np.testing.assert_allclose(pe[k].grad.numpy(), pt[k].grad.numpy(), rtol=rtol,
                                   atol=atol, err_msg=k)


def both(name, *args, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs)
    em = getattr(enn, name)(*args, **kwargs)
    copy_weights(em, tm)
    return em, tm


@pytest.mark.parametrize("kwargs", [
    {}, {"stride": 2}, {"padding": 1}, {"padding": "same", "dilation": 2},
    {"padding": "valid", "bias": False}, {"groups": 2}, {"padding": 1, "padding_mode": "reflect"},
    {"padding": 2, "padding_mode": "circular"}, {"padding": 1, "padding_mode": "replicate"}])
def test_conv2d_module(kwargs):
    em, tm = both("Conv2d", 4, 6, 3, **kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    check_module(em, tm, RNG.standard_normal((2, 4, 7, 6)).astype(np.float32), rtol=1e-4,
                 atol=1e-4)


def test_conv1d_module_and_unbatched():
    em, tm = both("Conv1d", 3, 5, 3, padding=1, stride=2)
    assert repr(em) == repr(tm)
    check_module(em, tm, RNG.standard_normal((2, 3, 9)).astype(np.float32), rtol=1e-4,
                 atol=1e-4)
    em, tm = both("Conv2d", 3, 2, (2, 3))
    check_module(em, tm, RNG.standard_normal((3, 5, 5)).astype(np.float32), rtol=1e-4,
                 atol=1e-4)


def test_conv_default_init_statistics():
    ember.manual_seed(0)
    c = enn.Conv2d(16, 32, 3)
    bound = 1 / np.sqrt(16 * 9)          # kaiming_uniform(a=sqrt(5)) gives U(-b, b)
    w = c.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound
    assert np.abs(c.bias.detach().numpy()).max() <= bound


@pytest.mark.parametrize("args, err", [
    ((4, 6, 3), {"groups": 3}), ((4, 6, 3), {"padding": "same", "stride": 2}),
    ((4, 6, 3), {"padding": "full"}), ((4, 6, 3), {"padding_mode": "wrap"})])
def test_conv_constructor_errors(args, err):
    with pytest.raises(ValueError) as et:
        torch.nn.Conv2d(*args, **err)
    with pytest.raises(ValueError) as ee:
        enn.Conv2d(*args, **err)
    # torch prints the allowed values as a Python set, whose order varies between runs
    def canonical(msg):
        head, _, rest = msg.partition("{")
        values, _, tail = rest.partition("}")
        return head, sorted(values.split(", ")), tail
    assert canonical(str(ee.value)) == canonical(str(et.value))


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("MaxPool2d", (2,), {}, (2, 3, 8, 8)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 9, 7)),
    ("MaxPool1d", (3,), {"stride": 2}, (2, 3, 11)),
    ("AvgPool2d", (2,), {}, (2, 3, 8, 8)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (1, 2, 7, 7)),
    ("AvgPool1d", (2,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 7, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 5)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
])
def test_pool_modules(name, args, kwargs, shape):
    em, tm = both(name, *args, **kwargs)
    assert repr(em) == repr(tm)
    check_module(em, tm, RNG.standard_normal(shape).astype(np.float32))


def test_maxpool_return_indices():
    em, tm = both("MaxPool2d", 2, return_indices=True)
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    (ve, ie), (vt, it) = em(ember.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_allclose(ve.numpy(), vt.numpy())


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (8, 4, 5)),
                                         ("BatchNorm2d", (6, 4, 3, 5))])
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"momentum": None},
                                    {"track_running_stats": False}, {"bias": False}])
def test_batchnorm_modules(name, shape, kwargs):
    em, tm = both(name, 4, **kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for _ in range(2):           # two training steps update the running stats alike
        check_module(em, tm, RNG.standard_normal(shape).astype(np.float32), rtol=1e-4,
                     atol=1e-4)
        em.zero_grad()
        tm.zero_grad()
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(em.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    em.eval()
    tm.eval()
    check_module(em, tm, RNG.standard_normal(shape).astype(np.float32), rtol=1e-4, atol=1e-4)


def test_batchnorm_input_dim_errors():
    with pytest.raises(ValueError, match="expected 4D input"):
        enn.BatchNorm2d(3)(ember.zeros(2, 3))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        enn.BatchNorm1d(3)(ember.zeros(2, 3, 4, 5))


@pytest.mark.parametrize("args, kwargs, shape", [((6,), {}, (3, 6)),
                                                 (((4, 6),), {}, (2, 3, 4, 6)),
                                                 ((6,), {"elementwise_affine": False}, (5, 6)),
                                                 ((6,), {"bias": False}, (5, 6))])
def test_layernorm_module(args, kwargs, shape):
    em, tm = both("LayerNorm", *args, **kwargs)
    assert repr(em) == repr(tm)
    check_module(em, tm, RNG.standard_normal(shape).astype(np.float32), rtol=1e-4, atol=1e-4)


def _targets(shape, n):
    return RNG.integers(0, n, shape).astype(np.int64)


@pytest.mark.parametrize("name, kwargs", [
    ("CrossEntropyLoss", {}), ("CrossEntropyLoss", {"reduction": "sum"}),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}), ("CrossEntropyLoss", {"ignore_index": 1}),
    ("NLLLoss", {}), ("NLLLoss", {"reduction": "none"})])
def test_class_losses(name, kwargs):
    em, tm = both(name, **kwargs)
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    if name == "NLLLoss":
        x = np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True)).astype(np.float32)
    check_module(em, tm, x, _targets((6,), 4))


def test_weighted_cross_entropy_buffer():
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    tm = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))
    em = enn.CrossEntropyLoss(weight=ember.tensor(w))
    assert list(em.state_dict()) == list(tm.state_dict()) == ["weight"]
    check_module(em, tm, RNG.standard_normal((5, 4)).astype(np.float32), _targets((5,), 4))


@pytest.mark.parametrize("name, kwargs", [("MSELoss", {}), ("L1Loss", {"reduction": "sum"}),
                                          ("SmoothL1Loss", {"beta": 0.5}),
                                          ("BCEWithLogitsLoss", {})])
def test_regression_losses(name, kwargs):
    em, tm = both(name, **kwargs)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.uniform(size=(4, 3)).astype(np.float32)
    check_module(em, tm, x, y)


def test_bce_loss():
    em, tm = both("BCELoss")
    x = RNG.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
    y = RNG.integers(0, 2, (4, 3)).astype(np.float32)
    check_module(em, tm, x, y)


def test_legacy_size_average_reduce():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = enn.MSELoss(size_average=False)
    assert loss.reduction == "sum"


def test_small_cnn_trains_like_torch():
    """A conv-pool-linear net: the same three SGD steps give the same weights."""
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    torch.manual_seed(0)
    tm, em = build(torch.nn), build(enn)
    copy_weights(em, tm)
    ot = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    oe = ember.optim.SGD(em.parameters(), lr=0.1, momentum=0.9)
    x = RNG.standard_normal((8, 1, 8, 8)).astype(np.float32)
    y = _targets((8,), 3)
    for _ in range(3):
        for m, o, lib, f in ((tm, ot, torch, torch.nn.functional),
                             (em, oe, ember, enn.functional)):
            o.zero_grad()
            f.cross_entropy(m(lib.tensor(x)), lib.tensor(y)).backward()
            o.step()
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(em.state_dict()[k].numpy(), v.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=k)
