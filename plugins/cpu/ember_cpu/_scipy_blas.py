"""Load SciPy's ``cython_blas`` without the ``scipy.linalg`` package.

``_blas``, ``_conv`` and ``_rnn`` cimport their GEMMs from ``scipy.linalg.cython_blas``;
at import, Cython looks that module up by name, and a plain import runs
``scipy.linalg/__init__`` first: ~0.2 s of array-API shims and submodules that the
function pointers do not need (the BLAS extension itself loads in ~2 ms).  ``preload``
executes the extension from its file under its own name before those modules import, and
``release`` drops the name again once they hold their pointers, so a later
``import scipy.linalg`` sees SciPy exactly as if ember had never touched it (Cython hands
the same module object back when the extension is imported again).
"""

import importlib.machinery
import importlib.util
import os
import sys

NAME = "scipy.linalg.cython_blas"


def preload() -> bool:
    """Put SciPy's BLAS extension in ``sys.modules``; False (nothing done) when it is
    already imported, or its file cannot be found or loaded this way: the normal import
    runs instead."""
    if NAME in sys.modules:
        return False
    spec = importlib.util.find_spec("scipy")    # a top-level spec imports nothing
    if spec is None or not spec.submodule_search_locations:
        return False
    folder = os.path.join(spec.submodule_search_locations[0], "linalg")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, "cython_blas" + suffix)
        if os.path.exists(path):
            break
    else:
        return False
    import scipy  # noqa: F401  the parent package (light): the extension's helpers live in it

    try:
        ext = importlib.util.spec_from_file_location(NAME, path)
        module = importlib.util.module_from_spec(ext)
        sys.modules[NAME] = module
        ext.loader.exec_module(module)
    except Exception:           # an unusual SciPy layout: the ordinary (slower) import
        sys.modules.pop(NAME, None)
        return False
    return True


def release(preloaded: bool) -> None:
    """Forget the name ``preload`` registered (the modules that cimported it keep their
    function pointers)."""
    if preloaded:
        sys.modules.pop(NAME, None)
