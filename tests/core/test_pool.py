"""Pooling against torch: max (with indices), average and adaptive pooling in 1-d and 2-d,
forward and gradient, over stride/padding/dilation/ceil_mode/count_include_pad/
divisor_override, unbatched and non-contiguous inputs, dtypes, empty batches, errors;
gradcheck and gradgradcheck in float64."""
import ember.nn.functional as EF
import pytest

import ember

CASES = [
    ("max_pool2d", dict(kernel_size=2)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
    ("max_pool2d", dict(kernel_size=2, stride=3, ceil_mode=True)),
    ("avg_pool2d", dict(kernel_size=2)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg_pool2d", dict(kernel_size=(3, 2), padding=(1, 1), ceil_mode=True,
                        count_include_pad=False)),
    ("avg_pool2d", dict(kernel_size=2, padding=1, divisor_override=3)),
    ("adaptive_avg_pool2d", dict(output_size=(4, 3))),
    ("adaptive_avg_pool2d", dict(output_size=(None, 5))),
    ("adaptive_max_pool2d", dict(output_size=(4, 3))),
    ("max_pool1d", dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("avg_pool1d", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("adaptive_avg_pool1d", dict(output_size=4)),
    ("adaptive_max_pool1d", dict(output_size=4)),
]


@pytest.mark.parametrize("name, kw", CASES)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("batched", [True, False])
def test_pool_forward_backward(oracle, device, name, kw, dtype, batched):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    shape = (2, 3, 9, 7) if name.endswith("2d") else (2, 3, 11)
    t = torch.randn(*(shape if batched else shape[1:]), dtype=oracle.torch_dtype(dtype))
    tx = t.requires_grad_(True)
    ex = oracle.from_torch(t.detach(), device).requires_grad_(True)
    r, tr = getattr(EF, name)(ex, **kw), getattr(F, name)(tx, **kw)
    tol = 1e-5 if dtype == ember.float32 else 1e-12
    oracle.assert_matches(r.detach(), tr.detach(), rtol=tol, atol=tol)
    gt = torch.randn_like(tr)
    tr.backward(gt)
    r.backward(oracle.from_torch(gt, device))
    oracle.assert_matches(ex.grad, tx.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("name, kw", [c for c in CASES if "max" in c[0]])
def test_indices_match_torch(oracle, device, name, kw):
    import torch
    import torch.nn.functional as F
    t = torch.randn(2, 3, 9, 7) if name.endswith("2d") else torch.randn(2, 3, 11)
    r, i = getattr(EF, name)(oracle.from_torch(t, device), return_indices=True, **kw)
    tr, ti = getattr(F, name)(t, return_indices=True, **kw)
    oracle.assert_matches(r, tr)
    oracle.assert_matches(i, ti)


def test_noncontiguous_half_and_nan(oracle, device):
    import torch
    import torch.nn.functional as F
    t = torch.randn(2, 3, 8, 10)
    t[0, 1, 2, 3] = float("nan")
    e = oracle.from_torch(t, device).transpose(2, 3).contiguous().transpose(2, 3)
    assert not e.is_contiguous()
    oracle.assert_matches(ember.max_pool2d(e, 3, 2, 1), F.max_pool2d(t, 3, 2, 1))
    oracle.assert_matches(ember.avg_pool2d(e, 2), F.avg_pool2d(t, 2))
    for dt in (ember.float16, ember.bfloat16):
        r = ember.max_pool2d(e.to(dt), 2)
        oracle.assert_matches(r, F.max_pool2d(t.to(oracle.torch_dtype(dt)), 2))


def test_empty_batch(device):
    x = ember.zeros(0, 3, 8, 8, device=device, requires_grad=True)
    for r in (ember.max_pool2d(x, 2), ember.avg_pool2d(x, 2), ember.adaptive_avg_pool2d(x, 3)):
        assert r.shape[0] == 0
        r.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 8, 8)


@pytest.mark.parametrize("fn", [
    lambda x: ember.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda x: ember.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
    lambda x: ember.adaptive_avg_pool2d(x, (2, 3)),
    lambda x: EF.adaptive_max_pool2d(x, (2, 3)),
])
def test_gradcheck(device, fn):
    x = ember.randn(2, 2, 5, 6, dtype=ember.float64, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (x,))


def test_gradgradcheck(device):
    if device != "cpu":
        pytest.skip("gradgradcheck makes its probes on the CPU (any op, not pooling's)")
    x = ember.randn(1, 2, 5, 6, dtype=ember.float64, device=device, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: ember.avg_pool2d(x, 2, 1, 1), (x,))
    assert ember.autograd.gradgradcheck(lambda x: ember.max_pool2d(x, 2) ** 2, (x,))


@pytest.mark.parametrize("call", [
    lambda F, t: F.max_pool2d(t(2, 3, 8, 8), 3, padding=2),
    lambda F, t: F.max_pool2d(t(2, 3, 8, 8), 3, stride=0),
    lambda F, t: F.max_pool2d(t(2, 3), 3),
    lambda F, t: F.max_pool2d(t(2, 3, 2, 2), 3),
    lambda F, t: F.avg_pool2d(t(2, 3, 8, 8), 3, padding=2),
    lambda F, t: F.avg_pool2d(t(2, 3, 2, 2), 3),
    lambda F, t: F.avg_pool2d(t(2, 3, 8, 8), 3, divisor_override=0),
    lambda F, t: F.max_pool2d(t(2, 3, 8, 8), 2, dilation=0),
    lambda F, t: F.adaptive_avg_pool2d(t(2, 3), 2),
    lambda F, t: F.adaptive_avg_pool2d(t(2, 3, 8, 8), (2, 2, 2)),
    lambda F, t: F.max_pool1d(t(2, 3, 8), 3, padding=2),
    lambda F, t: F.avg_pool1d(t(2, 3, 8), 3, padding=2),
    lambda F, t: F.max_pool2d(t(2, 0, 8, 8), 2),
])
def test_errors_match_torch(call):
    import torch
    import torch.nn.functional as F
    with pytest.raises(RuntimeError) as te:
        call(F, torch.randn)
    with pytest.raises(RuntimeError) as ee:
        call(EF, ember.randn)
    assert str(ee.value) == str(te.value).split("\n")[0]


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2),
                                dict(kernel_size=3, stride=1, padding=1, dilation=2),
                                dict(kernel_size=2, stride=2, ceil_mode=True)])
# widths: float32 2x2 rows run eight outputs at a time (8, 13 and 17 outputs: one block,
# a block and an overlapping last block, two and the overlap), fewer than 8 one by one
@pytest.mark.parametrize("hw", [(13, 17), (6, 26), (5, 35), (4, 12)])
def test_max_indices_with_ties_and_nans_match_torch(oracle, device, kw, hw):
    """Windows inside the plane take their own loops (the 2x2 one, the general one); the
    first maximum in row-major order wins, and a NaN beats any number: the last NaN, as
    PyTorch's `val > maxval || isnan(val)`."""
    import torch
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(1)
    t = torch.randint(0, 3, (2, 5) + hw, generator=g).float()       # many ties
    t[torch.rand(t.shape, generator=g) < 0.04] = float("nan")         # some windows 2 NaNs
    r, i = EF.max_pool2d(oracle.from_torch(t, device), return_indices=True, **kw)
    tr, ti = F.max_pool2d(t, return_indices=True, **kw)
    oracle.assert_matches(i, ti)
    oracle.assert_matches(r, tr)                     # NaNs compare equal


@pytest.mark.parametrize("shape, kw", [
    # ceil_mode: the last window may be longer than the input (PyTorch's output size)
    ((4, 1), dict(kernel_size=2, stride=3, ceil_mode=True)),
    ((2, 5), dict(kernel_size=(4, 3), stride=(3, 2), padding=(0, 1), ceil_mode=True)),
    # dilated taps over the padding: windows with no tap inside the input give -inf at
    # the first tap past the padding
    ((1, 1), dict(kernel_size=2, stride=(3, 1), padding=1, dilation=(2, 1))),
    ((1, 5), dict(kernel_size=(2, 4), stride=2, padding=1, dilation=(2, 1))),
])
def test_max_pool_edge_windows_match_torch(oracle, device, shape, kw):
    import torch
    import torch.nn.functional as F
    t = torch.randn(2, 3, *shape)
    r, i = EF.max_pool2d(oracle.from_torch(t, device), return_indices=True, **kw)
    tr, ti = F.max_pool2d(t, return_indices=True, **kw)
    oracle.assert_matches(i, ti)
    oracle.assert_matches(r, tr)
    if kw.get("ceil_mode"):             # average pooling counts its windows the same way
        a = dict(kw, count_include_pad=False)
        oracle.assert_matches(EF.avg_pool2d(oracle.from_torch(t, device), **a),
                              F.avg_pool2d(t, **a))
