"""Ordinary PyTorch research code runs with `import ember as torch`: a causal Transformer +
LSTM language model trained with worker DataLoader, autocast, GradScaler, gradient
clipping, OneCycleLR, the profiler and a checkpoint round trip (tests/scripts/)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_research_language_model_script():
    script = os.path.join(HERE, "scripts", "research_lm.py")
    r = subprocess.run([sys.executable, "-W", "ignore", script], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok: loss"), r.stdout


def test_the_script_is_plain_pytorch():
    """Its only ember-specific lines are the four imports (so it is really PyTorch code)."""
    with open(os.path.join(HERE, "scripts", "research_lm.py")) as f:
        lines = [ln for ln in f if "ember" in ln and not ln.startswith('"""')]
    assert sorted(ln.split()[1] for ln in lines) == ["ember", "ember.nn", "ember.nn.functional",
                                                    "ember.utils.data"]
