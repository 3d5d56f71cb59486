"""ember-cuda's fused convolution and pooling (the `conv` and `pool` table entries) through
ember's public API on "cuda", against PyTorch: conv1d/conv2d (stride, padding, 'same',
dilation, groups, depthwise, 1x1, bias) and nn.Conv2d, forward and every gradient; max,
average and adaptive pooling in 1-d and 2-d with their gradients; float32/float64 (and
float16/bfloat16, which the core computes in float32), non-contiguous inputs, batch 1,
empty batches, and bit-identical gradients run to run.

Convolution references are PyTorch in float64 on the same values (its float32 convolutions
may use TF32); tolerances are relative to each result's largest magnitude."""
import numpy as np
import pytest

import ember

F = ember.nn.functional
DEVICE = "cuda"
RTOL = {ember.float16: 4e-3, ember.bfloat16: 3e-2, ember.float32: 2e-5, ember.float64: 1e-10}
WIDE = [ember.float32, ember.float64]
# PyTorch's note on its own padding='same' with an even kernel
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


@pytest.fixture(autouse=True)
def _full_float32():
    """float32 GEMMs in full precision, whatever the session set."""
    saved = ember.get_float32_matmul_precision()
    ember.set_float32_matmul_precision("highest")
    yield
    ember.set_float32_matmul_precision(saved)


def _pair(oracle, shape, dtype, seed, ref_dtype=None, grad=True, ints=False):
    """(ember tensor on DEVICE, PyTorch tensor on the oracle's device) holding the same values
    (rounded to ``dtype``); the reference in ``ref_dtype`` (default: ``dtype``)."""
    torch = oracle.torch
    g = torch.Generator().manual_seed(seed)
    if ints:            # few distinct values: ties inside pooling windows
        t = torch.randint(0, 4, shape, generator=g).double()
    else:
        t = torch.randn(shape, generator=g, dtype=torch.float64)
    t = t.to(oracle.tdtype(dtype))
    e = oracle.from_torch(t, device=DEVICE)
    ref = t.to(oracle.tdtype(ref_dtype or dtype)).to(oracle.device)
    if grad:
        e.requires_grad_()
        ref.requires_grad_()
    return e, ref


def _close(oracle, e, ref, dtype):
    """ember result ``e`` (device, dtype, shape) matches ``ref`` rounded to ``dtype``."""
    torch = oracle.torch
    assert e.device.type == DEVICE, e.device
    assert e.dtype == dtype, (e.dtype, dtype)
    assert tuple(e.shape) == tuple(ref.shape), (tuple(e.shape), tuple(ref.shape))
    got = oracle.to_torch(e, ref.device).double()
    want = ref.detach().to(oracle.tdtype(dtype)).double()
    finite = want[want.isfinite()]
    scale = max(finite.abs().max().item(), 1.0) if finite.numel() else 1.0
    r = RTOL[dtype]
    torch.testing.assert_close(got, want, rtol=r, atol=r * scale, equal_nan=True)


def _exact(oracle, e, ref):
    np.testing.assert_array_equal(e.cpu().numpy(), ref.detach().cpu().numpy())


def _check_conv(oracle, fn, tfn, xs, ws, dtype, bias=True, **kw):
    """forward, then grad_input, grad_weight and grad_bias through .backward()"""
    x, tx = _pair(oracle, xs, dtype, 1, ember.float64)
    w, tw = _pair(oracle, ws, dtype, 2, ember.float64)
    b, tb = _pair(oracle, (ws[0],), dtype, 3, ember.float64) if bias else (None, None)
    y = fn(x, w, b, **kw)
    ty = tfn(tx, tw, tb, **kw)
    _close(oracle, y, ty, dtype)
    g, tg = _pair(oracle, tuple(ty.shape), dtype, 4, ember.float64, grad=False)
    y.backward(g)
    ty.backward(tg)
    for e, t in ((x, tx), (w, tw), (b, tb)):
        if e is not None:
            _close(oracle, e.grad, t.grad, dtype)


# (input, weight, kwargs): stride, padding, dilation, groups; the 1x1 stride-1 unpadded
# cases skip im2col; planes past 256 positions take several loop steps per thread
CONV2D = [
    ((2, 3, 8, 7), (4, 3, 3, 3), dict(padding=1)),
    ((3, 4, 9, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)),
    ((2, 4, 9, 9), (4, 1, 3, 3), dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=4)),
    ((2, 4, 6, 6), (8, 1, 3, 3), dict(padding=1, groups=4)),
    ((3, 4, 5, 5), (6, 4, 1, 1), dict()),
    ((3, 6, 5, 4), (4, 3, 1, 1), dict(groups=2)),
    ((2, 2, 5, 5), (3, 2, 1, 1), dict(stride=2, padding=(1, 0))),
    ((2, 3, 9, 9), (3, 1, 5, 5), dict(stride=(3, 2), padding=2, groups=3)),
    ((1, 2, 4, 4), (2, 2, 4, 4), dict()),
    ((5, 1, 20, 19), (5, 1, 3, 3), dict(padding=1)),
    ((2, 2, 40, 35), (3, 2, 3, 3), dict(padding=1, dilation=2)),
    ((2, 3, 7, 8), (4, 3, 4, 4), dict(padding="same")),
    ((2, 3, 7, 8), (4, 3, 3, 2), dict(padding="same", dilation=2)),
    ((2, 3, 7, 8), (4, 3, 3, 3), dict(padding="valid", stride=2)),
]


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("xs,ws,kw", CONV2D)
def test_conv2d(oracle, xs, ws, kw, dtype):
    tf = oracle.torch.nn.functional
    _check_conv(oracle, F.conv2d, tf.conv2d, xs, ws, dtype, **kw)


@pytest.mark.parametrize("dtype", WIDE, ids=str)
def test_conv2d_no_bias(oracle, dtype):
    tf = oracle.torch.nn.functional
    _check_conv(oracle, F.conv2d, tf.conv2d, (3, 4, 9, 8), (6, 2, 3, 3), dtype, bias=False,
                stride=2, padding=1, groups=2)


CONV1D = [
    ((2, 3, 17), (4, 3, 3), dict(padding=1)),
    ((3, 4, 20), (6, 2, 4), dict(stride=3, padding=2, dilation=2, groups=2)),
    ((2, 4, 11), (4, 1, 3), dict(groups=4)),
    ((2, 3, 10), (5, 3, 1), dict()),
    ((2, 3, 12), (4, 3, 4), dict(padding="same")),
]


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("xs,ws,kw", CONV1D)
def test_conv1d(oracle, xs, ws, kw, dtype):
    tf = oracle.torch.nn.functional
    _check_conv(oracle, F.conv1d, tf.conv1d, xs, ws, dtype, **kw)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16], ids=str)
def test_conv2d_half_inputs(oracle, dtype):
    tf = oracle.torch.nn.functional
    _check_conv(oracle, F.conv2d, tf.conv2d, (2, 3, 8, 8), (4, 3, 3, 3), dtype, padding=1)


def test_conv2d_noncontiguous(oracle):
    """transposed views of input and weight (the core makes them contiguous)"""
    tf = oracle.torch.nn.functional
    x, tx = _pair(oracle, (2, 3, 7, 9), ember.float32, 1, ember.float64)
    w, tw = _pair(oracle, (4, 3, 3, 3), ember.float32, 2, ember.float64)
    y = F.conv2d(x.transpose(2, 3), w.transpose(2, 3), stride=(2, 1), padding=1)
    ty = tf.conv2d(tx.transpose(2, 3), tw.transpose(2, 3), stride=(2, 1), padding=1)
    _close(oracle, y, ty, ember.float32)
    g, tg = _pair(oracle, tuple(ty.shape), ember.float32, 4, ember.float64, grad=False)
    y.backward(g)
    ty.backward(tg)
    _close(oracle, x.grad, tx.grad, ember.float32)
    _close(oracle, w.grad, tw.grad, ember.float32)


def test_conv2d_batch_one_and_unbatched(oracle):
    tf = oracle.torch.nn.functional
    _check_conv(oracle, F.conv2d, tf.conv2d, (1, 3, 8, 8), (4, 3, 3, 3), ember.float32,
                padding=1)
    _check_conv(oracle, F.conv2d, tf.conv2d, (3, 8, 8), (4, 3, 3, 3), ember.float32, stride=2)


def test_conv2d_empty_batch(oracle):
    """N = 0: the core gives empty outputs and, through its composite, zero gradients"""
    x = ember.zeros((0, 3, 8, 8), device=DEVICE).requires_grad_()
    w, _ = _pair(oracle, (4, 3, 3, 3), ember.float32, 2)
    b, _ = _pair(oracle, (4,), ember.float32, 3)
    y = F.conv2d(x, w, b, padding=1)
    assert tuple(y.shape) == (0, 4, 8, 8) and y.device.type == DEVICE
    y.backward(ember.zeros((0, 4, 8, 8), device=DEVICE))
    assert tuple(x.grad.shape) == (0, 3, 8, 8)
    assert not w.grad.cpu().numpy().any() and not b.grad.cpu().numpy().any()


def _copy_params(oracle, module, tmodule):
    with ember.no_grad():
        for p, tp in zip(module.parameters(), tmodule.parameters()):
            p.copy_(ember.tensor(tp.detach().cpu().numpy()))
    return module.to(DEVICE)


def test_conv2d_module(oracle):
    torch = oracle.torch
    tm = torch.nn.Conv2d(3, 8, (3, 5), stride=(1, 2), padding=(1, 2), dilation=(2, 1),
                         groups=1).double()
    m = _copy_params(oracle, ember.nn.Conv2d(3, 8, (3, 5), stride=(1, 2), padding=(1, 2),
                                             dilation=(2, 1)).double(), tm)
    tm = tm.to(oracle.device)
    x, tx = _pair(oracle, (2, 3, 10, 11), ember.float64, 1)
    y, ty = m(x), tm(tx)
    _close(oracle, y, ty, ember.float64)
    g, tg = _pair(oracle, tuple(ty.shape), ember.float64, 4, grad=False)
    y.backward(g)
    ty.backward(tg)
    _close(oracle, x.grad, tx.grad, ember.float64)
    for p, tp in zip(m.parameters(), tm.parameters()):
        _close(oracle, p.grad, tp.grad, ember.float64)


def _small_cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                         nn.AdaptiveAvgPool2d((3, 3)))


def test_small_cnn_training_step(oracle):
    """conv 1 -> 16 -> 32 3x3 with max, average and adaptive pooling on 28 x 28, batch 32:
    every parameter's gradient"""
    torch = oracle.torch
    torch.manual_seed(0)
    tm = _small_cnn(torch.nn)
    m = _copy_params(oracle, _small_cnn(ember.nn), tm)
    tm = tm.to(oracle.device).double()
    x, tx = _pair(oracle, (32, 1, 28, 28), ember.float32, 1, ember.float64)
    y, ty = m(x), tm(tx)
    _close(oracle, y, ty, ember.float32)
    g, tg = _pair(oracle, tuple(ty.shape), ember.float32, 4, ember.float64, grad=False)
    y.backward(g)
    ty.backward(tg)
    _close(oracle, x.grad, tx.grad, ember.float32)
    for p, tp in zip(m.parameters(), tm.parameters()):
        _close(oracle, p.grad, tp.grad, ember.float32)


def test_conv2d_gradients_deterministic():
    """the same bits twice: weight, bias and input gradients at batch 64"""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
    w0 = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    b0 = rng.standard_normal(32).astype(np.float32)
    g0 = rng.standard_normal((64, 32, 28, 28)).astype(np.float32)

    def grads():
        x = ember.tensor(x0, device=DEVICE).requires_grad_()
        w = ember.tensor(w0, device=DEVICE).requires_grad_()
        b = ember.tensor(b0, device=DEVICE).requires_grad_()
        F.conv2d(x, w, b, padding=1).backward(ember.tensor(g0, device=DEVICE))
        return [t.grad.cpu().numpy() for t in (x, w, b)]

    for a, b in zip(grads(), grads()):
        assert a.tobytes() == b.tobytes()


# -- pooling -------------------------------------------------------------------------------

def _check_pool(oracle, fn, tfn, shape, dtype, args, kw, indices=False, ints=False):
    """forward (values; indices exactly), then the input gradient"""
    x, tx = _pair(oracle, shape, dtype, 1, ints=ints)
    if indices:
        (y, i), (ty, ti) = fn(x, *args, return_indices=True, **kw), \
            tfn(tx, *args, return_indices=True, **kw)
        assert i.dtype == ember.int64
        _exact(oracle, i, ti)
    else:
        y, ty = fn(x, *args, **kw), tfn(tx, *args, **kw)
    _close(oracle, y, ty, dtype)
    g, tg = _pair(oracle, tuple(ty.shape), dtype, 4, grad=False)
    y.backward(g)
    ty.backward(tg)
    _close(oracle, x.grad, tx.grad, dtype)


# (input, kernel_size, kwargs): stride, padding, dilation, ceil_mode; overlapping windows
MAX2D = [
    ((2, 3, 8, 9), 2, dict()),
    ((2, 3, 9, 9), 3, dict(stride=1, padding=1)),
    ((2, 2, 9, 8), (3, 2), dict(stride=(2, 1), padding=1, dilation=(2, 1))),
    ((1, 2, 7, 11), (1, 3), dict(stride=(1, 2), padding=(0, 1), ceil_mode=True)),
    ((2, 3, 10, 9), 3, dict(stride=2, padding=1, ceil_mode=True)),
    ((2, 2, 17, 16), (3, 3), dict(stride=2, dilation=2, ceil_mode=True)),
]


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("shape,k,kw", MAX2D)
def test_max_pool2d(oracle, shape, k, kw, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.max_pool2d, tf.max_pool2d, shape, dtype, (k,), kw, indices=True)


@pytest.mark.parametrize("shape,k,kw", MAX2D[:3])
def test_max_pool2d_ties(oracle, shape, k, kw):
    """few distinct values: the first maximum of a window wins, as PyTorch's"""
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.max_pool2d, tf.max_pool2d, shape, ember.float32, (k,), kw,
                indices=True, ints=True)


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("k,kw", [(3, dict(stride=2, padding=1)),
                                  (2, dict(dilation=3, ceil_mode=True)),
                                  (4, dict(stride=1, padding=2))])
def test_max_pool1d(oracle, k, kw, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.max_pool1d, tf.max_pool1d, (2, 3, 23), dtype, (k,), kw, indices=True)


def test_max_pool2d_nan(oracle):
    """a NaN wins its windows, and its position is the index"""
    torch = oracle.torch
    a = np.arange(2 * 36, dtype=np.float32).reshape(1, 2, 6, 6)
    a[0, 0, 2, 3] = np.nan
    a[0, 1, 5, 0] = np.nan
    x, tx = ember.tensor(a, device=DEVICE), torch.tensor(a, device=oracle.device)
    y, i = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(tx, 3, stride=2, padding=1, return_indices=True)
    _exact(oracle, i, ti)
    _close(oracle, y, ty, ember.float32)


# (input, kernel_size, kwargs): stride, padding, ceil_mode, count_include_pad, divisor
AVG2D = [
    ((2, 3, 8, 9), 2, dict()),
    ((2, 3, 9, 9), 3, dict(stride=1, padding=1)),
    ((2, 3, 9, 9), 3, dict(stride=1, padding=1, count_include_pad=False)),
    ((2, 2, 10, 9), (3, 2), dict(stride=2, padding=1, ceil_mode=True)),
    ((2, 2, 10, 9), (3, 2), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ((2, 2, 10, 9), 3, dict(stride=(2, 1), padding=1, divisor_override=5)),
    ((1, 2, 7, 11), (1, 3), dict(stride=(1, 2), padding=(0, 1), ceil_mode=True)),
]


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("shape,k,kw", AVG2D)
def test_avg_pool2d(oracle, shape, k, kw, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.avg_pool2d, tf.avg_pool2d, shape, dtype, (k,), kw)


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("k,kw", [(3, dict(stride=2, padding=1)),
                                  (3, dict(stride=2, padding=1, count_include_pad=False,
                                           ceil_mode=True)),
                                  (4, dict(stride=1, padding=2))])
def test_avg_pool1d(oracle, k, kw, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.avg_pool1d, tf.avg_pool1d, (2, 3, 23), dtype, (k,), kw)


ADAPTIVE = [(1, 1), (3, 4), (7, 9), (9, 11), (2, 5)]


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("size", ADAPTIVE)
def test_adaptive_avg_pool2d(oracle, size, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.adaptive_avg_pool2d, tf.adaptive_avg_pool2d, (2, 3, 7, 9), dtype,
                (size,), {})


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("size", ADAPTIVE)
def test_adaptive_max_pool2d(oracle, size, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.adaptive_max_pool2d, tf.adaptive_max_pool2d, (2, 3, 7, 9), dtype,
                (size,), {}, indices=True)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16], ids=str)
def test_pool_half_inputs(oracle, dtype):
    tf = oracle.torch.nn.functional
    _check_pool(oracle, F.max_pool2d, tf.max_pool2d, (2, 3, 9, 9), dtype, (3,),
                dict(stride=2, padding=1), indices=True)
    _check_pool(oracle, F.avg_pool2d, tf.avg_pool2d, (2, 3, 9, 9), dtype, (3,),
                dict(stride=2, padding=1))
    _check_pool(oracle, F.adaptive_avg_pool2d, tf.adaptive_avg_pool2d, (2, 3, 9, 9), dtype,
                ((4, 4),), {})


def test_pool_noncontiguous_and_unbatched(oracle):
    tf = oracle.torch.nn.functional
    x, tx = _pair(oracle, (2, 3, 9, 8), ember.float32, 1)
    y, i = F.max_pool2d(x.transpose(2, 3), 3, stride=2, padding=1, return_indices=True)
    ty, ti = tf.max_pool2d(tx.transpose(2, 3), 3, stride=2, padding=1, return_indices=True)
    _exact(oracle, i, ti)
    _close(oracle, y, ty, ember.float32)
    g, tg = _pair(oracle, tuple(ty.shape), ember.float32, 4, grad=False)
    y.backward(g)
    ty.backward(tg)
    _close(oracle, x.grad, tx.grad, ember.float32)
    _check_pool(oracle, F.avg_pool2d, tf.avg_pool2d, (3, 9, 8), ember.float32, (2,), {})
    _check_pool(oracle, F.adaptive_max_pool2d, tf.adaptive_max_pool2d, (3, 9, 8),
                ember.float32, ((4, 3),), {}, indices=True)


def test_pool_empty_batch():
    x = ember.zeros((0, 3, 8, 8), device=DEVICE).requires_grad_()
    for y in (F.max_pool2d(x, 2), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 3),
              F.adaptive_max_pool2d(x, 3)):
        assert y.shape[0] == 0 and y.device.type == DEVICE
        y.backward(ember.zeros(tuple(y.shape), device=DEVICE))
        assert tuple(x.grad.shape) == (0, 3, 8, 8)


def test_pool_backward_deterministic():
    """overlapping windows: gathers, so the same bits twice"""
    x0 = np.random.default_rng(1).integers(0, 3, (8, 4, 33, 31)).astype(np.float32)
    ops = (lambda t: F.max_pool2d(t, 3, stride=1, padding=1),
           lambda t: F.avg_pool2d(t, 3, stride=1, padding=1),
           lambda t: F.adaptive_max_pool2d(t, (20, 40)))

    def grad(fn):
        x = ember.tensor(x0, device=DEVICE).requires_grad_()
        y = fn(x)
        g = np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(np.float32)
        y.backward(ember.tensor(g, device=DEVICE))
        return x.grad.cpu().numpy()

    for fn in ops:
        assert grad(fn).tobytes() == grad(fn).tobytes()
