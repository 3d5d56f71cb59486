"""matmul on the GPU (cuBLAS; integers by a kernel of ember's) against PyTorch on the GPU:
dtypes, transposed and strided operands, batch broadcasting, vectors, empty sizes, the
TF32 switch, and gradients."""
import numpy as np
import pytest

import ember

SHAPES = [((3, 4), (4, 5)), ((7,), (7, 2)), ((2, 7), (7,)), ((7,), (7,)),
          ((2, 3, 4), (4, 6)), ((5, 1, 3, 4), (2, 4, 3)), ((0, 4), (4, 3)), ((3, 0), (0, 2)),
          ((64, 128), (128, 96))]


def rand(shape, dt, oracle, seed=0):
    arr = np.random.default_rng(seed).standard_normal(shape)
    if not dt.is_floating_point:
        arr = np.round(arr * 4)
    return (ember.tensor(arr).to(dt).cuda(),
            oracle.torch.tensor(arr).to(oracle.tdtype(dt)).to(oracle.device))


@pytest.mark.parametrize("dt", [ember.float16, ember.bfloat16, ember.float32, ember.float64,
                                ember.int32, ember.int64, ember.uint8])
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul(sa, sb, dt, oracle):
    ea, ta = rand(sa, dt, oracle, 1)
    eb, tb = rand(sb, dt, oracle, 2)
    if dt == ember.uint8:
        ea, ta, eb, tb = ea.abs(), ta.abs(), eb.abs(), tb.abs()
    tol = {ember.float16: 1e-2, ember.bfloat16: 5e-2, ember.float32: 1e-4}.get(dt)
    if not dt.is_floating_point:          # PyTorch's CUDA has no integer matmul: the CPU's
        cpu = ea.cpu() @ eb.cpu()
        got = ea @ eb
        assert got.device.type == "cuda" and got.dtype == cpu.dtype
        np.testing.assert_array_equal(got.cpu().numpy(), cpu.numpy())
        return
    oracle.assert_matches(ea @ eb, ta @ tb, rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", [ember.float32, ember.float64])
def test_strided_operands(dt, oracle):
    ea, ta = rand((6, 5), dt, oracle, 3)
    eb, tb = rand((7, 6), dt, oracle, 4)
    oracle.assert_matches(ea.t() @ eb.t(), ta.t() @ tb.t())                 # both transposed
    oracle.assert_matches(ea[::2].t() @ eb[:6:2, ::2], ta[::2].t() @ tb[:6:2, ::2])  # no unit stride
    ec, tc = rand((3, 6, 5), dt, oracle, 5)
    oracle.assert_matches(ec.transpose(1, 2) @ ec, tc.transpose(1, 2) @ tc)
    oracle.assert_matches(ember.bmm(ec, ec.transpose(1, 2)), tc @ tc.transpose(1, 2))
    out = ember.empty(6, 6, dtype=dt, device="cuda")
    ember.matmul(ea, ea.t(), out=out)
    oracle.assert_matches(out, ta @ ta.t())
    oracle.assert_matches(ember.addmm(ea[:, :1], ea, ea.t()[:, :1], beta=0.5, alpha=2),
                          oracle.torch.addmm(ta[:, :1], ta, ta.t()[:, :1], beta=0.5, alpha=2))


def test_tf32_switch(oracle):
    a = ember.randn(512, 512, device="cuda")
    ref = (a.double() @ a.double()).float()
    exact = a @ a
    try:
        ember.backends.cuda.matmul.allow_tf32 = True
        assert ember.get_float32_matmul_precision() == "high"
        fast = a @ a
    finally:
        ember.set_float32_matmul_precision("highest")
    err_exact = (exact - ref).abs().max().item()
    err_fast = (fast - ref).abs().max().item()
    assert err_exact < 1e-3 < err_fast < 1.0, (err_exact, err_fast)


def test_linear_gradients(oracle):
    torch = oracle.torch
    ex, tx = rand((8, 16), ember.float32, oracle, 6)
    ew, tw = rand((4, 16), ember.float32, oracle, 7)
    eb, tb = rand((4,), ember.float32, oracle, 8)
    for t in (ex, ew, eb):
        t.requires_grad_(True)
    for t in (tx, tw, tb):
        t.requires_grad_(True)
    ember.nn.functional.linear(ex, ew, eb).tanh().sum().backward()
    torch.nn.functional.linear(tx, tw, tb).tanh().sum().backward()
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        assert e.grad.device.type == "cuda"
        oracle.assert_matches(e.grad, t.grad, rtol=1e-4, atol=1e-4)
