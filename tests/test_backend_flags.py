"""ember.backends.mps / mkldnn / mkl / openmp / opt_einsum (ember/_backend_flags.py) against
PyTorch's CPU build: importable as modules, the same defaults and availability answers where
ember's build matches (no MPS, no MKL, no opt_einsum installed), flags that set and scope."""
import importlib
import importlib.util
import subprocess
import sys

import pytest
import torch

import ember

NAMES = ["mps", "mkldnn", "mkl", "openmp", "opt_einsum"]


@pytest.mark.parametrize("name", NAMES)
def test_importable_as_submodules(name):
    mod = importlib.import_module(f"ember.backends.{name}")
    assert getattr(ember.backends, name) is mod
    assert mod.__name__ == f"ember.backends.{name}"
    torch_mod = getattr(torch.backends, name)
    ours = {n for n in dir(mod) if not n.startswith("_")}
    theirs = {n for n in dir(torch_mod) if not n.startswith("_")} - {
        "torch", "Optional", "TYPE_CHECKING", "Any", "sys", "warnings", "contextmanager",
        "m", "ContextProp", "PropModule"}
    if name in ("mkldnn",):          # torch's PropModule hides its functions behind `m`
        theirs = {"is_available", "enabled", "deterministic", "allow_tf32", "flags"}
    if name == "opt_einsum":
        theirs = {"is_available", "enabled", "strategy", "flags", "get_opt_einsum"}
    assert theirs <= ours, theirs - ours


def test_import_in_a_fresh_interpreter_without_plugins():
    code = ("import ember.backends.mps as m, ember.backends.opt_einsum as o\n"
            "print(m.is_available(), o.is_available())")
    env = {"EMBER_DEVICE_BACKEND_AUTOLOAD": "0", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stdout.split()[0] == "False"


def test_mps():
    mps = ember.backends.mps
    assert mps.is_available() is torch.backends.mps.is_available() is False
    assert mps.is_built() is False
    assert mps.is_available() == ember.mps.is_available()
    for call in (lambda m: m.is_macos13_or_newer(), lambda m: m.get_name(),
                 lambda m: m.get_core_count()):
        with pytest.raises(RuntimeError, match="without MPS backend"):
            call(mps)


def test_mkldnn_flags():
    mk, tmk = ember.backends.mkldnn, torch.backends.mkldnn
    assert mk.is_available() is False           # ember links no oneDNN (torch's CPU build does)
    assert mk.is_acl_available() is False
    assert mk.enabled == tmk.enabled is True
    assert mk.deterministic == tmk.deterministic is False
    assert mk.allow_tf32 == tmk.allow_tf32 is None     # deprecated: fp32_precision replaced it
    assert mk.fp32_precision == tmk.fp32_precision == "none"
    with mk.flags(enabled=False, deterministic=True):
        assert mk.enabled is False and mk.deterministic is True
    assert mk.enabled is True and mk.deterministic is False
    mk.enabled = False
    try:
        assert ember.backends.mkldnn.enabled is False
    finally:
        mk.enabled = True
    with mk.verbose(mk.VERBOSE_ON):
        pass
    assert (mk.VERBOSE_OFF, mk.VERBOSE_ON, mk.VERBOSE_ON_CREATION) == (
        tmk.VERBOSE_OFF, tmk.VERBOSE_ON, tmk.VERBOSE_ON_CREATION)


def test_mkl_and_openmp():
    assert ember.backends.mkl.is_available() is False
    assert ember.backends.mkl.VERBOSE_ON == torch.backends.mkl.VERBOSE_ON
    with ember.backends.mkl.verbose(ember.backends.mkl.VERBOSE_ON):
        pass
    assert ember.backends.openmp.is_available() is ember.has_openmp is True
    assert ember.backends.openmp.is_available() == torch.backends.openmp.is_available()


def test_opt_einsum_matches_torch():
    oe, toe = ember.backends.opt_einsum, torch.backends.opt_einsum
    installed = importlib.util.find_spec("opt_einsum") is not None
    assert oe.is_available() == toe.is_available() == installed
    assert oe.enabled == toe.enabled == installed
    assert oe.strategy == toe.strategy
    if installed:
        with oe.flags(strategy="greedy"):
            assert oe.strategy == "greedy"
        assert oe.strategy == "auto"
        with pytest.raises(ValueError, match="must be one of"):
            oe.strategy = "best"
    else:
        assert oe.get_opt_einsum() is None
        with pytest.raises(ValueError, match="opt_einsum is not available"):
            oe.enabled = True
        with pytest.raises(ValueError, match="opt_einsum is not available"):
            oe.strategy = "auto"
        oe.enabled = False
        with oe.flags(enabled=False):
            assert oe.enabled is False
