"""ember.utils.tensorboard.SummaryWriter writes event files TensorBoard reads back; without
the tensorboard package the import fails naming it."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)


def load(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_scalars_histogram_text(tmp_path):
    from ember.utils.tensorboard import SummaryWriter
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        assert w.get_logdir() == str(tmp_path)
        for step in range(3):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_scalar("acc", ember.tensor(0.5), 7)
        w.add_histogram("weights", ember.tensor([0.1, 0.2, 0.2, 3.0]), 1)
        w.add_text("note", "hello *ember*", 2)
        w.add_scalars("run", {"a": 1.0, "b": 2.0}, 4)
        w.flush()
    acc = load(tmp_path)
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in loss], [1.0, 0.5, 1 / 3], rtol=1e-6)
    assert acc.Scalars("acc")[0].value == 0.5 and acc.Scalars("acc")[0].step == 7
    h = acc.Histograms("weights")[0].histogram_value
    assert h.num == 4 and h.min == pytest.approx(0.1) and h.max == pytest.approx(3.0)
    assert h.sum == pytest.approx(3.5) and sum(h.bucket) == 4
    assert acc.Tensors("note/text_summary")[0].tensor_proto.string_val[0] == b"hello *ember*"
    for k, v in (("a", 1.0), ("b", 2.0)):
        sub = load(tmp_path / f"run_{k}")
        assert sub.Scalars("run")[0].value == v and sub.Scalars("run")[0].step == 4


def test_default_log_dir(tmp_path, monkeypatch):
    from ember.utils.tensorboard import SummaryWriter
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_x")
    w.add_scalar("a", 1, 0)
    w.close()
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_x") and os.listdir(tmp_path / "runs" / run)


def test_missing_tensorboard_names_the_package():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import ember.utils.tensorboard\n"
            "except ImportError as e:\n    print('IMPORTERROR', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "IMPORTERROR" in r.stdout and "pip install tensorboard" in r.stdout, r.stderr
