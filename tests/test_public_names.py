"""The façade's public names: an explicit, sorted ``__all__`` that lists every public name
``ember/__init__.py`` defines and every name it loads on first use, each of which resolves;
``from ember import *`` gives exactly those; the package is marked typed (PEP 561)."""
import pathlib
import subprocess
import sys
import types

import ember


def _defined_names():
    return {n for n, v in vars(ember).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType)}


def test_all_is_sorted_and_unique():
    assert ember.__all__ == sorted(set(ember.__all__))


def _lazy_names():
    return {n for n in ember._lazy.FUNCTIONS if not n.startswith("_")}


def test_all_lists_what_the_facade_defines_and_loads_on_use():
    listed = set(ember.__all__)
    assert _defined_names() - listed == set(), "defined in ember/__init__.py, not in __all__"
    assert _lazy_names() - listed == set(), "loaded on use, not in __all__"
    assert listed - _defined_names() - _lazy_names() == set(), "listed, defined nowhere"


def test_every_listed_name_resolves():
    missing = [n for n in ember.__all__ if not hasattr(ember, n)]
    assert missing == []


def test_star_import_gives_the_listed_names():
    code = ("import types\nfrom ember import *\n"
            "print(sorted(n for n, v in dict(globals()).items() if not n.startswith('_') "
            "and not isinstance(v, types.ModuleType)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert eval(out.stdout) == ember.__all__


def test_the_package_is_marked_typed():
    assert (pathlib.Path(ember.__file__).parent / "py.typed").is_file()
