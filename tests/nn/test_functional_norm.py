"""layer_norm, batch_norm and group_norm against PyTorch: forward, gradients, running
statistics, errors, gradcheck/gradgradcheck."""
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.autograd import gradcheck, gradgradcheck

DTYPES = [ember.float32, ember.float64]


def pair(arr, dtype, device, requires_grad=True):
    """(ember leaf, torch leaf) holding the same values."""
    e = ember.tensor(arr, device=device).to(dtype).requires_grad_(requires_grad)
    t = torch.tensor(arr).to(getattr(torch, dtype.name)).requires_grad_(requires_grad)
    return e, t


def check_grads(pairs, oracle, rtol=None):
    for e, t in pairs:
        if t is not None and t.grad is not None:
            oracle.assert_matches(e.grad, t.grad, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,ns,affine", [
    ((4, 10), (10,), True), ((2, 3, 8), (3, 8), True), ((5, 7), (7,), False),
    ((3, 300), (300,), True), ((0, 6), (6,), True), ((128, 260), (260,), True),
])
def test_layer_norm_matches_torch(device, oracle, dtype, shape, ns, affine):
    rng = np.random.default_rng(0)
    x, tx = pair(rng.normal(size=shape) * 3 + 1, dtype, device)
    w = tw = b = tb = None
    if affine:
        w, tw = pair(rng.normal(size=ns), dtype, device)
        b, tb = pair(rng.normal(size=ns), dtype, device)
    y = F.layer_norm(x, ns, w, b, eps=1e-4)
    ty = TF.layer_norm(tx, ns, tw, tb, eps=1e-4)
    rtol = 1e-4 if dtype == ember.float32 else 1e-10
    oracle.assert_matches(y, ty.detach(), rtol=rtol, atol=rtol)
    g = rng.normal(size=shape)
    y.backward(ember.tensor(g, device=device).to(dtype))
    ty.backward(torch.tensor(g).to(ty.dtype))
    check_grads([(x, tx), (w, tw), (b, tb)], oracle, rtol)


def test_layer_norm_only_some_params_and_noncontiguous(device, oracle):
    rng = np.random.default_rng(1)
    base = rng.normal(size=(6, 4))
    x, tx = pair(base, ember.float64, device)
    w, tw = pair(rng.normal(size=(6,)), ember.float64, device)
    y = F.layer_norm(x.t(), (6,), w, None)          # rows are strided
    ty = TF.layer_norm(tx.t(), (6,), tw, None)
    oracle.assert_matches(y, ty.detach())
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    check_grads([(x, tx), (w, tw)], oracle)


def test_layer_norm_is_top_level_and_native_outputs(device, oracle):
    x = ember.randn(3, 5, device=device, dtype=ember.float64)
    tx = oracle.to_torch(x)
    assert ember.layer_norm is F.layer_norm
    y, mean, rstd = ember.native_layer_norm(x, (5,), None, None, 1e-5)
    ty, tmean, trstd = torch.native_layer_norm(tx, (5,), None, None, 1e-5)
    oracle.assert_matches(y, ty)
    oracle.assert_matches(mean, tmean)
    oracle.assert_matches(rstd, trstd)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_layer_norm_half(device, oracle, dtype):
    x = ember.randn(4, 16, device=device).to(dtype)
    y = F.layer_norm(x, (16,))
    ty = TF.layer_norm(oracle.to_torch(x), (16,))
    oracle.assert_matches(y, ty, rtol=2e-2, atol=2e-2)


def test_layer_norm_errors(device):
    x = ember.randn(3, 5, device=device)
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[4\]"):
        F.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        F.layer_norm(x, (5,), weight=ember.ones(4, device=device))
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        F.layer_norm(x, (5,), bias=ember.ones(3, device=device))
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.layer_norm(ember.ones(3, 5, dtype=ember.int64, device=device), (5,))


def test_layer_norm_gradcheck_and_gradgradcheck(device):
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.normal(size=(3, 4)), device=device, requires_grad=True)
    w = ember.tensor(rng.normal(size=(4,)), device=device, requires_grad=True)
    b = ember.tensor(rng.normal(size=(4,)), device=device, requires_grad=True)
    fn = lambda x, w, b: F.layer_norm(x, (4,), w, b)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_layer_norm_double_backward_matches_torch(device, oracle):
    rng = np.random.default_rng(3)
    x, tx = pair(rng.normal(size=(3, 5)), ember.float64, device)
    w, tw = pair(rng.normal(size=(5,)), ember.float64, device)
    (gx,) = ember.autograd.grad((F.layer_norm(x, (5,), w) ** 3).sum(), (x,), create_graph=True)
    (tgx,) = torch.autograd.grad((TF.layer_norm(tx, (5,), tw) ** 3).sum(), (tx,),
                                 create_graph=True)
    (gx * gx).sum().backward()
    (tgx * tgx).sum().backward()
    check_grads([(x, tx), (w, tw)], oracle, 1e-9)


# --- batch norm ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (4, 3, 6, 5), (16, 32, 8, 8), (32, 200), (5, 64)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_matches_torch(device, oracle, dtype, shape, affine):
    rng = np.random.default_rng(4)
    c = shape[1]
    x, tx = pair(rng.normal(size=shape) * 2 + 0.5, dtype, device)
    w = tw = b = tb = None
    if affine:
        w, tw = pair(rng.normal(size=c), dtype, device)
        b, tb = pair(rng.normal(size=c), dtype, device)
    rm = ember.tensor(rng.normal(size=c), device=device).to(dtype)
    rv = ember.tensor(rng.uniform(0.5, 2, size=c), device=device).to(dtype)
    trm, trv = oracle.to_torch(rm), oracle.to_torch(rv)
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
    ty = TF.batch_norm(tx, trm, trv, tw, tb, training=True, momentum=0.3, eps=1e-3)
    rtol = 1e-4 if dtype == ember.float32 else 1e-10
    oracle.assert_matches(y, ty.detach(), rtol=rtol, atol=rtol)
    oracle.assert_matches(rm, trm, rtol=rtol, atol=rtol)      # updated in place
    oracle.assert_matches(rv, trv, rtol=rtol, atol=rtol)      # with the unbiased variance
    g = rng.normal(size=shape)
    y.backward(ember.tensor(g, device=device).to(dtype))
    ty.backward(torch.tensor(g).to(ty.dtype))
    check_grads([(x, tx), (w, tw), (b, tb)], oracle, 1e-3 if dtype == ember.float32 else 1e-9)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 7), (9, 130)])
def test_batch_norm_eval_matches_torch(device, oracle, shape):
    rng = np.random.default_rng(5)
    c = shape[1]
    x, tx = pair(rng.normal(size=shape), ember.float64, device)
    w, tw = pair(rng.normal(size=c), ember.float64, device)
    b, tb = pair(rng.normal(size=c), ember.float64, device)
    rm = ember.tensor(rng.normal(size=c), device=device)
    rv = ember.tensor(rng.uniform(0.5, 2, size=c), device=device)
    before = rm.clone()
    y = ember.batch_norm(x, rm, rv, w, b)                     # training=False
    ty = TF.batch_norm(tx, oracle.to_torch(rm), oracle.to_torch(rv), tw, tb)
    oracle.assert_matches(y, ty.detach())
    assert ember.equal(rm, before)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    check_grads([(x, tx), (w, tw), (b, tb)], oracle)


def test_batch_norm_without_running_stats_and_noncontiguous(device, oracle):
    rng = np.random.default_rng(6)
    x, tx = pair(rng.normal(size=(3, 4, 5)), ember.float64, device)
    y = F.batch_norm(x.transpose(0, 2), None, None, training=True)     # (5, 4, 3)
    ty = TF.batch_norm(tx.transpose(0, 2), None, None, training=True)
    oracle.assert_matches(y, ty.detach())
    (y ** 3).sum().backward()
    (ty ** 3).sum().backward()
    check_grads([(x, tx)], oracle)


def test_batch_norm_two_training_steps_before_backward(device):
    # running statistics change in place at every step; the graph of the first step must
    # not hold them (PyTorch allows this pattern)
    x = ember.randn(4, 3, device=device, requires_grad=True)
    rm, rv = ember.zeros(3, device=device), ember.ones(3, device=device)
    y1 = F.batch_norm(x, rm, rv, training=True)
    y2 = F.batch_norm(x * 2, rm, rv, training=True)
    (y1.sum() + (y2 * y2).sum()).backward()
    assert x.grad is not None


def test_batch_norm_errors(device):
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(ember.randn(1, 3, device=device), ember.zeros(3, device=device),
                     ember.ones(3, device=device), training=True)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(ember.randn(2, 3, device=device), ember.zeros(4, device=device),
                     ember.ones(3, device=device), training=True)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        F.batch_norm(ember.randn(2, 3, device=device), None, None, ember.ones(2), None, True)
    with pytest.raises(RuntimeError, match="evaluation mode"):
        F.batch_norm(ember.randn(2, 3, device=device), None, None)


def test_batch_norm_gradcheck(device):
    rng = np.random.default_rng(7)
    x = ember.tensor(rng.normal(size=(4, 2, 3)), device=device, requires_grad=True)
    w = ember.tensor(rng.normal(size=2), device=device, requires_grad=True)
    b = ember.tensor(rng.normal(size=2), device=device, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (x, w, b))


# --- group norm ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 2), 2), ((2, 4), 4)])
def test_group_norm_matches_torch(device, oracle, shape, groups):
    rng = np.random.default_rng(8)
    x, tx = pair(rng.normal(size=shape), ember.float64, device)
    w, tw = pair(rng.normal(size=shape[1]), ember.float64, device)
    b, tb = pair(rng.normal(size=shape[1]), ember.float64, device)
    y = F.group_norm(x, groups, w, b)
    ty = TF.group_norm(tx, groups, tw, tb)
    oracle.assert_matches(y, ty.detach())
    (y ** 2).sum().backward()
    (ty ** 2).sum().backward()
    check_grads([(x, tx), (w, tw), (b, tb)], oracle)


def test_group_norm_errors(device):
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ember.randn(2, 6, 4, device=device), 4)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16])
@pytest.mark.parametrize("norm", ["batch", "layer"])
def test_norm_output_changed_in_place_still_backpropagates(device, oracle, dtype, norm):
    """The norms' backward reads their statistics, never their output: ReLU(inplace=True)
    right after BatchNorm (or LayerNorm) is ordinary research code and must not raise
    "modified by an inplace operation" (it did for bfloat16, as under autocast)."""
    rng = np.random.default_rng(0)
    arr = rng.standard_normal((4, 3, 5)).astype(np.float32)
    e, t = pair(arr, dtype, device)
    w = np.linspace(0.5, 1.5, 3 if norm == "batch" else 5).astype(np.float32)
    ew, tw = pair(w, dtype, device)
    if norm == "batch":
        ey = F.batch_norm(e, None, None, ew, None, training=True)
        ty = TF.batch_norm(t, None, None, tw, None, training=True)
    else:
        ey = F.layer_norm(e, (5,), ew)
        ty = TF.layer_norm(t, (5,), tw)
    ey.relu_()
    ty.relu_()
    ey.float().sum().backward()
    ty.float().sum().backward()
    tol = 5e-2 if dtype == ember.bfloat16 else None
    oracle.assert_matches(ey.detach(), ty.detach(), rtol=tol, atol=tol)
    check_grads([(e, t), (ew, tw)], oracle, rtol=tol)


@pytest.mark.parametrize("make", [
    lambda L: L.nn.BatchNorm1d(3), lambda L: L.nn.BatchNorm2d(3), lambda L: L.nn.GroupNorm(1, 3),
    lambda L: L.nn.GroupNorm(3, 3), lambda L: L.nn.InstanceNorm1d(3),
    lambda L: L.nn.LayerNorm(4)])
def test_norm_layers_take_an_empty_batch(make):
    shapes = []
    for L in (ember, torch):
        m = make(L)
        shape = (0, 3, 4) if not isinstance(m, L.nn.BatchNorm1d) else (0, 3)
        shape = (0, 3, 4, 4) if isinstance(m, L.nn.BatchNorm2d) else shape
        x = L.zeros(shape, requires_grad=True)
        y = m(x)
        y.sum().backward()
        stats = [m.running_mean.tolist(), int(m.num_batches_tracked)] \
            if hasattr(m, "running_mean") and m.running_mean is not None else None
        shapes.append((tuple(y.shape), tuple(x.grad.shape), stats))
    assert shapes[0] == shapes[1]
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        ember.nn.BatchNorm1d(3)(ember.zeros(1, 3))


@pytest.mark.parametrize("x", ["float64", "float32", "bfloat16", "float16"])
def test_layer_norm_parameter_dtypes_as_torch_cpu(x):
    # the input's dtype, or float32 for a float16/bfloat16 input; else PyTorch raises
    for w in ("float64", "float32", "bfloat16", "float16", None):
        for b in ("float64", "float32", "bfloat16", None):
            outcomes = []
            for lib in (torch, ember):
                args = [None if d is None else lib.ones(4, dtype=getattr(lib, d))
                        for d in (w, b)]
                try:
                    r = lib.layer_norm(lib.randn(2, 4).to(getattr(lib, x)), (4,), *args)
                    outcomes.append(str(r.dtype).split(".")[1])
                except RuntimeError as e:
                    outcomes.append(str(e))
            assert outcomes[1] == outcomes[0], (w, b)
