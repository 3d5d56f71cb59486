"""Builds the toy device's one extension, ember_toy._kernels (C in toy_kernels.h)."""
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def ember_include():
    in_repo = os.path.normpath(os.path.join(HERE, "..", "..", "..", "core", "include"))
    if os.path.exists(os.path.join(in_repo, "ember", "abi.h")):
        return in_repo
    os.environ["EMBER_DEVICE_BACKEND_AUTOLOAD"] = "0"   # no plugin needed to find the header
    import ember
    return ember.get_include()


ext = Extension(
    "ember_toy._kernels",
    sources=["ember_toy/_kernels.pyx"],
    include_dirs=[ember_include(), os.path.join(HERE, "ember_toy")],
    # the ABI header too: an in-tree rebuild must not keep objects built for another layout
    depends=["ember_toy/toy_kernels.h", "ember_toy/toy_index.h",
             os.path.join(ember_include(), "ember", "abi.h")],
)

setup(ext_modules=cythonize([ext], compiler_directives={"language_level": 3}))
