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
