"""Imports run one way: façade -> core -> dispatcher/backends -> plugins.

Read from the source (Python, Cython and its includes), so a lazy import inside a function
counts as much as one at the top:
- core/ and backends/ import nothing from the façade (only ``ember.core``/``ember.backends``);
- the façade, core, backends, nn, optim and distributed never reach a particular plugin
  package (``ember_cpu``, ``ember_cuda``, ...);
- a plugin's package imports only the contract, ``ember.backends`` (setup.py may import
  ember for ``get_include()``)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (".py", ".pyx", ".pxi", ".pxd")
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+\(?([\w., *]+)|c?import\s+([\w., ]+))",
                    re.M)
PLUGIN_PACKAGES = re.compile(r"^ember_(?!abi\b)\w+")     # ember_abi is the ABI's .pxd


def imported(path):
    """The modules a source file imports (``from ember import x`` counts as ``ember.x``)."""
    text = path.read_text(errors="replace")
    # docstrings and comments may name modules
    text = re.sub(r'("""|\'\'\')(.*?)\1', lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S)
    text = re.sub(r"#[^\n]*", "", text)
    found = []
    for m in IMPORT.finditer(text):
        if m.group(1):
            names = [n.strip().split(" as ")[0] for n in m.group(2).split(",") if n.strip()]
            found += [f"ember.{n}" if m.group(1) == "ember" else m.group(1) for n in names]
        else:
            found += [n.strip().split(" as ")[0] for n in m.group(3).split(",") if n.strip()]
    return found


def files(*folders):
    for folder in folders:
        for p in sorted((ROOT / folder).rglob("*")):
            if p.suffix in SOURCES and "build" not in p.parts:
                yield p


def violations(paths, bad):
    return [f"{p.relative_to(ROOT)}: {m}" for p in paths for m in imported(p) if bad(m)]


def facade(module):
    return (module == "ember" or module.startswith("ember.")) and \
        not module.startswith(("ember.core", "ember.backends"))


def test_the_scanner_sees_imports(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("import os\nfrom ember import nn, core\ndef f():\n    import ember_cpu._kernels"
                 "\n# import ember.autograd\n")
    assert imported(f) == ["os", "ember.nn", "ember.core", "ember_cpu._kernels"]


def test_core_and_backends_import_nothing_from_the_facade():
    assert not violations(files("core", "backends"), facade)


@pytest.mark.parametrize("folder", ["ember", "core", "backends", "nn", "optim", "distributed"])
def test_no_layer_reaches_a_particular_plugin(folder):
    assert not violations(files(folder), lambda m: PLUGIN_PACKAGES.match(m))


def test_plugins_import_only_the_contract():
    packages = [p for p in (ROOT / "plugins").glob("*/ember_*") if p.is_dir()]
    assert len(packages) >= 5
    paths = [p for pkg in packages for p in files(pkg.relative_to(ROOT))]
    assert not violations(paths, lambda m: facade(m) or m.startswith("ember.core"))
