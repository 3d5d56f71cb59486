"""A few SGD steps of a small MLP and of a small CNN on the device must reach the loss the
same run reaches on the CPU (same initial weights, same data): in float32, and in mixed
precision (autocast on the device, a GradScaler that must skip an overflowed step)."""
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


# --- mixed precision: autocast on the device and a GradScaler loop -----------------------

def _amp_run(model, x, t, device, dtype, steps=8, overflow_at=3):
    """(losses, scales, the first output's dtype) of SGD under autocast(device type, dtype)
    with a GradScaler; at step `overflow_at` a gradient is made infinite, so the scaler
    must skip that step and halve its scale."""
    kind = ember.device(device).type
    model, x, t = model.to(device), x.to(device), t.to(device)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = ember.amp.GradScaler(kind, init_scale=2.0 ** 10, growth_interval=3)
    losses, scales, out_dtype = [], [], None
    for step in range(steps):
        opt.zero_grad()
        with ember.autocast(kind, dtype=getattr(ember, dtype)):
            out = model(x)
            loss = nn.functional.cross_entropy(out, t)
        out_dtype = out_dtype or out.dtype
        scaler.scale(loss).backward()
        if step == overflow_at:
            next(model.parameters()).grad.fill_(float("inf"))
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
    return np.array(losses), scales, out_dtype


@case("training", "amp", ("float16", "bfloat16"), ("mlp", "cnn"))
def _amp(device, dtype, variant):
    if not _cpu_available():
        pytest.skip("the CPU plugin is not installed: no CPU run to compare with")
    rng = seeded("training", "amp", variant)
    shape = (16, 6) if variant == "mlp" else (8, 2, 8, 8)
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32))
    t = ember.tensor(rng.integers(0, 3, shape[0]))
    make = _mlp if variant == "mlp" else _cnn
    runs = []
    for dev in ("cpu", device):
        ember.manual_seed(0)
        runs.append(_amp_run(make(), x, t, dev, dtype))
    (ref, ref_scales, _), (got, scales, out_dtype) = runs
    assert out_dtype == getattr(ember, dtype), \
        f"the model's output under autocast on {device} is {out_dtype}, expected {dtype}"
    assert ref[-1] < ref[0], f"the CPU run did not learn: {ref}"
    assert scales == ref_scales, f"GradScaler scales on {device} {scales} != CPU's {ref_scales}"
    assert scales[3] == scales[2] / 2, f"the infinite gradient did not halve the scale: {scales}"
    np.testing.assert_allclose(got, ref, rtol=0.03 if dtype == "bfloat16" else 0.01, atol=1e-3,
                               err_msg=f"{variant}: AMP losses on {device} differ from the "
                                       f"CPU's")
