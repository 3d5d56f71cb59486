"""Builds ember-cpu's Cython extensions (metadata lives in pyproject.toml).

OpenMP: -fopenmp at compile and link time (without it every prange runs serially, so a
compiler without OpenMP gets a serial build and a warning).  -O3 without -ffast-math:
reductions rely on exact IEEE semantics for their fixed summation order; -fno-math-errno
only lets sqrt inline (no library call setting errno); -fno-trapping-math changes no result
(nothing reads the floating-point exception flags) and lets float selects (clamps, NaN
tests) become branch-free, so loops holding them vectorise.  -g0: Python's own CFLAGS ask
for debug info, which roughly doubles gcc's time.  The modules cythonize and compile in
parallel, one job per CPU (`setup.py build_ext`, `pip install` and wheel builds alike).
"""
import os
import subprocess
import sys
import sysconfig
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.cpu_count() or 1
MODULES = ["_strided", "_copy", "_elementwise", "_reduce", "_scan", "_sort", "_index", "_softmax",
           "_norm", "_nll", "_random", "_blas", "_pool", "_conv", "_rnn", "_optim_steps",
           "_activation", "_ternary", "_kernels"]


def ember_include():
    """Folder holding ember/abi.h: the repo's core, $EMBER_INCLUDE, or the installed ember."""
    in_repo = os.path.normpath(os.path.join(HERE, "..", "..", "core", "include"))
    if os.path.isfile(os.path.join(in_repo, "ember", "abi.h")):
        return in_repo
    if os.environ.get("EMBER_INCLUDE"):
        return os.environ["EMBER_INCLUDE"]
    os.environ["EMBER_DEVICE_BACKEND_AUTOLOAD"] = "0"
    import ember

    return ember.get_include()


def openmp_flag():
    """'-fopenmp' when the C compiler builds and links an OpenMP program, else None."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        cmd = cc.split() + ["-fopenmp", src, "-o", os.path.join(tmp, "omp")]
        ok = subprocess.run(cmd, capture_output=True).returncode == 0
    if not ok:
        print("ember-cpu: the C compiler has no OpenMP; building serial kernels",
              file=sys.stderr)
    return "-fopenmp" if ok else None


omp = openmp_flag()
compile_args = ["-O3", "-g0", "-fno-math-errno", "-fno-trapping-math"] + ([omp] if omp else [])
link_args = [omp] if omp else []
include_dirs = [ember_include(), numpy.get_include()]
# the C headers the modules include, several from verbatim C blocks that cythonize does not
# track: an edited header recompiles every module (a stale _softmax kept an old row max)
headers = sorted(os.path.join("ember_cpu", f) for f in os.listdir(os.path.join(HERE, "ember_cpu"))
                 if f.endswith(".h"))

extensions = [
    Extension(
        f"ember_cpu.{name}",
        [os.path.join("ember_cpu", f"{name}.pyx")],
        include_dirs=include_dirs,
        extra_compile_args=compile_args,
        extra_link_args=link_args,
        depends=headers,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=[ember_include()],        # ember_abi.pxd ships beside ember/abi.h
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        nthreads=JOBS,
    ),
    options={"build_ext": {"parallel": JOBS}},
)
