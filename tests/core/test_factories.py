"""The factories of core/factories.py (eye, linspace, logspace) against PyTorch."""
import numpy as np
import pytest
import torch

import ember


def pair(shape, device, dtype="float32", seed=0, lo=-3.0, hi=3.0):
    a = np.random.default_rng(seed).uniform(lo, hi, size=shape)
    t = torch.tensor(a, dtype=getattr(torch, dtype))
    return ember.tensor(t.numpy(), device=device), t


@pytest.mark.parametrize("expr", [
    "F.eye(3)", "F.eye(2, 4)", "F.linspace(0, 1, 5)", "F.linspace(-3, 10, 7)",
    "F.linspace(2, 2, 1)", "F.logspace(0, 2, 3)", "F.linspace(0, 1, 4, dtype=F.float64)",
])
def test_factories_match_torch(expr, device, oracle):
    a, ta = pair((4, 3), device, seed=21)
    b, tb = pair((4, 3), device, seed=22)
    got = eval(expr, {"F": ember, "a": a, "b": b})
    want = eval(expr, {"F": torch, "a": ta, "b": tb})
    oracle.assert_matches(got, want, rtol=1e-5, atol=1e-6)
