"""Training on the GPU reaches the CPU's quality: the README's demo and the character GPT
run with --device cuda, and a small model trained step for step on both devices stays
together."""
import os
import re
import subprocess
import sys

import ember.nn as nn
import numpy as np

import ember

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def run_example(name, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout


def test_demo_trains_on_cuda():
    out = run_example("demo.py", "--device", "cuda")
    acc = float(re.search(r"held-out accuracy ([\d.]+)% after", out).group(1))
    assert acc >= 97.0, out[-2000:]
    assert "device cuda" in out


def test_char_gpt_matches_the_cpu_loss():
    losses = {}
    for device in ("cpu", "cuda"):
        out = run_example("char_gpt.py", "--steps", "300", "--device", device)
        losses[device] = float(re.findall(r"step  300  loss ([\d.]+)", out)[-1])
    assert abs(losses["cuda"] - losses["cpu"]) < 0.15, losses
    assert losses["cuda"] < 2.5, losses


def test_mlp_steps_agree_with_the_cpu():
    def make():
        ember.manual_seed(0)
        return nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 5))

    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((128, 20)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 5, 128))
    results = {}
    for device in ("cpu", "cuda"):
        model = make().to(device)
        opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
        xd, yd = x.to(device), y.to(device)
        for _ in range(30):
            loss = nn.functional.cross_entropy(model(xd), yd)
            opt.zero_grad()
            loss.backward()
            opt.step()
        results[device] = [p.detach().cpu().numpy() for p in model.parameters()]
    for a, b in zip(results["cpu"], results["cuda"]):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4)
