"""instance_norm/InstanceNorm1d-3d, BatchNorm3d and rms_norm/RMSNorm against PyTorch:
forward, gradients (input and parameters), running statistics in train and eval, dtypes,
unbatched inputs, state_dicts, warnings and errors."""
import warnings

import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import nn

DTYPES = [ember.float32, ember.float64]


def pair(arr, dtype, requires_grad=True):
    """(ember leaf, torch leaf) holding the same values."""
    e = ember.tensor(np.asarray(arr)).to(dtype).requires_grad_(requires_grad)
    t = torch.tensor(np.asarray(arr)).to(getattr(torch, dtype.name))
    return e, t.requires_grad_(requires_grad)


def tol(dtype):
    return 2e-5 if dtype == ember.float32 else 1e-10


def match(e, t, dtype):
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol(dtype),
                               atol=tol(dtype))


def same_modules(em, tm, dtype):
    """Give both modules the same random affine parameters (torch's values)."""
    rng = np.random.default_rng(1)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(rng.normal(size=tuple(p.shape))))
    tm.to(getattr(torch, dtype.name))
    em.to(dtype)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})


# --- F.instance_norm ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 3), (1, 2, 3, 2, 2), (3, 1, 4)])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("running", [False, True])
def test_instance_norm_matches_torch(dtype, shape, affine, running):
    rng = np.random.default_rng(0)
    c = shape[1]
    x, tx = pair(rng.normal(size=shape) * 2 + 1, dtype)
    w = tw = b = tb = rm = trm = rv = trv = None
    if affine:
        w, tw = pair(rng.normal(size=c), dtype)
        b, tb = pair(rng.normal(size=c), dtype)
    if running:
        rm, trm = pair(rng.normal(size=c), dtype, False)
        rv, trv = pair(rng.uniform(0.5, 2, size=c), dtype, False)
    y = F.instance_norm(x, rm, rv, w, b, True, 0.3, 1e-4)
    ty = TF.instance_norm(tx, trm, trv, tw, tb, True, 0.3, 1e-4)
    match(y, ty, dtype)
    assert y.dtype == dtype
    g = rng.normal(size=shape)
    y.backward(ember.tensor(g, device=y.device).to(dtype))
    ty.backward(torch.tensor(g).to(ty.dtype))
    for e, t in ((x, tx), (w, tw), (b, tb)):
        if t is not None:
            match(e.grad, t.grad, dtype)
    if running:                        # running statistics moved the same way
        match(rm, trm, dtype)
        match(rv, trv, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_instance_norm_with_running_stats_in_eval(dtype):
    rng = np.random.default_rng(2)
    x, tx = pair(rng.normal(size=(2, 3, 4)), dtype)
    rm, trm = pair(rng.normal(size=3), dtype, False)
    rv, trv = pair(rng.uniform(0.5, 2, size=3), dtype, False)
    w, tw = pair(rng.normal(size=3), dtype)
    y = F.instance_norm(x, rm, rv, w, None, use_input_stats=False)
    ty = TF.instance_norm(tx, trm, trv, tw, None, use_input_stats=False)
    match(y, ty, dtype)
    y.sum().backward()
    ty.sum().backward()
    match(x.grad, tx.grad, dtype)
    match(w.grad, tw.grad, dtype)
    match(rm, trm, dtype)              # untouched in eval


def test_instance_norm_errors():
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(ember.randn(2, 3))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(ember.randn(2, 3, 1))
    with pytest.raises(RuntimeError, match="running_mean and running_var to be defined"):
        F.instance_norm(ember.randn(2, 3, 4), use_input_stats=False)
    with pytest.raises(RuntimeError, match="weight"):
        F.instance_norm(ember.randn(2, 3, 4), weight=ember.ones(4))


# --- InstanceNorm modules -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (2, 3, 6)),
                                        ("InstanceNorm2d", (2, 3, 3, 2)),
                                        ("InstanceNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("affine,track", [(False, False), (True, True), (True, False),
                                          (False, True)])
def test_instance_norm_module_train_eval(dtype, name, shape, affine, track):
    em = getattr(nn, name)(3, affine=affine, track_running_stats=track, momentum=0.2)
    tm = getattr(torch.nn, name)(3, affine=affine, track_running_stats=track, momentum=0.2)
    assert list(em.state_dict()) == list(tm.state_dict())
    same_modules(em, tm, dtype)
    rng = np.random.default_rng(3)
    for step in range(2):
        x, tx = pair(rng.normal(size=shape) * 3 + 1, dtype)
        y, ty = em(x), tm(tx)
        match(y, ty, dtype)
        y.pow(2).sum().backward()
        ty.pow(2).sum().backward()
        match(x.grad, tx.grad, dtype)
    for k, v in tm.state_dict().items():
        if v.is_floating_point():
            match(em.state_dict()[k], v, dtype)
    for (k, p), tp in zip(em.named_parameters(), tm.parameters()):
        match(p.grad, tp.grad, dtype)
    em.eval()
    tm.eval()
    x, tx = pair(rng.normal(size=shape), dtype)
    match(em(x), tm(tx), dtype)


@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (3, 5)), ("InstanceNorm2d", (3, 2, 4)),
                                        ("InstanceNorm3d", (3, 2, 2, 3))])
def test_instance_norm_unbatched(name, shape):
    em, tm = getattr(nn, name)(3, affine=True), getattr(torch.nn, name)(3, affine=True)
    same_modules(em, tm, ember.float64)
    x, tx = pair(np.random.default_rng(4).normal(size=shape), ember.float64)
    y, ty = em(x), tm(tx)
    match(y, ty, ember.float64)
    y.sum().backward()
    ty.sum().backward()
    match(em.weight.grad, tm.weight.grad, ember.float64)


def test_instance_norm_module_checks_and_warnings():
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(ember.randn(4))
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.InstanceNorm2d(3)(ember.randn(2, 3, 4, 4, 4))
    with pytest.raises(ValueError, match="expected 4D or 5D input"):
        nn.InstanceNorm3d(3)(ember.randn(2, 3))
    with pytest.raises(ValueError, match=r"size at dim=1 to match num_features \(5\)"):
        nn.InstanceNorm1d(5, affine=True)(ember.randn(2, 3, 4))
    with pytest.warns(UserWarning, match="does not match num_features"):
        y = nn.InstanceNorm1d(5)(ember.randn(2, 3, 4))
    assert tuple(y.shape) == (2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.InstanceNorm1d(3)(ember.randn(2, 3, 4))
    for cls in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
        assert repr(getattr(nn, cls)(3)) == repr(getattr(torch.nn, cls)(3))
        assert (repr(getattr(nn, cls)(4, affine=True, track_running_stats=True))
                == repr(getattr(torch.nn, cls)(4, affine=True, track_running_stats=True)))


def test_instance_norm_old_checkpoint_running_stats_reported():
    m = nn.InstanceNorm1d(3)
    sd = {"running_mean": ember.zeros(3), "running_var": ember.ones(3)}
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        m.load_state_dict(sd)


# --- BatchNorm3d ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm3d_matches_torch(dtype, momentum, affine):
    em = nn.BatchNorm3d(3, momentum=momentum, affine=affine)
    tm = torch.nn.BatchNorm3d(3, momentum=momentum, affine=affine)
    same_modules(em, tm, dtype)
    rng = np.random.default_rng(5)
    for step in range(3):
        x, tx = pair(rng.normal(size=(2, 3, 2, 3, 2)) * 2 - 1, dtype)
        y, ty = em(x), tm(tx)
        match(y, ty, dtype)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        match(x.grad, tx.grad, dtype)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(em.state_dict()[k].numpy(), v.numpy(), rtol=tol(dtype),
                                   atol=tol(dtype))
    for p, tp in zip(em.parameters(), tm.parameters()):
        match(p.grad, tp.grad, dtype)
    em.eval()
    tm.eval()
    x, tx = pair(rng.normal(size=(1, 3, 2, 2, 2)), dtype)
    y, ty = em(x), tm(tx)
    match(y, ty, dtype)
    y.sum().backward()
    ty.sum().backward()
    match(x.grad, tx.grad, dtype)


def test_batch_norm3d_checks():
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        nn.BatchNorm3d(3)(ember.randn(2, 3, 4, 4))
    assert repr(nn.BatchNorm3d(3)) == repr(torch.nn.BatchNorm3d(3))
    m = nn.BatchNorm3d(3)
    m.load_state_dict({k: v for k, v in m.state_dict().items() if "num_batches" not in k})
    assert int(m.num_batches_tracked) == 0        # an old (version 1) checkpoint loads


# --- rms_norm / RMSNorm ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 4), (3, 4)), ((5,), 5),
                                      ((2, 0, 3), (3,))])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_torch(dtype, shape, ns, affine, eps):
    rng = np.random.default_rng(6)
    x, tx = pair(rng.normal(size=shape) * 0.5, dtype)
    w = tw = None
    if affine:
        w, tw = pair(rng.normal(size=ns if isinstance(ns, tuple) else (ns,)), dtype)
    y, ty = F.rms_norm(x, ns, w, eps), TF.rms_norm(tx, ns if isinstance(ns, tuple) else [ns],
                                                   tw, eps)
    match(y, ty, dtype)
    assert y.dtype == dtype
    g = rng.normal(size=shape)
    y.backward(ember.tensor(g, device=y.device).to(dtype))
    ty.backward(torch.tensor(g).to(ty.dtype))
    match(x.grad, tx.grad, dtype)
    if affine:
        match(w.grad, tw.grad, dtype)


def test_rms_norm_default_eps_is_the_dtype_eps():
    # tiny inputs: the result depends on eps, so eps=None must mean finfo(dtype).eps
    for dtype in DTYPES:
        x, tx = pair(np.full((2, 3), 1e-5), dtype)
        match(F.rms_norm(x, (3,)), TF.rms_norm(tx, (3,)), dtype)
    x = ember.randn(2, 4).half()
    assert F.rms_norm(x, (4,), ember.ones(4)).dtype == ember.float16


def test_rms_norm_errors():
    x = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*3\]"):
        F.rms_norm(x, (3,))
    with pytest.raises(RuntimeError, match="weight to be of same shape"):
        F.rms_norm(x, (4,), ember.ones(3))
    with pytest.raises(ValueError, match="at least 4 dimensions"):
        F.rms_norm(x, (2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="at least 1-dimensional"):
        F.rms_norm(x, ())


@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_module(dtype):
    em, tm = nn.RMSNorm([3, 4], eps=1e-4), torch.nn.RMSNorm([3, 4], eps=1e-4)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["weight"]
    np.testing.assert_array_equal(em.weight.detach().numpy(), np.ones((3, 4)))
    same_modules(em, tm, dtype)
    x, tx = pair(np.random.default_rng(7).normal(size=(2, 3, 4)), dtype)
    y, ty = em(x), tm(tx)
    match(y, ty, dtype)
    y.sum().backward()
    ty.sum().backward()
    match(em.weight.grad, tm.weight.grad, dtype)
    match(x.grad, tx.grad, dtype)
    bare = nn.RMSNorm(4, elementwise_affine=False)
    assert bare.weight is None and list(bare.state_dict()) == []
    for args, kw in (((3,), {}), (([2, 3],), {"eps": 1e-3, "elementwise_affine": False})):
        assert repr(nn.RMSNorm(*args, **kw)) == repr(torch.nn.RMSNorm(*args, **kw))
