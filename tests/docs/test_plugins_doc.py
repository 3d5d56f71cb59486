"""docs/plugins.md is true: every code block in it runs (bash and Python blocks in order,
in one scratch folder, with the skeleton they install kept out of the venv through
PIP_TARGET and PIP_NO_DEPS), its C compiles against ember's header, its TOML parses, and
it names every hook of backends/hookspecs.py and every entry of the kernel table."""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ember.backends import _abi, hookspecs

import ember

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(lang=None):
    found = BLOCK.findall(DOC.read_text())
    return [(lg, code) for lg, code in found if lang is None or lg == lang]


def test_every_block_has_a_known_language():
    assert {lg for lg, _ in blocks()} <= {"bash", "python", "toml", "c"}


def test_names_every_hook_and_every_entry():
    text = DOC.read_text()
    hooks = [n for n in dir(hookspecs) if n.startswith("ember_")]
    assert hooks and not [h for h in hooks if f"`{h}" not in text]
    assert not [e for e in _abi.ENTRIES if f"`{e}`" not in text]


@pytest.mark.parametrize("i", range(len(blocks("toml"))))
def test_toml_blocks_parse(i):
    data = tomllib.loads(blocks("toml")[i][1])
    assert data["project"]["entry-points"]["ember.backends"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("i", range(len(blocks("c"))))
def test_c_blocks_compile(i, tmp_path):
    src = tmp_path / "block.c"
    src.write_text(blocks("c")[i][1])
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-fsyntax-only",
                        "-I", ember.get_include(), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_bash_and_python_blocks_run_in_order(tmp_path):
    site = tmp_path / "site"                  # where the doc's `pip install` puts the plugin
    env = dict(os.environ, PIP_TARGET=str(site), PIP_NO_DEPS="1", PYTHONPATH=os.pathsep.join(
        [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    ran = 0
    for lang, code in blocks():
        if lang == "bash":
            cmd = ["bash", "-e", "-c", code]
        elif lang == "python":
            cmd = [sys.executable, "-c", code]
        else:
            continue
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"{lang} block failed:\n{code}\n{r.stdout[-2000:]}" \
                                  f"{r.stderr[-3000:]}"
        ran += 1
    assert ran == len(blocks("bash")) + len(blocks("python"))
    assert (tmp_path / "mydev.json").is_file()              # the conformance report
