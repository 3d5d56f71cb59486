"""softmax, log_softmax and their backward ops against PyTorch: the fused kernel where the
backend has one (cpu, reference), the core's composite otherwise, and the two against each
other; the function and method forms."""
import numpy as np
import pytest
import torch
from ember.core._tensor import _softmax_composite

import ember

FORWARD = [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)]
BACKWARD = [("_softmax_backward_data", torch._softmax_backward_data, torch.softmax),
            ("_log_softmax_backward_data", torch._log_softmax_backward_data,
             torch.log_softmax)]
SHAPES = [((7,), 0), ((3, 37), 1), ((3, 37), 0), ((2, 5, 40), -2), ((4, 1), -1), ((), 0),
          ((), -1), ((0, 3), 1), ((3, 0), 1), ((2, 3, 0), 0)]


def _input(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape) * 4
    t = torch.tensor(data, dtype=torch.float64).to(getattr(torch, dtype.name))
    e = ember.tensor(data, dtype=ember.float64, device=device).to(dtype)
    return e, t


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32,
                                   ember.float64])
@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("name,tf", FORWARD)
def test_forward(device, oracle, name, tf, shape, dim, dtype):
    e, t = _input(shape, dtype, device)
    oracle.assert_matches(getattr(ember, name)(e, dim), tf(t, dim))
    oracle.assert_matches(getattr(e, name)(dim), tf(t, dim))


@pytest.mark.parametrize("name,tf", FORWARD)
def test_non_contiguous_and_dtype_argument(device, oracle, name, tf):
    e, t = _input((6, 9, 10), ember.float32, device)
    e, t = e.permute(2, 0, 1)[:, ::2], t.permute(2, 0, 1)[:, ::2]
    for dim in range(3):
        oracle.assert_matches(getattr(ember, name)(e, dim), tf(t, dim))
        oracle.assert_matches(getattr(ember, name)(e, dim, dtype=ember.float64),
                              tf(t, dim, dtype=torch.float64))
    i = ember.tensor([[1, 2, 3]], device=device)
    oracle.assert_matches(getattr(ember, name)(i, 1, dtype=ember.float32),
                          tf(torch.tensor([[1, 2, 3]]), 1, dtype=torch.float32))
    r = getattr(ember, name)(e, 0)
    assert r.is_contiguous()


@pytest.mark.parametrize("name,tf", FORWARD)
def test_extremes(device, oracle, name, tf):
    inf, nan = float("inf"), float("nan")
    rows = [[1000.0, 0.0, -1000.0], [-inf, 0.0, 1.0], [-inf, -inf, -inf], [inf, 1.0, 2.0],
            [nan, 1.0, 2.0], [-200.0, 0.0, -100.0]]
    oracle.assert_matches(getattr(ember, name)(ember.tensor(rows, device=device), 1),
                          tf(torch.tensor(rows), 1))


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32,
                                   ember.float64])
@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("name,tf,tforward", BACKWARD)
def test_backward(device, oracle, name, tf, tforward, shape, dim, dtype):
    e, t = _input(shape, dtype, device)
    g, tg = _input(shape, dtype, device, seed=1)
    out = tforward(t, dim)
    eout = oracle.from_torch(out, device)
    expected = tf(tg, out, dim, out.dtype)
    oracle.assert_matches(getattr(ember, name)(g, eout, dim, dtype), expected)


@pytest.mark.parametrize("name,tf,tforward", BACKWARD)
def test_backward_non_contiguous(device, oracle, name, tf, tforward):
    e, t = _input((8, 12, 6), ember.float32, device)
    g, tg = _input((8, 12, 6), ember.float32, device, seed=1)
    e, t, g, tg = e.transpose(0, 2), t.transpose(0, 2), g[..., ::1].transpose(0, 2), \
        tg.transpose(0, 2)
    for dim in range(3):
        out = tforward(t, dim)
        eout = oracle.from_torch(out, device).transpose(0, 1).contiguous().transpose(0, 1)
        oracle.assert_matches(getattr(ember, name)(g, eout, dim, ember.float32),
                              tf(tg, out, dim, torch.float32))


def test_errors(device):
    x = ember.tensor([[1, 2]], device=device)
    with pytest.raises(NotImplementedError, match="softmax_lastdim_kernel_impl.*Long"):
        ember.softmax(x, 1)
    with pytest.raises(NotImplementedError, match='"softmax_kernel_impl.*Long'):
        ember.softmax(x, 0)
    with pytest.raises(NotImplementedError, match="log_softmax_lastdim_kernel_impl.*Bool"):
        ember.log_softmax(x > 1, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.softmax(ember.tensor(2.0, device=device), 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.log_softmax(x.float(), 2)
    with pytest.raises(TypeError, match="input"):
        ember.softmax([1.0, 2.0], 0)
    with pytest.raises(TypeError):
        ember.softmax(x.float(), 0.5)
    f = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="same size"):
        ember._softmax_backward_data(f, ember.ones(3, 2, device=device), 1, ember.float32)
    with pytest.raises(RuntimeError, match="same dtype"):
        ember._log_softmax_backward_data(f, f.double(), 1, ember.float32)
    with pytest.raises(NotImplementedError, match="softmax_backward"):
        ember._softmax_backward_data(x, x, 1, ember.int64)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32,
                                   ember.float64])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "_softmax_backward_data",
                                  "_log_softmax_backward_data"])
def test_fused_matches_composite(device, oracle, name, dtype):
    """Whatever the backend runs agrees with the core's composite (identical when the
    backend has no fused kernel)."""
    a, _ = _input((5, 300), dtype, device)
    forward = ember.log_softmax if "log" in name else ember.softmax
    b = forward(a.float(), 1).to(dtype) if "backward" in name else None
    args = (a, b, 1, dtype) if b is not None else (a, 1)
    got, ref = getattr(ember, name)(*args), _softmax_composite(name, a, b, 1)
    oracle.assert_matches(got, oracle.to_torch(ref))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "_softmax_backward_data",
                                  "_log_softmax_backward_data"])
def test_same_bits_at_1_and_2_threads(device, name):
    a, _ = _input((256, 300), ember.float32, device)
    args = (a, ember.softmax(a, 1), 1, ember.float32) if "backward" in name else (a, 1)
    n0 = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = getattr(ember, name)(*args).numpy(force=True)
        ember.set_num_threads(2)
        two = getattr(ember, name)(*args).numpy(force=True)
    finally:
        ember.set_num_threads(n0)
    assert one.tobytes() == two.tobytes()


def test_ops_are_explicit():
    from ember.core._dispatch import get_op
    for name in ("softmax", "log_softmax", "_softmax_backward_data",
                 "_log_softmax_backward_data"):
        assert get_op(name).name == name


@pytest.mark.parametrize("expr", [
    "F.softmax(a, 1)", "F.softmax(a, 0)", "a.softmax(-1)", "F.log_softmax(a, 1)",
    "a.log_softmax(0)",
])
def test_function_and_method_forms(expr, device, oracle):
    oracle.expr_matches(expr, device)


def test_large_logits(device, oracle):
    oracle.assert_matches(ember.softmax(ember.tensor([[1000.0, 0.0]], device=device), 1),
                          torch.softmax(torch.tensor([[1000.0, 0.0]]), 1))
