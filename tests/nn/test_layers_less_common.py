"""The less common layers and functions, against torch: pooling variants,
sampling grids, RReLU, gumbel-softmax, channel shuffle, LRN, the remaining losses and the
adaptive softmax (forward, gradient, dtypes, errors)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from ember.nn import functional as F

import ember
from ember import nn

RNG = np.random.default_rng(0)


def _pair(x):
    return ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(e, t, atol=1e-6):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-5)


def _both(fe, ft, x, weight=None, atol=1e-6):
    ex, tx = _pair(x)
    e, t = fe(ex), ft(tx)
    _close(e, t, atol)
    w = RNG.standard_normal(tuple(t.shape))
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    _close(ex.grad, tx.grad, atol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nd,kernel,out", [(2, (2, 3), (4, 5)), (3, (2, 2, 3), (3, 4, 3))])
def test_fractional_max_pool(dtype, nd, kernel, out):
    x = RNG.standard_normal((2, 3) + (9, 11, 7)[:nd]).astype(dtype)
    s = RNG.uniform(size=(2, 3, nd)).astype(dtype)
    fe = getattr(F, f"fractional_max_pool{nd}d")
    ft = getattr(TF, f"fractional_max_pool{nd}d")
    ex, tx = _pair(x)
    ev, ei = fe(ex, kernel, output_size=out, return_indices=True, _random_samples=ember.tensor(s))
    tv, ti = ft(tx, kernel, output_size=out, return_indices=True, _random_samples=torch.tensor(s))
    _close(ev, tv)
    assert (ei.numpy() == ti.numpy()).all()
    ev.sum().backward()
    tv.sum().backward()
    _close(ex.grad, tx.grad)
    # output_ratio, unbatched input
    r_e = fe(ember.tensor(x[0]), kernel, output_ratio=(0.5,) * nd,
             _random_samples=ember.tensor(s[:1]))
    r_t = ft(torch.tensor(x[0]), kernel, output_ratio=(0.5,) * nd,
             _random_samples=torch.tensor(s[:1]))
    _close(r_e, r_t)


def test_fractional_max_pool_errors():
    x = ember.randn(1, 2, 5, 5)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 5"):
        F.fractional_max_pool2d(x, 3, output_size=4)
    with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 3)
    with pytest.raises(RuntimeError, match="size\\(2\\) equals to 2; got 3"):
        F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=ember.rand(1, 2, 3))
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_inverts_max_pool(nd):
    x = RNG.standard_normal((2, 3) + (8, 6, 4)[:nd])
    tv, ti = getattr(TF, f"max_pool{nd}d")(torch.tensor(x), 2, return_indices=True)
    ev = ember.tensor(tv.numpy(), requires_grad=True)
    tv.requires_grad_()
    e = getattr(nn, f"MaxUnpool{nd}d")(2)(ev, ember.tensor(ti.numpy()))
    t = getattr(torch.nn, f"MaxUnpool{nd}d")(2)(tv, ti)
    _close(e, t)
    w = RNG.standard_normal(tuple(t.shape))
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    _close(ev.grad, tv.grad)


def test_max_unpool_output_size_and_errors():
    x = RNG.standard_normal((1, 1, 4, 4))
    tv, ti = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    ev, ei = ember.tensor(tv.numpy()), ember.tensor(ti.numpy())
    _close(F.max_unpool2d(ev, ei, 2, output_size=(5, 5)), TF.max_unpool2d(tv, ti, 2, output_size=(5, 5)))
    with pytest.raises(ValueError, match="must be between 2 and 6"):
        F.max_unpool2d(ev, ei, 2, output_size=(1, 1))
    with pytest.raises(RuntimeError, match="Found an invalid max index: 100"):
        F.max_unpool2d(ev, ember.full((1, 1, 2, 2), 100), 2)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p,ceil", [(2.0, False), (3.0, True), (1.0, False)])
def test_lp_pool(nd, p, ceil):
    x = np.abs(RNG.standard_normal((2, 3) + (7, 6, 5)[:nd])) + 0.1
    _both(lambda t: getattr(nn, f"LPPool{nd}d")(p, 2, stride=2, ceil_mode=ceil)(t),
          lambda t: getattr(torch.nn, f"LPPool{nd}d")(p, 2, stride=2, ceil_mode=ceil)(t), x)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(nd, mode, padding_mode, align_corners):
    if mode == "bicubic" and nd == 3:
        pytest.skip("bicubic is 2-d only")
    x = RNG.standard_normal((2, 3) + (5, 6, 4)[:nd])
    g = RNG.uniform(-1.3, 1.3, (2,) + (3, 4, 2)[:nd] + (nd,))
    ex, tx = _pair(x)
    eg, tg = _pair(g)
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    e, t = F.grid_sample(ex, eg, **kw), TF.grid_sample(tx, tg, **kw)
    _close(e, t, 1e-10)
    w = RNG.standard_normal(tuple(t.shape))
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    _close(ex.grad, tx.grad, 1e-10)
    _close(eg.grad, tg.grad, 1e-9)       # nearest: zeros in both


@pytest.mark.parametrize("nd", [2])     # PyTorch's (scalar) 3-d kernel treats nan otherwise
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_nan_grid(nd, mode, padding_mode):
    # a nan position: PyTorch's clipping sends it to 0 (border, reflection), zeros padding
    # reads 0 there, and the bilinear/bicubic weights stay nan
    x = RNG.standard_normal((1, 2) + (3, 4, 5)[:nd])
    g = RNG.uniform(-1, 1, (1, 2, 2) + (nd,))
    g[0, 0, 0, 0] = g[0, 1, 1, -1] = np.nan
    if nd == 3:
        g = g[:, None]
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": False}
    e = F.grid_sample(ember.tensor(x), ember.tensor(g), **kw)
    t = TF.grid_sample(torch.tensor(x), torch.tensor(g), **kw)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-10)


def test_grid_sample_nearest_grid_grad_is_zero():
    x, g = RNG.standard_normal((1, 2, 3, 4)), RNG.uniform(-1, 1, (1, 2, 2, 2))
    for input_grad in (False, True):
        ex, tx = _pair(x) if input_grad else (ember.tensor(x), torch.tensor(x))
        eg, tg = _pair(g)
        e = F.grid_sample(ex, eg, mode="nearest", align_corners=False)
        t = TF.grid_sample(tx, tg, mode="nearest", align_corners=False)
        assert e.requires_grad == t.requires_grad
        e.sum().backward()
        t.sum().backward()
        _close(eg.grad, tg.grad, 0)


def test_grid_sample_float32_and_errors():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    g = RNG.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)
    _close(F.grid_sample(ember.tensor(x), ember.tensor(g), align_corners=False),
           TF.grid_sample(torch.tensor(x), torch.tensor(g), align_corners=False), 1e-5)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.grid_sample(ember.tensor(x), ember.tensor(g))
    with pytest.raises(ValueError, match="expected mode to be 'bilinear'"):
        F.grid_sample(ember.tensor(x), ember.tensor(g), mode="foo", align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(ember.tensor(x), ember.zeros(2, 3, 3, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(ember.zeros(1, 1, 2, 2, 2), ember.zeros(1, 2, 2, 2, 3), mode="bicubic",
                      align_corners=False)


@pytest.mark.parametrize("size,align", [((2, 3, 4, 5), False), ((2, 3, 4, 5, 3), True),
                                        ((1, 1, 1, 3), True)])
def test_affine_grid(size, align):
    nd = len(size) - 2
    theta = RNG.standard_normal((size[0], nd, nd + 1))
    _both(lambda t: F.affine_grid(t, size, align_corners=align),
          lambda t: TF.affine_grid(t, size, align_corners=align), theta)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices"):
        F.affine_grid(ember.zeros(1, 3, 3), (1, 1, 4, 4), align_corners=False)
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(ember.zeros(1, 2, 3, dtype=ember.int64), (1, 1, 4, 4), align_corners=False)


def test_rrelu():
    x = RNG.standard_normal((4, 5))
    _both(lambda t: F.rrelu(t, 0.1, 0.3), lambda t: TF.rrelu(t, 0.1, 0.3), x)
    ex = ember.tensor(x, requires_grad=True)
    out = nn.RReLU(0.1, 0.3)(ex)            # training: a random slope per negative element
    ratio = (out / ex).detach().numpy()
    assert np.all(ratio[x >= 0] == 1) and np.all((ratio[x < 0] >= 0.1) & (ratio[x < 0] <= 0.3))
    out.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), ratio)
    with pytest.raises(RuntimeError, match="Lower bound should be less than"):
        F.rrelu(ember.tensor(x), 0.5, 0.1, training=True)


@pytest.mark.parametrize("fn", ["elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_"])
def test_inplace_activations(fn):
    x = RNG.standard_normal((3, 4))
    e, t = ember.tensor(x), torch.tensor(x)
    assert getattr(F, fn)(e) is e
    getattr(TF, fn)(t)
    _close(e, t)


def test_threshold_inplace():
    x = RNG.standard_normal((3, 4))
    e, t = ember.tensor(x), torch.tensor(x)
    F.threshold_(e, 0.1, 20.0)
    TF.threshold_(t, 0.1, 20.0)
    _close(e, t)


def test_gumbel_softmax():
    logits = ember.tensor(RNG.standard_normal((6, 5)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0)
    hard = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(hard.detach().numpy())) <= {0.0, 1.0}
    assert (hard.detach().numpy().sum(-1) == 1).all()
    (hard * ember.arange(5.0)).sum().backward()          # straight-through: a soft gradient
    assert np.abs(logits.grad.numpy()).sum() > 0


def test_channel_shuffle():
    x = RNG.standard_normal((2, 6, 3, 2))
    _both(lambda t: nn.ChannelShuffle(3)(t), lambda t: torch.nn.ChannelShuffle(3)(t), x)
    _close(F.native_channel_shuffle(ember.tensor(x), 2),
           TF.native_channel_shuffle(torch.tensor(x), 2))
    with pytest.raises(RuntimeError, match="divisible by groups. Got 6 channels and 4 groups"):
        F.channel_shuffle(ember.tensor(x), 4)
    with pytest.raises(RuntimeError, match="expects input with > 2 dims"):
        F.channel_shuffle(ember.zeros(6, 3), 3)


@pytest.mark.parametrize("shape,size", [((2, 7, 4, 5), 3), ((2, 7, 4), 4), ((2, 5, 2, 3, 3), 2)])
def test_local_response_norm(shape, size):
    x = RNG.standard_normal(shape)
    _both(lambda t: nn.LocalResponseNorm(size, 1e-2, 0.75, 2.0)(t),
          lambda t: torch.nn.LocalResponseNorm(size, 1e-2, 0.75, 2.0)(t), x)
    with pytest.raises(ValueError, match="Expected 3D or higher"):
        F.local_response_norm(ember.zeros(3), 2)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 9])
def test_cross_map_lrn2d(size):
    x = RNG.standard_normal((2, 7, 3, 2))
    _close(nn.CrossMapLRN2d(size, 1e-2, 0.75, 2.0)(ember.tensor(x)),
           torch.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2.0)(torch.tensor(x)), 1e-12)
    # PyTorch's own backward is not the derivative of its forward (its gradcheck fails):
    # ember's is, by construction; check it numerically
    ex = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: nn.CrossMapLRN2d(size, 1e-2, 0.75, 2.0)(t), (ex,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss(reduction):
    x = RNG.standard_normal((3, 4))
    y = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])
    _both(lambda t: F.multilabel_margin_loss(t, ember.tensor(y), reduction=reduction),
          lambda t: TF.multilabel_margin_loss(t, torch.tensor(y), reduction=reduction), x)
    _both(lambda t: nn.MultiLabelMarginLoss(reduction=reduction)(t, ember.tensor(y[0])),
          lambda t: torch.nn.MultiLabelMarginLoss(reduction=reduction)(t, torch.tensor(y[0])),
          x[0])


def test_multilabel_margin_loss_errors():
    x = ember.randn(3, 4)
    with pytest.raises(RuntimeError, match="'target' is out of range"):
        F.multilabel_margin_loss(x, ember.tensor([[4, 0, -1, 1]] * 3))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multilabel_margin_loss(x, ember.zeros(3, 4))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, ember.zeros(2, 4, dtype=ember.int64))


@pytest.mark.parametrize("chunk", [None, 5])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_linear_cross_entropy(chunk, reduction):
    x = RNG.standard_normal((37, 8))
    w = RNG.standard_normal((50, 8))
    target = RNG.integers(0, 50, 37)
    target[3] = -100
    cw = RNG.uniform(0.5, 2, 50)
    options = None if chunk is None else nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)
    ex, tx = _pair(x)
    ew, tw = _pair(w)
    e = F.linear_cross_entropy(ex, ew, ember.tensor(target), weight=ember.tensor(cw),
                               reduction=reduction, label_smoothing=0.1, options=options)
    t = TF.linear_cross_entropy(tx, tw, torch.tensor(target), weight=torch.tensor(cw),
                                reduction=reduction, label_smoothing=0.1)
    _close(e, t, 1e-10)
    e.sum().backward()
    t.sum().backward()
    _close(ex.grad, tx.grad, 1e-10)
    _close(ew.grad, tw.grad, 1e-10)


def test_linear_cross_entropy_module_and_options():
    m = nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    tm = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    y = RNG.integers(0, 3, (5, 2))
    _close(m(ember.tensor(x), ember.tensor(y)), tm(torch.tensor(x), torch.tensor(y)), 1e-6)
    assert repr(m) == repr(tm)
    with pytest.raises(ValueError, match="invalid acc_policy"):
        nn.LinearCrossEntropyOptions(acc_policy="x")
    with pytest.raises(ValueError, match="batch_chunk_size must be positive"):
        nn.LinearCrossEntropyOptions(batch_chunk_size=0)


def test_adaptive_log_softmax():
    e = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in e.state_dict().items()})
    x = RNG.standard_normal((9, 8)).astype(np.float32)
    y = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2])
    ex, tx = _pair(x)
    eo, to = e(ex, ember.tensor(y)), t(tx, torch.tensor(y))
    _close(eo.output, to.output, 1e-5)
    _close(eo.loss, to.loss, 1e-5)
    eo.loss.backward()
    to.loss.backward()
    _close(ex.grad, tx.grad, 1e-5)
    _close(e.log_prob(ember.tensor(x)), t.log_prob(torch.tensor(x)), 1e-5)
    assert e.predict(ember.tensor(x)).tolist() == t.predict(torch.tensor(x)).tolist()
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 19\\]"):
        e(ember.tensor(x), ember.tensor(y + 5))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 20, [10, 4])


def test_grouped_mm():
    a = RNG.standard_normal((16, 8)).astype(np.float32)
    b = RNG.standard_normal((3, 8, 8)).astype(np.float32)
    offs = np.array([4, 10, 16], dtype=np.int32)
    tb = torch.tensor(b).transpose(-2, -1).contiguous().transpose(-2, -1)
    _close(F.grouped_mm(ember.tensor(a), ember.tensor(b), offs=ember.tensor(offs)),
           TF.grouped_mm(torch.tensor(a), tb, offs=torch.tensor(offs)), 1e-5)
    a3 = RNG.standard_normal((3, 16, 8)).astype(np.float32)
    _close(F.grouped_mm(ember.tensor(a3), ember.tensor(b)), TF.grouped_mm(torch.tensor(a3), tb),
           1e-5)
    with pytest.raises(RuntimeError, match="Offsets have to be int32"):
        F.grouped_mm(ember.tensor(a), ember.tensor(b), offs=ember.tensor([4, 10, 16]))
    ea = ember.tensor(a, requires_grad=True)        # differentiable (PyTorch's CPU one is not)
    F.grouped_mm(ea, ember.tensor(b), offs=ember.tensor(offs)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy()[:4], np.broadcast_to(b[0].sum(1), (4, 8)),
                               rtol=1e-5)
