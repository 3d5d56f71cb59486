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
    depends=["ember_toy/toy_kernels.h", "ember_toy/toy_index.h"],
)

setup(ext_modules=cythonize([ext], compiler_directives={"language_level": 3}))
