"""``python -m ember.backends new NAME``: write a fresh device plugin, ``ember-NAME``.

The templates live beside this module in ``skeleton/`` (package data); ``@name@`` in them
becomes the device name.  The result builds one C extension against ``ember.get_include()``,
registers the device through the entry point ``NAME = "ember_NAME.plugin"``, has working
memory entries and a stub for every other primitive, and runs ember's conformance suite
from ``tests/test_conformance.py``."""
import keyword
import re
from pathlib import Path

__all__ = ["generate", "check_name"]

TEMPLATES = Path(__file__).with_name("skeleton")

# target path (with NAME for the device name) -> template file
LAYOUT = {
    "pyproject.toml": "pyproject.toml.tmpl",
    "setup.py": "setup.py.tmpl",
    "README.md": "README.md.tmpl",
    "ember_NAME/__init__.py": "init.py.tmpl",
    "ember_NAME/plugin.py": "plugin.py.tmpl",
    "ember_NAME/runtime.py": "runtime.py.tmpl",
    "ember_NAME/kernels.c": "kernels.c.tmpl",
    "tests/test_conformance.py": "test_conformance.py.tmpl",
}

# device types a plugin cannot take: the core's own, and the in-tree plugins'
RESERVED = {"cpu", "cuda", "mps", "xpu", "meta", "reference"}


def check_name(name):
    """A device name is a lowercase identifier (it names a package and a Python module)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name or "") or keyword.iskeyword(name):
        raise ValueError(f"device name {name!r} must be a lowercase Python identifier "
                         f"(letters, digits, underscores; starting with a letter)")
    if name in RESERVED:
        raise ValueError(f"device name {name!r} is taken by ember or one of its own plugins")
    return name


def generate(name, directory="."):
    """Write the skeleton of ``ember-<name>`` into ``<directory>/ember-<name>``; returns that
    path.  Refuses an existing path rather than overwriting anything."""
    check_name(name)
    root = Path(directory) / f"ember-{name}"
    if root.exists():
        raise FileExistsError(f"{root} already exists: choose another --dir or remove it")
    for target, template in LAYOUT.items():
        path = root / target.replace("NAME", name)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = (TEMPLATES / template).read_text()
        path.write_text(text.replace("@name@", name))
    return root
