"""The fused row kernels on "cuda" against PyTorch: softmax/log_softmax and their backward
ops over every row plan (lanes, warp, block, streamed; strided, misaligned, NaN/inf rows),
layer norm and batch norm forward and backward (running statistics, nn.BatchNorm2d), nll
and cross-entropy (weights, ignore_index, reductions, label smoothing, target errors), and
the same bits twice for the column sums of layer norm's weight gradient."""
import ember.nn.functional as F
import numpy as np
import pytest

import ember

FLOATS = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
ROW_NORMS = [ember.float32, ember.float64]


def pair(oracle, arr, dtype, requires_grad=False):
    """(ember tensor on cuda, torch tensor on the oracle's device) of the same values."""
    torch = oracle.torch
    e = ember.tensor(np.asarray(arr, np.float64), device="cuda").to(dtype)
    t = torch.tensor(np.asarray(arr, np.float64)).to(oracle.tdtype(dtype)).to(oracle.device)
    if requires_grad:
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def rtol(dtype):
    return {ember.float16: 4e-3, ember.bfloat16: 3e-2, ember.float32: 1e-4}.get(dtype, 1e-10)


def grad_of(e, t, rng, oracle):
    """Backpropagate the same random gradient through ember result e and torch result t."""
    g = rng.standard_normal(tuple(t.shape))
    ge, gt = pair(oracle, g, e.dtype)
    e.backward(ge)
    t.backward(gt)


# --- softmax -----------------------------------------------------------------------------------

# (shape, dim): row lengths 1..20000 cover every plan (1..16 lanes, a warp with 1..32
# elements a lane, a block with 8 or 16, streamed); dims not last give strided rows
SOFTMAX_SHAPES = [((37, 1), 1), ((37, 5), 1), ((9, 32), -1), ((9, 33), -1), ((11, 1000), 1),
                  ((4096, 1024), -1), ((3, 3000), 1), ((3, 5000), -1), ((2, 20000), 1),
                  ((4, 50, 6), 1), ((2, 1500, 3), 1), ((6, 7, 5), 0), ((2, 3, 4, 64), 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", SOFTMAX_SHAPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_forward_and_backward(oracle, name, shape, dim, dtype):
    rng = np.random.default_rng(0)
    e, t = pair(oracle, rng.standard_normal(shape) * 4, dtype, requires_grad=True)
    y = getattr(ember, name)(e, dim)
    ty = getattr(oracle.torch, name)(t, dim)
    oracle.assert_matches(y, ty.detach(), rtol=rtol(dtype), atol=rtol(dtype))
    grad_of(y, ty, rng, oracle)
    oracle.assert_matches(e.grad, t.grad, rtol=rtol(dtype) * 4, atol=rtol(dtype) * 4)


@pytest.mark.parametrize("dtype", [ember.float16, ember.float32])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_non_contiguous_and_misaligned(oracle, name, dtype):
    rng = np.random.default_rng(1)
    e, t = pair(oracle, rng.standard_normal((24, 1025)), dtype)
    for ev, tv in [(e[:, 1:], t[:, 1:]), (e[::2, 1:513], t[::2, 1:513]), (e.t(), t.t()),
                   (e[3:7, 1:], t[3:7, 1:])]:
        for dim in (0, 1):
            oracle.assert_matches(getattr(F, name)(ev, dim), getattr(oracle.torch, name)(tv, dim),
                                  rtol=rtol(dtype), atol=rtol(dtype))
    oracle.assert_matches(getattr(e, name)(1), getattr(t, name)(1), rtol=rtol(dtype),
                          atol=rtol(dtype))


@pytest.mark.parametrize("n", [3, 40, 700, 3000, 12000])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_extremes(oracle, name, n):
    inf, nan = float("inf"), float("nan")
    rows = np.random.default_rng(2).standard_normal((6, n))
    rows[0, 1] = nan                     # a NaN row
    rows[1, 2] = inf                     # an +inf row: NaN
    rows[2, :] = -inf                    # only -inf: NaN
    rows[3, : n - 1] = -inf              # one finite element
    rows[4, 0] = 1000.0
    rows[5, :] = -300.0
    e, t = pair(oracle, rows, ember.float32)
    oracle.assert_matches(getattr(ember, name)(e, 1), getattr(oracle.torch, name)(t, 1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((5, 9000), 1), ((8, 12, 6), 1)])
@pytest.mark.parametrize("name,forward", [("_softmax_backward_data", "softmax"),
                                          ("_log_softmax_backward_data", "log_softmax")])
def test_softmax_backward_data(oracle, name, forward, shape, dim, dtype):
    rng = np.random.default_rng(3)
    _, tx = pair(oracle, rng.standard_normal(shape), dtype)
    g, tg = pair(oracle, rng.standard_normal(shape), dtype)
    tout = getattr(oracle.torch, forward)(tx, dim)
    out = oracle.from_torch(tout)
    expected = getattr(oracle.torch, name)(tg, tout, dim, tout.dtype)
    oracle.assert_matches(getattr(ember, name)(g, out, dim, dtype), expected,
                          rtol=rtol(dtype), atol=rtol(dtype))


# --- layer norm --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ROW_NORMS + [ember.float16])
@pytest.mark.parametrize("shape,ns", [((16, 384), (384,)), ((8, 1024), (1024,)),
                                      ((37, 65), (65,)), ((4, 3000), (3000,)),
                                      ((2, 10000), (10000,)), ((2, 3, 8), (3, 8)),
                                      ((1, 1), (1,)), ((0, 6), (6,))])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
def test_layer_norm(oracle, dtype, shape, ns, affine):
    rng = np.random.default_rng(4)
    x, tx = pair(oracle, rng.standard_normal(shape) * 3 + 1, dtype, requires_grad=True)
    w, tw = pair(oracle, rng.standard_normal(ns), dtype, True) if affine[0] else (None, None)
    b, tb = pair(oracle, rng.standard_normal(ns), dtype, True) if affine[1] else (None, None)
    y = F.layer_norm(x, ns, w, b, eps=1e-5)
    ty = oracle.torch.nn.functional.layer_norm(tx, ns, tw, tb, eps=1e-5)
    tol = rtol(dtype) * 4
    oracle.assert_matches(y, ty.detach(), rtol=tol, atol=tol)
    grad_of(y, ty, rng, oracle)
    gtol = 1e-2 if dtype == ember.float16 else 1e-3 if dtype == ember.float32 else 1e-9
    for e, t in [(x, tx), (w, tw), (b, tb)]:
        if e is not None:
            oracle.assert_matches(e.grad, t.grad, rtol=gtol, atol=gtol)


def test_layer_norm_non_contiguous(oracle):
    rng = np.random.default_rng(5)
    x, tx = pair(oracle, rng.standard_normal((256, 40)), ember.float32, requires_grad=True)
    w, tw = pair(oracle, rng.standard_normal(256), ember.float32, requires_grad=True)
    y = F.layer_norm(x.t(), (256,), w, None)
    ty = oracle.torch.nn.functional.layer_norm(tx.t(), (256,), tw, None)
    oracle.assert_matches(y, ty.detach(), rtol=1e-4, atol=1e-4)
    grad_of(y, ty, rng, oracle)
    oracle.assert_matches(x.grad, tx.grad, rtol=1e-3, atol=1e-3)
    oracle.assert_matches(w.grad, tw.grad, rtol=1e-3, atol=1e-3)


def test_layer_norm_weight_grad_is_deterministic():
    rng = np.random.default_rng(6)
    x = ember.tensor(rng.standard_normal((4096, 512)).astype(np.float32), device="cuda")
    g = ember.tensor(rng.standard_normal((4096, 512)).astype(np.float32), device="cuda")
    grads = []
    for _ in range(2):
        w = ember.ones(512, device="cuda").requires_grad_()
        b = ember.zeros(512, device="cuda").requires_grad_()
        F.layer_norm(x, (512,), w, b).backward(g)
        grads.append((w.grad.cpu().numpy(), b.grad.cpu().numpy()))
    assert np.array_equal(grads[0][0], grads[1][0])
    assert np.array_equal(grads[0][1], grads[1][1])


# --- batch norm --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ROW_NORMS)
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (16, 32, 8, 8), (2, 4, 3000), (600, 7)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training(oracle, dtype, shape, affine):
    rng = np.random.default_rng(7)
    c = shape[1]
    x, tx = pair(oracle, rng.standard_normal(shape) * 2 + 0.5, dtype, requires_grad=True)
    w, tw = pair(oracle, rng.standard_normal(c), dtype, True) if affine else (None, None)
    b, tb = pair(oracle, rng.standard_normal(c), dtype, True) if affine else (None, None)
    rm, trm = pair(oracle, rng.standard_normal(c), dtype)
    rv, trv = pair(oracle, rng.uniform(0.5, 2, c), dtype)
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
    ty = oracle.torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, training=True,
                                               momentum=0.3, eps=1e-3)
    tol = 1e-4 if dtype == ember.float32 else 1e-10
    oracle.assert_matches(y, ty.detach(), rtol=tol, atol=tol)
    oracle.assert_matches(rm, trm, rtol=tol, atol=tol)
    oracle.assert_matches(rv, trv, rtol=tol, atol=tol)
    grad_of(y, ty, rng, oracle)
    gtol = 1e-3 if dtype == ember.float32 else 1e-9
    for e, t in [(x, tx), (w, tw), (b, tb)]:
        if e is not None:
            oracle.assert_matches(e.grad, t.grad, rtol=gtol, atol=gtol)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 7), (8, 16, 10, 10)])
def test_batch_norm_eval(oracle, shape):
    rng = np.random.default_rng(8)
    c = shape[1]
    x, tx = pair(oracle, rng.standard_normal(shape), ember.float64, requires_grad=True)
    w, tw = pair(oracle, rng.standard_normal(c), ember.float64, requires_grad=True)
    b, tb = pair(oracle, rng.standard_normal(c), ember.float64, requires_grad=True)
    rm, trm = pair(oracle, rng.standard_normal(c), ember.float64)
    rv, trv = pair(oracle, rng.uniform(0.5, 2, c), ember.float64)
    y = F.batch_norm(x, rm, rv, w, b)
    ty = oracle.torch.nn.functional.batch_norm(tx, trm, trv, tw, tb)
    oracle.assert_matches(y, ty.detach())
    oracle.assert_matches(rm, trm)                    # unchanged
    grad_of(y, ty, rng, oracle)
    for e, t in [(x, tx), (w, tw), (b, tb)]:
        oracle.assert_matches(e.grad, t.grad)


def test_batch_norm2d_module(oracle):
    torch = oracle.torch
    rng = np.random.default_rng(9)
    m = ember.nn.BatchNorm2d(6).to("cuda")
    tm = torch.nn.BatchNorm2d(6).to(oracle.device).double()
    m = m.to(ember.float64)
    for step in range(2):
        x, tx = pair(oracle, rng.standard_normal((4, 6, 5, 5)) * 3 + step, ember.float64, True)
        y, ty = m(x), tm(tx)
        oracle.assert_matches(y, ty.detach())
        grad_of(y, ty, rng, oracle)
        oracle.assert_matches(x.grad, tx.grad)
    oracle.assert_matches(m.running_mean, tm.running_mean)
    oracle.assert_matches(m.running_var, tm.running_var)
    oracle.assert_matches(m.weight.grad, tm.weight.grad)
    oracle.assert_matches(m.bias.grad, tm.bias.grad)
    m.eval()
    tm.eval()
    x, tx = pair(oracle, rng.standard_normal((3, 6, 4, 4)), ember.float64)
    oracle.assert_matches(m(x), tm(tx).detach())


# --- nll and cross-entropy ---------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("dtype", ROW_NORMS)
@pytest.mark.parametrize("shape", [(6, 5), (64, 1000), (16, 3000), (4, 50000), (4, 3, 2)])
@pytest.mark.parametrize("weighted,reduction", [(False, "mean"), (True, "none"), (True, "sum"),
                                                (True, "mean")])
def test_class_index_losses(oracle, fn, dtype, shape, weighted, reduction):
    torch = oracle.torch
    rng = np.random.default_rng(10)
    c = shape[1]
    x, tx = pair(oracle, rng.standard_normal(shape) * 2, dtype, requires_grad=True)
    tgt = rng.integers(0, c, (shape[0],) + shape[2:])
    tgt.reshape(-1)[::3] = -100
    t, tt = ember.tensor(tgt, device="cuda"), torch.tensor(tgt).to(oracle.device)
    w, tw = pair(oracle, rng.uniform(0.2, 2, c), dtype) if weighted else (None, None)
    xin, txin = (x, tx) if fn == "cross_entropy" else (x.log_softmax(1), tx.log_softmax(1))
    e = getattr(F, fn)(xin, t, weight=w, reduction=reduction)
    r = getattr(torch.nn.functional, fn)(txin, tt, weight=tw, reduction=reduction)
    tol = 1e-4 if dtype == ember.float32 else 1e-10
    oracle.assert_matches(e, r.detach(), rtol=tol, atol=tol)
    grad_of(e, r, rng, oracle)
    oracle.assert_matches(x.grad, tx.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_ignore_index_and_label_smoothing(oracle, ignore_index, smoothing):
    torch = oracle.torch
    rng = np.random.default_rng(11)
    x, tx = pair(oracle, rng.standard_normal((32, 7)), ember.float32, requires_grad=True)
    tgt = rng.integers(0, 7, 32)
    tgt[::4] = ignore_index
    t, tt = ember.tensor(tgt, device="cuda"), torch.tensor(tgt).to(oracle.device)
    e = F.cross_entropy(x, t, ignore_index=ignore_index, label_smoothing=smoothing)
    r = torch.nn.functional.cross_entropy(tx, tt, ignore_index=ignore_index,
                                          label_smoothing=smoothing)
    oracle.assert_matches(e, r.detach(), rtol=1e-4, atol=1e-4)
    grad_of(e, r, rng, oracle)
    oracle.assert_matches(x.grad, tx.grad, rtol=1e-4, atol=1e-4)


def test_target_out_of_bounds(oracle):
    x, _ = pair(oracle, np.random.default_rng(12).standard_normal((3, 5)), ember.float32)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(x, ember.tensor([0, 7, 1], device="cuda"))
    with pytest.raises(IndexError, match="Target -2 is out of bounds."):
        F.nll_loss(x, ember.tensor([0, 1, -2], device="cuda"))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, ember.tensor([-100, 5, 9], device="cuda"))
    # the error slot is clear again: a good call afterwards works
    r = F.cross_entropy(x, ember.tensor([0, 4, 1], device="cuda"), reduction="none")
    assert tuple(r.shape) == (3,)
