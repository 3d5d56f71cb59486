"""nn.utils: clip_grad_norm_/clip_grad_value_ and parameter <-> vector conversion,
against torch.nn.utils."""
import math

import numpy as np
import pytest
import torch

import ember
from ember import nn


def grads_pair(bridge, scale=1.0):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,), (2, 2, 2)]
    tp = [torch.nn.Parameter(torch.zeros(s)) for s in shapes]
    ep = [nn.Parameter(ember.zeros(*s)) for s in shapes]
    for t, e in zip(tp, ep):
        g = rng.standard_normal(t.shape) * scale
        t.grad = torch.tensor(g, dtype=torch.float32)
        e.grad = ember.tensor(g, dtype=ember.float32)
    return ep, tp


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(bridge, norm_type, max_norm):
    ep, tp = grads_pair(bridge)
    te = nn.utils.clip_grad_norm_(ep, max_norm, norm_type)
    tt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    assert isinstance(te, ember.Tensor) and te.dim() == 0
    assert te.item() == pytest.approx(tt.item(), rel=1e-5)
    for e, t in zip(ep, tp):
        bridge.close(e.grad, t.grad)


def test_clip_grad_norm_edge_cases(bridge):
    p = nn.Parameter(ember.ones(3))
    assert nn.utils.clip_grad_norm_([p], 1.0).item() == 0     # no grads at all
    p.grad = ember.full((3,), 4.0)
    norm = nn.utils.clip_grad_norm_(p, 1.0)                   # a single tensor
    assert norm.item() == pytest.approx(math.sqrt(48))
    assert p.grad.norm().item() == pytest.approx(1.0, rel=1e-5)
    p.grad = ember.tensor([float("nan"), 1.0, 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    model = nn.Linear(3, 2)
    model(ember.randn(4, 3)).sum().backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), 0.01)      # a generator
    assert total.item() > 0.01
    flat = ember.cat([q.grad.reshape(-1) for q in model.parameters()])
    assert flat.norm().item() == pytest.approx(0.01, rel=1e-3)


def test_clip_grad_value(bridge):
    ep, tp = grads_pair(bridge)
    nn.utils.clip_grad_value_(ep, 0.3)
    torch.nn.utils.clip_grad_value_(tp, 0.3)
    for e, t in zip(ep, tp):
        bridge.close(e.grad, t.grad)


def test_parameters_vector_roundtrip(bridge):
    e = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    bridge.copy_weights(t, e)
    ve = nn.utils.parameters_to_vector(e.parameters())
    vt = torch.nn.utils.parameters_to_vector(t.parameters())
    bridge.close(ve, vt)
    nn.utils.vector_to_parameters(ve * 2, e.parameters())
    torch.nn.utils.vector_to_parameters(vt * 2, t.parameters())
    for a, b in zip(e.parameters(), t.parameters()):
        assert isinstance(a, nn.Parameter)
        bridge.close(a, b)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], e.parameters())


@pytest.mark.parametrize("dtypes", [("float16", "float32"), ("bfloat16", "float32", "float64"),
                                    ("float32", "float16", "float64")])
def test_clip_grad_norm_mixed_dtypes(dtypes):
    for norm_type in (2.0, 1.0, 0, math.inf):
        _check_mixed_dtype_clip(dtypes, norm_type)


def _check_mixed_dtype_clip(dtypes, norm_type):
    # each norm in its own dtype, promoted by the stack: a half first grad must not
    # overflow the total (5e4 * 2 > float16's max) nor round it
    values = [np.full(4, 0.01), np.array([5e4, 5e4, 0.0, 3.0]), np.linspace(-3, 3, 4)]
    out = []
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.zeros(4, dtype=getattr(lib, d))) for d in dtypes]
        for p, v in zip(ps, values):
            p.grad = lib.tensor(v).to(p.dtype)
        total = lib.nn.utils.clip_grad_norm_(ps, 1.0, norm_type)
        out.append((total.item(), str(total.dtype).split(".")[-1],
                    [p.grad.double().tolist() for p in ps]))
    assert out[1][1] == out[0][1]
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    for ge, gt in zip(out[1][2], out[0][2]):
        np.testing.assert_allclose(ge, gt, rtol=1e-3, atol=1e-7)


def test_total_norm_of_one_tensor_with_norm_type_0():
    # the outer norm applies to the single per-tensor norm too: one nonzero norm counts 1
    data = [3.0, 0.0, 4.0, 1.0]
    got = nn.utils.get_total_norm([ember.tensor(data)], 0)
    assert got.item() == torch.nn.utils.get_total_norm([torch.tensor(data)], 0).item() == 1.0
