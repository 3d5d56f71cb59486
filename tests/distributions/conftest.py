"""Fixtures for the ember.distributions tests: the core tests' device fixture (one
definition, loaded from tests/core/conftest.py) and a builder of the same distribution in
ember and in PyTorch (the oracle) from NumPy parameters."""
import importlib.util
import pathlib

import numpy as np
import pytest
import torch

import ember

_path = pathlib.Path(__file__).resolve().parent.parent / "core" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_ember_core_conftest_dist", _path)
_core = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_core)

device = _core.device


@pytest.fixture(autouse=True)
def _torch_validates_arguments():
    """The oracle validates as PyTorch does by default: torch.compile/torch.cond (run by
    earlier tests) switch torch's default argument validation off for good."""
    torch.distributions.Distribution.set_default_validate_args(True)
    ember.distributions.Distribution.set_default_validate_args(True)


def _convert(value, lib, dtype, device):
    if isinstance(value, np.ndarray):
        value = np.ascontiguousarray(value)
        if lib is torch:
            return torch.tensor(value, dtype=getattr(torch, dtype))
        return ember.tensor(value, dtype=getattr(ember, dtype), device=device)
    return value


def build(name, params, dtype="float64", device="cpu"):
    """(ember distribution, torch distribution) of class ``name`` with ``params`` (NumPy
    arrays become tensors of ``dtype``; numbers and other values pass as they are)."""
    e = getattr(ember.distributions, name)(
        **{k: _convert(v, ember, dtype, device) for k, v in params.items()})
    t = getattr(torch.distributions, name)(
        **{k: _convert(v, torch, dtype, device) for k, v in params.items()})
    return e, t


def to_ember(t, device="cpu"):
    return ember.tensor(t.detach().numpy(), device=device)


def to_numpy(x):
    return x.detach().cpu().numpy() if hasattr(x, "cpu") else np.asarray(x)


@pytest.fixture(scope="session")
def oracle():
    """The helpers above (tests import nothing from conftest)."""
    import types
    return types.SimpleNamespace(build=build, to_ember=to_ember, to_numpy=to_numpy)
