"""Builds the reference device's one extension, ember_reference._kernels, from the plain C
files in ember_reference/csrc (metadata lives in pyproject.toml).  No Cython, no NumPy:
a C compiler and ember's ABI header (ember/abi.h) are all a device needs."""
import glob
import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def ember_include():
    """Folder holding ember/abi.h: the repo's core, $EMBER_INCLUDE, or the installed ember."""
    in_repo = os.path.normpath(os.path.join(HERE, "..", "..", "core", "include"))
    if os.path.isfile(os.path.join(in_repo, "ember", "abi.h")):
        return in_repo
    if os.environ.get("EMBER_INCLUDE"):
        return os.environ["EMBER_INCLUDE"]
    os.environ["EMBER_DEVICE_BACKEND_AUTOLOAD"] = "0"   # no plugin needed to find the header
    import ember

    return ember.get_include()


INCLUDE = ember_include()
SOURCES = sorted(glob.glob(os.path.join("ember_reference", "csrc", "*.c")))

ext = Extension(
    "ember_reference._kernels",
    sources=SOURCES,
    include_dirs=[INCLUDE, os.path.join("ember_reference", "csrc")],
    # the ABI headers too: an in-tree rebuild must not keep objects built for another layout
    depends=glob.glob(os.path.join("ember_reference", "csrc", "*.h"))
    + [os.path.join(INCLUDE, "ember", "abi.h"), os.path.join(INCLUDE, "ember", "half.h")],
    # -O2 without -ffast-math (IEEE semantics: NaN rules, rounding); only PyInit is exported
    extra_compile_args=["-O2", "-std=c11", "-fvisibility=hidden", "-Wall", "-Wextra",
                        "-Wno-unused-parameter"],
)

setup(ext_modules=[ext])
