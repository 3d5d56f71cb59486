"""The conformance suite's NumPy references against PyTorch: the formulas its cases trust
(shifts past the bit width, pooling windows with ceil_mode/dilation/padding/divisors, N-d
convolution and its gradients, the first gradients its second-order cases differentiate,
the law of a second draw without replacement) give PyTorch's numbers, and its large
tensors are past the cutoffs the core and the CPU plugin use."""
import pathlib
import re

import numpy as np
import pytest
import torch

from ember.testing.conformance import _cases_convpool as cp
from ember.testing.conformance import _cases_elementwise as ew
from ember.testing.conformance import _cases_gradgrad as gg
from ember.testing.conformance import _cases_large as large

ROOT = pathlib.Path(__file__).resolve().parents[2]
TF = torch.nn.functional


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("variant", ew.SHIFT_EDGES)
def test_shift_reference_is_torchs(dtype, variant):
    if variant == "negative" and dtype == "uint8":
        pytest.skip("no negative uint8 amount")
    a, s = ew._shift_operands(dtype, variant)
    ta = torch.tensor(a.astype(dtype))
    for left, op in ((True, torch.bitwise_left_shift), (False, torch.bitwise_right_shift)):
        for k in (s if variant == "scalar" else [s]):
            other = k if variant == "scalar" else torch.tensor(np.asarray(k).astype(dtype))
            want = op(ta, other).numpy()
            np.testing.assert_array_equal(ew.np_shift(a.astype(dtype), k, left, dtype), want)


def _pool_input():
    rng = np.random.default_rng(0)
    return (rng.permutation(2 * 3 * 6 * 7).reshape(2, 3, 6, 7) - 100) / 8.0


@pytest.mark.parametrize("variant", sorted(cp._POOL))
def test_pool_reference_is_torchs(variant):
    hx = _pool_input()
    x = torch.tensor(hx)
    k, s, p, d, ceil_mode, include, divisor = cp._POOL[variant]
    for kind in ("max", "avg"):
        if variant not in cp._POOL_VARIANTS[kind]:
            continue
        rows, cols, div, _ = cp._pool_windows(False, kind, variant, 6, 7)
        want, arg = cp.np_pool(hx, kind, rows, cols, div)
        if kind == "max":
            y, idx = TF.max_pool2d(x, k, s, p, dilation=d, ceil_mode=ceil_mode,
                                   return_indices=True)
            np.testing.assert_array_equal(arg, idx.numpy())
        else:
            y = TF.avg_pool2d(x, k, s, p, ceil_mode=ceil_mode, count_include_pad=include,
                              divisor_override=div)
        np.testing.assert_allclose(want, y.numpy(), rtol=1e-12, atol=1e-12)


def test_adaptive_pool_reference_is_torchs():
    hx = _pool_input()
    for out_hw in ((2, 3), (4, 5)):
        rows, cols = cp._adaptive(6, out_hw[0]), cp._adaptive(7, out_hw[1])
        np.testing.assert_allclose(cp.np_pool(hx, "avg", rows, cols)[0],
                                   TF.adaptive_avg_pool2d(torch.tensor(hx), out_hw).numpy())
        y, idx = TF.adaptive_max_pool2d(torch.tensor(hx), out_hw, return_indices=True)
        want, arg = cp.np_pool(hx, "max", rows, cols)
        np.testing.assert_array_equal(want, y.numpy())
        np.testing.assert_array_equal(arg, idx.numpy())


@pytest.mark.parametrize("variant", sorted(cp._CONV))
def test_conv_reference_is_torchs(variant):
    spatial, kernel, s, p, d, g = cp._CONV[variant]
    nd = len(spatial)
    rng = np.random.default_rng(1)
    hx, hw = rng.standard_normal((2, 4) + spatial), rng.standard_normal((4, 4 // g) + kernel)
    hb = rng.standard_normal(4)
    x, w, b = (torch.tensor(v, requires_grad=True) for v in (hx, hw, hb))
    y = getattr(TF, f"conv{nd}d")(x, w, b, stride=s, padding=p, dilation=d, groups=g)
    s, p, d = (cp._per_axis(v, nd) for v in (s, p, d))
    np.testing.assert_allclose(cp.np_conv(hx, hw, hb, s, p, d, g), y.detach().numpy(),
                               rtol=1e-10, atol=1e-10)
    hg = rng.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(hg))
    for want, got in zip(cp.np_conv_backward(hx, hw, hg, s, p, d, g), (x, w, b)):
        np.testing.assert_allclose(want, got.grad.numpy(), rtol=1e-10, atol=1e-10)


# the ops of the second-order cases, in torch (the cases hold ember's)
_TORCH_GRADGRAD = {
    "softmax": lambda x: TF.softmax(x, -1),
    "log_softmax": lambda x: TF.log_softmax(x, 0),
    "layer_norm": lambda x, w, b: TF.layer_norm(x, (4,), w, b, eps=gg.EPS),
    "batch_norm": lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True,
                                                eps=gg.EPS),
    "vector_norm": lambda x: torch.linalg.vector_norm(x),
    "conv1d": lambda x, w, b: TF.conv1d(x, w, b, padding=1, dilation=2),
    "conv2d": lambda x, w, b: TF.conv2d(x, w, b, stride=2, padding=1),
    "matmul": lambda a, b: a @ b,
    "elementwise": lambda a, b: gg._elementwise(torch, a, b),
    "cross_entropy": lambda x: TF.cross_entropy(x, torch.tensor(gg._TARGET)),
}
_GRADGRAD_VARIANTS = [(op, v) for op, vs in gg.GRADGRAD.items() for v in vs]


def test_every_second_order_case_has_a_torch_twin():
    assert sorted(v for _, v in _GRADGRAD_VARIANTS) == sorted(_TORCH_GRADGRAD)


@pytest.mark.parametrize("op,variant", _GRADGRAD_VARIANTS)
def test_gradgrad_references_are_torchs(op, variant):
    """The NumPy first gradients are torch's, and their central differences (the
    reference of the second-order cases) are torch's double backward."""
    shapes, _, np_grads = gg.GRADGRAD[op][variant]
    rng = np.random.default_rng(2)
    hosts = [rng.uniform(-0.9, 0.9, s) for s in shapes]
    xs = [torch.tensor(h, requires_grad=True) for h in hosts]
    y = _TORCH_GRADGRAD[variant](*xs)
    hg = rng.uniform(-0.9, 0.9, tuple(y.shape))
    g = torch.tensor(hg, requires_grad=True)
    first = torch.autograd.grad(y, xs, g, create_graph=True)
    for want, got in zip(np_grads(*hosts, hg), first):
        np.testing.assert_allclose(want, got.detach().numpy(), rtol=1e-10, atol=1e-10)
    hv = [rng.uniform(-0.9, 0.9, s) for s in shapes]
    s = sum((gi * torch.tensor(v)).sum() for gi, v in zip(first, hv))
    second = torch.autograd.grad(s, xs + [g], allow_unused=True)
    arrays = hosts + [hg]
    numeric = gg._numeric_gradient(
        lambda: sum((gi * v).sum() for gi, v in zip(np_grads(*arrays), hv)), arrays)
    for want, got in zip(numeric, second):
        got = np.zeros_like(want) if got is None else got.numpy()
        np.testing.assert_allclose(want, got, rtol=1e-6, atol=1e-7)


def test_multinomial_second_draw_law():
    """P(second = j) = sum_i q_i q_j / (1 - q_i), as the case states, by enumeration."""
    q = np.array([1.0, 2.0, 0.0, 3.0, 4.0]) / 10
    law = np.zeros(5)
    for i in range(5):
        for j in range(5):
            if i != j and q[i] < 1:
                law[j] += q[i] * q[j] / (1 - q[i])
    torch.manual_seed(0)
    s = torch.multinomial(torch.tensor(q).repeat(20000, 1), 2)[:, 1].numpy()
    np.testing.assert_allclose(np.bincount(s, minlength=5) / 20000, law, atol=0.01)


def test_large_cases_are_past_the_cutoffs():
    gil = re.search(r"DEF GIL_CUTOFF = (\d+)", (ROOT / "core/_core_cimports.pxi").read_text())
    par = re.search(r"PARALLEL_CUTOFF = (\d+)",
                    (ROOT / "plugins/cpu/ember_cpu/_strided.pxd").read_text())
    assert int(gil.group(1)) == int(par.group(1)) == large.CUTOFF
    assert large.SHAPE[0] * large.SHAPE[1] > 2 * large.CUTOFF
