"""The C half of the small all_reduce's fast path (``_fast_mpi.c``), built on first use.

It calls MPI itself, so it must be built against the very library mpi4py loaded: the
``libmpi.so*`` mapped into this process, with the ``mpi.h`` of the same installation
(``<prefix>/include`` beside ``<prefix>/lib``, as the mpich wheels and system MPICH/Open MPI
lay them out).  It is compiled with the system C compiler through the kernel cache
(``ember.backends.kernel_cache``: by source hash, so a second process compiles nothing) and
imported as an extension module.  No compiler, no header, MPI's standard-ABI library, or
``EMBER_DISTRIBUTED_NATIVE=0``: ``get()`` is None and the Python path runs.
"""
import importlib.machinery
import importlib.util
import os
import re
import sysconfig

__all__ = ["get"]

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_fast_mpi.c")
_module = None
_tried = False


def _loaded_libmpi():
    """(folder, file name) of the MPI library mapped into this process, or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.fullmatch(r"libmpi\.so(\.\d+)*", os.path.basename(path)):
                return os.path.split(path)
    return None


def _build():
    from ember.backends import kernel_cache

    from . import _mpi
    _mpi.mpi()                           # mpi4py's MPI module: its library is now mapped
    found = _loaded_libmpi()
    if found is None:
        return None
    libdir, libname = found
    include = os.path.join(os.path.dirname(libdir), "include")
    if not os.path.isfile(os.path.join(include, "mpi.h")):
        return None
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    command = [cc, "-O2", "-fPIC", "-shared", "-fwrapv", "-g0",
               f"-I{sysconfig.get_paths()['include']}", f"-I{include}", "{src}", "-o", "{out}",
               f"-L{libdir}", f"-l:{libname}", f"-Wl,-rpath,{libdir}"]
    with open(_SOURCE) as f:
        path = kernel_cache.build(f.read(), command)
    loader = importlib.machinery.ExtensionFileLoader("_ember_fast_mpi", path)
    spec = importlib.util.spec_from_file_location("_ember_fast_mpi", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def get():
    """The built module, or None where the Python path must run (see the docstring)."""
    global _module, _tried
    if not _tried:
        _tried = True
        if os.environ.get("EMBER_DISTRIBUTED_NATIVE", "1") != "0":
            try:
                _module = _build()
            except Exception:            # no compiler, a header that does not build, ...
                _module = None
    return _module
