"""Builds ember-cuda's one extension module (metadata lives in pyproject.toml).

It needs a C compiler and Cython only: the CUDA driver and cuBLAS are declared in
csrc/cu.h and opened with dlopen at first use, and the kernels (kernels/*.cu) are compiled
by nvcc at run time, on the machine that has the GPU.
"""
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = ["runtime.c", "alloc.c", "copy.c", "elementwise.c", "blas.c", "conv.c", "pool.c",
        "index.c", "random.c", "reduce.c", "scan.c", "rows.c", "optim.c"]


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


extension = Extension(
    "ember_cuda._cuda",
    [os.path.join("ember_cuda", "_cuda.pyx")]
    + [os.path.join("ember_cuda", "csrc", c) for c in CSRC],
    include_dirs=[ember_include(), os.path.join("ember_cuda")],
    extra_compile_args=["-O2", "-std=gnu11"],
    libraries=["dl"],
)

setup(
    ext_modules=cythonize(
        [extension],
        include_path=[ember_include()],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False},
    ),
)
