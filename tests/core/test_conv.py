"""conv1d/conv2d against torch: forward and gradients over stride, padding ('same',
'valid'), dilation, groups, bias, unbatched and non-contiguous inputs, dtypes, empty
batches, errors; gradcheck and gradgradcheck in float64."""
import ember.nn.functional as EF
import pytest

import ember

CASES2 = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
    dict(padding="same"),
    dict(padding="same", dilation=2),
    dict(padding="valid", groups=2),
    dict(stride=3, padding=2, dilation=2, groups=2),
]


def _pair(oracle, device, shape, dtype, requires_grad=True):
    import torch
    t = torch.randn(*shape, dtype=oracle.torch_dtype(dtype))
    e = oracle.from_torch(t, device)
    if requires_grad:
        t.requires_grad_(True)
        e.requires_grad_(True)
    return e, t


@pytest.mark.parametrize("kw", CASES2)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_forward_backward(oracle, device, kw, dtype, bias):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    g = kw.get("groups", 1)
    ex, tx = _pair(oracle, device, (3, 4, 9, 8), dtype)
    ew, tw = _pair(oracle, device, (6, 4 // g, 3, 2), dtype)
    eb, tb = _pair(oracle, device, (6,), dtype) if bias else (None, None)
    r, t = ember.conv2d(ex, ew, eb, **kw), F.conv2d(tx, tw, tb, **kw)
    tol = 1e-4 if dtype == ember.float32 else 1e-10
    oracle.assert_matches(r.detach(), t.detach(), rtol=tol, atol=tol)
    gt = torch.randn_like(t)
    t.backward(gt)
    r.backward(oracle.from_torch(gt, device))
    for e, tt in [(ex, tx), (ew, tw)] + ([(eb, tb)] if bias else []):
        oracle.assert_matches(e.grad, tt.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2),
                                dict(padding="same", groups=3), dict(padding="same")])
def test_conv1d(oracle, device, kw):
    import torch
    import torch.nn.functional as F
    ex, tx = _pair(oracle, device, (2, 6, 11), ember.float64)
    ew, tw = _pair(oracle, device, (3, 6 // kw.get("groups", 1), 4), ember.float64)
    r, t = EF.conv1d(ex, ew, None, **kw), F.conv1d(tx, tw, None, **kw)
    oracle.assert_matches(r.detach(), t.detach())
    gt = torch.randn_like(t)
    t.backward(gt)
    r.backward(oracle.from_torch(gt, device))
    oracle.assert_matches(ex.grad, tx.grad)
    oracle.assert_matches(ew.grad, tw.grad)


def test_unbatched_noncontiguous_half(oracle, device):
    import torch
    import torch.nn.functional as F
    tx = torch.randn(5, 3, 10, dtype=torch.float64).transpose(0, 2)[:, ::1, :]  # [10, 3, 5]
    tw = torch.randn(4, 10, 2, 2, dtype=torch.float64)
    ex = oracle.from_torch(tx.contiguous(), device).transpose(0, 2).contiguous().transpose(0, 2)
    assert not ex.is_contiguous()
    r = ember.conv2d(ex, oracle.from_torch(tw, device), padding=1)
    oracle.assert_matches(r, F.conv2d(tx, tw, padding=1))
    for dt in (ember.float16, ember.bfloat16):
        r = ember.conv2d(ex.to(dt), oracle.from_torch(tw, device).to(dt))
        assert r.dtype == dt
        oracle.assert_matches(r, F.conv2d(tx.to(oracle.torch_dtype(dt)).float(),
                                          tw.to(oracle.torch_dtype(dt)).float()).to(
                                              oracle.torch_dtype(dt)))


def test_empty_batch(device):
    x = ember.zeros(0, 3, 8, 8, device=device, requires_grad=True)
    w = ember.randn(5, 3, 3, 3, device=device, requires_grad=True)
    r = ember.conv2d(x, w, padding=1)
    assert tuple(r.shape) == (0, 5, 8, 8)
    r.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 8, 8)
    assert float(w.grad.abs().sum()) == 0.0


def test_gradcheck_and_gradgradcheck(device):
    x = ember.randn(2, 2, 5, 4, dtype=ember.float64, device=device, requires_grad=True)
    w = ember.randn(4, 1, 2, 3, dtype=ember.float64, device=device, requires_grad=True)
    b = ember.randn(4, dtype=ember.float64, device=device, requires_grad=True)

    def f(x, w, b):
        return ember.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)

    assert ember.autograd.gradcheck(f, (x, w, b))
    if device == "cpu":   # gradgradcheck makes its probes on the CPU (any op, not conv's)
        assert ember.autograd.gradgradcheck(f, (x, w, b))


@pytest.mark.parametrize("args, kw", [
    (((2, 3), (16, 3, 3, 3)), {}),
    (((2, 4, 8, 8), (16, 3, 3, 3)), {}),
    (((2, 4, 8, 8), (3, 2, 3, 3)), dict(groups=2)),
    (((2, 3, 2, 2), (16, 3, 3, 3)), {}),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(stride=2, padding="same")),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(padding="foo")),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(stride=0)),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(padding=-1)),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(dilation=0)),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(groups=0)),
    (((2, 3, 8, 8), (16, 3, 3, 3)), dict(stride=(1, 2, 3))),
])
def test_errors_match_torch(args, kw):
    import torch
    import torch.nn.functional as F
    xs, ws = args
    with pytest.raises(RuntimeError) as te:
        F.conv2d(torch.randn(*xs), torch.randn(*ws), **kw)
    with pytest.raises(RuntimeError) as ee:
        ember.conv2d(ember.randn(*xs), ember.randn(*ws), **kw)
    assert str(ee.value) == str(te.value).split("\n")[0]


def test_bias_and_dtype_errors():
    x, w = ember.randn(2, 3, 8, 8), ember.randn(16, 3, 3, 3)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 16"):
        ember.conv2d(x, w, ember.randn(15))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        ember.conv2d(x.double(), w)
    with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\)"):
        ember.conv2d(x, w, ember.randn(16, dtype=ember.float64))
    with pytest.raises(TypeError, match="argument 'weight' must be Tensor"):
        ember.conv2d(x, [1.0])
    with pytest.raises(RuntimeError, match="Expected 4-dimensional input for 4-dimensional"):
        ember.conv1d(ember.randn(2, 3, 8), w)
    with pytest.raises(NotImplementedError):
        ember.conv2d(x.long(), w.long())
