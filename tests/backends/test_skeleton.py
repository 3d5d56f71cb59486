"""python -m ember.backends new NAME: the generated plugin builds, registers through its
entry point, moves data to and from its device, and reports the ops it lacks."""
import json
import os
import subprocess
import sys

import pytest
from ember.backends import _skeleton
from ember.backends.__main__ import main

NAME = "skeltest"


def test_generate_writes_the_layout(tmp_path):
    root = _skeleton.generate(NAME, tmp_path)
    assert root == tmp_path / f"ember-{NAME}"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == sorted(t.replace("NAME", NAME) for t in _skeleton.LAYOUT)
    for p in root.rglob("*"):
        if p.is_file():
            assert "@name@" not in p.read_text(), p
    pyproject = (root / "pyproject.toml").read_text()
    assert f'{NAME} = "ember_{NAME}.plugin"' in pyproject and f'name = "ember-{NAME}"' in pyproject
    assert "ember.get_include()" in (root / "setup.py").read_text()
    test = (root / "tests" / "test_conformance.py").read_text()
    assert "ember.testing.conformance" in test and f"--ember-device={NAME}" in test


def test_refuses_bad_names_and_existing_paths(tmp_path, capsys):
    for bad in ("My-Dev", "1dev", "", "dev-x", "class", "cpu", "Dev"):
        with pytest.raises(ValueError):
            _skeleton.generate(bad, tmp_path)
    _skeleton.generate(NAME, tmp_path)
    with pytest.raises(FileExistsError):
        _skeleton.generate(NAME, tmp_path)
    assert main(["new", NAME, "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["new", "x-y", "--dir", str(tmp_path)]) == 2
    assert main(["new", "other", "--dir", str(tmp_path)]) == 0
    assert (tmp_path / "ember-other" / "ember_other" / "kernels.c").is_file()


_CHECK = f"""
import json, warnings
import numpy as np
import ember
x = ember.zeros(3, device="{NAME}")
out = {{"device": str(x.device), "zeros": x.cpu().tolist()}}
y = ember.tensor([0.5, -1.0, 2.0], device="{NAME}")
out["roundtrip"] = y.cpu().tolist()
out["allocated"] = ember.{NAME}.memory_allocated()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")          # the host fallback warns once per op
    try:
        e = ember.exp(y)
        out["exp"] = ["ok", str(e.device), e.cpu().tolist()]
    except NotImplementedError as err:
        out["exp"] = ["not implemented", str(err)]
out["fallbacks"] = ember.backends.host_fallbacks("{NAME}")
rows = {{r["name"]: r for r in ember.backends.plugins()}}
out["dist"] = rows["{NAME}"]["dist"]
print(json.dumps(out))
"""


def test_generated_plugin_builds_and_runs(tmp_path):
    root = _skeleton.generate(NAME, tmp_path / "src")
    target = tmp_path / "site"
    # a private --target folder: the entry point is found from PYTHONPATH, and the test's
    # venv stays as it was
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                    "--no-deps", "--target", str(target), str(root)], check=True,
                   capture_output=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(target)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    r = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["device"] == f"{NAME}:0" and out["dist"] == f"ember-{NAME}"
    assert out["zeros"] == [0.0, 0.0, 0.0] and out["roundtrip"] == [0.5, -1.0, 2.0]
    assert out["allocated"] >= 24
    # the stub answers "not implemented": ember ran it on the host (the fallback)
    assert out["exp"][0] == "ok" and out["exp"][1] == f"{NAME}:0", out["exp"]
    assert out["exp"][2] == pytest.approx([1.6487212707, 0.3678794412, 7.3890560989])
    assert out["fallbacks"] == {"unary.exp[float32]": 1}
    listing = subprocess.run([sys.executable, "-m", "ember.backends"], capture_output=True,
                             text=True, env=env, cwd=tmp_path)
    assert f"device '{NAME}'" in listing.stdout
    assert "host fallback for: -; the core's own path for: softmax" in listing.stdout
    # conformance fails only on what the skeleton does not implement: every failure is a
    # kernel that ran through the host fallback, never a wrong value or a crash
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--pyargs", "ember.testing.conformance", f"--ember-device={NAME}",
                        f"--ember-report={report}"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["failures"] and not data["conformant"]
    wrong = [f for f in data["failures"] if "it ran through the host fallback" not in f["reason"]]
    assert not wrong, wrong[:5]
    assert data["families"]["host"]["float32"]["failed"] == 0     # the memory core works
