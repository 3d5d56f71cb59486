"""The examples' models compiled: forward, backward and a few optimizer steps match eager."""
import copy
import os
import sys

import ember.nn as nn
import ember.nn.functional as F
import pytest

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from char_gpt import CharGPT  # noqa: E402


def _mlp():
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 4))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 8, 3), nn.GELU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))


def _gpt():
    return CharGPT(20, 8, d_model=16, n_layers=2, n_heads=2, dropout=0.1)


def _data(name):
    g = ember.Generator().manual_seed(1)
    if name == "mlp":
        return ember.randn(6, 10, generator=g), ember.randint(0, 4, (6,), generator=g)
    if name == "cnn":
        return ember.randn(4, 1, 8, 8, generator=g), ember.randint(0, 5, (4,), generator=g)
    return (ember.randint(0, 20, (3, 8), generator=g),
            ember.randint(0, 20, (3, 8), generator=g))


def _loss(name, model, x, y):
    if name == "gpt":
        return model(x, y)[1]
    return F.cross_entropy(model(x), y)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "gpt"])
def test_training_loop_matches_eager(name, backend, close):
    if backend == "inductor" and name == "cnn":
        pytest.skip("conv/pool are externs: the aot_eager run covers this graph")
    ember.manual_seed(0)
    model = {"mlp": _mlp, "cnn": _cnn, "gpt": _gpt}[name]()
    ref = copy.deepcopy(model)
    compiled = ember.compile(model, backend=backend)
    opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
    opt_ref = ember.optim.AdamW(ref.parameters(), lr=1e-2)
    x, y = _data(name)
    tol = 1e-5 if backend == "aot_eager" else 2e-4
    for step in range(3):
        ember.manual_seed(step)                 # the same dropout masks
        loss = _loss(name, compiled, x, y)
        opt.zero_grad()
        loss.backward()
        ember.manual_seed(step)
        loss_ref = _loss(name, ref, x, y)
        opt_ref.zero_grad()
        loss_ref.backward()
        close(loss, loss_ref, tol)
        for (n, p), p_ref in zip(model.named_parameters(), ref.parameters()):
            close(p.grad, p_ref.grad, tol)
        opt.step()
        opt_ref.step()
    close(list(model.state_dict().values()), list(ref.state_dict().values()), 10 * tol)
    model.eval()
    ref.eval()
    with ember.no_grad():
        close(_loss(name, compiled, x, y), _loss(name, ref, x, y), tol)
