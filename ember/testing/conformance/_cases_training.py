"""A few SGD steps of a small MLP and of a small CNN on the device must reach the loss the
same run reaches on the CPU (same initial weights, same data)."""
import numpy as np
import pytest

import ember
from ember.testing.conformance._case import case
from ember.testing.conformance._cases_elementwise import _cpu_available
from ember.testing.conformance._data import seeded

nn = ember.nn


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3))


def _cnn():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))


def _losses(model, x, t, device, steps=8):
    model = model.to(device)
    x, t = x.to(device), t.to(device)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


@case("training", "training", ("float32",), ("mlp", "cnn"))
def _training(device, dtype, variant):
    if not _cpu_available():
        pytest.skip("the CPU plugin is not installed: no CPU run to compare with")
    rng = seeded("training", variant)
    shape = (16, 6) if variant == "mlp" else (8, 2, 8, 8)
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32))
    t = ember.tensor(rng.integers(0, 3, shape[0]))
    make = _mlp if variant == "mlp" else _cnn
    ember.manual_seed(0)
    ref_model = make()
    ember.manual_seed(0)
    model = make()
    ref = _losses(ref_model, x, t, "cpu")
    got = _losses(model, x, t, device)
    assert ref[-1] < ref[0], f"the CPU run did not learn: {ref}"
    np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-4,
                               err_msg=f"{variant}: losses on {device} differ from the CPU's")
