"""Builds ember's Cython core (no OpenMP: threads belong to the device plugins).

Cython does not see setuptools' package-dir mapping, so we stage an include folder
(build/cy/ember/core -> core/) for cimports of `ember.core.*` to resolve to our .pxd files.

The core is several extension modules (the Tensor module and the op modules split from
it): they cythonize and compile in parallel, one job per CPU, for `setup.py build_ext`,
`pip install` and wheel builds alike.  -g0: Python's own CFLAGS ask for debug info, which
roughly doubles gcc's time on these large generated files.  -O2: the core's compute runs in
the plugins' kernels; on its own paths -O3 measured no faster (a+b on 10 elements, relu,
sum, slicing, backward: within noise) and cost the Tensor module's compile 40 s instead of
28 s.
"""
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.cpu_count() or 1
# largest first, so that the parallel build starts the longest compiles at once
CORE_MODULES = ["_tensor", "_autograd", "_math", "_indexing", "_conv_pool", "_factories",
                "_views", "_norm_loss", "_reduce", "_joining", "_random", "_dispatch", "_device",
                "_fused", "_fallback", "_dtype", "_state"]


def staged_include():
    root = os.path.join(HERE, "build", "cy")
    pkg = os.path.join(root, "ember")
    os.makedirs(pkg, exist_ok=True)
    open(os.path.join(pkg, "__init__.pxd"), "a").close()
    link = os.path.join(pkg, "core")
    target = os.path.join(HERE, "core")
    if os.path.islink(link) and os.readlink(link) != target:
        os.remove(link)              # a build folder copied from another checkout
    if not os.path.islink(link):
        os.symlink(target, link)
    return root


extensions = [
    Extension(
        f"ember.core.{name}",
        [os.path.join("core", f"{name}.pyx")],
        include_dirs=[os.path.join(HERE, "core", "include"), np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O2", "-g0"],
    )
    for name in CORE_MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=[staged_include(), os.path.join(HERE, "core", "include")],
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
