"""Fixtures for the ember.nn tests: the core tests' fixtures (device, oracle), loaded from
tests/core/conftest.py so that there is one definition, and a bridge moving tensors and whole
models' weights between ember and PyTorch (the oracle)."""
import importlib.util
import pathlib
import types

import numpy as np
import pytest

import ember

_path = pathlib.Path(__file__).resolve().parent.parent / "core" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_ember_core_conftest", _path)
_core = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_core)

device = _core.device
oracle = _core.oracle


def to_torch(t):
    import torch
    return torch.from_numpy(np.array(t.detach().numpy(), copy=True))


def from_torch(t):
    return ember.tensor(t.detach().numpy().copy())


def copy_weights(torch_model, ember_model):
    """Give ember_model the parameters and buffers of torch_model (same key names)."""
    sd = {k: from_torch(v) for k, v in torch_model.state_dict().items()}
    ember_model.load_state_dict(sd)


def close(e, t, tol=1e-5):
    """ember tensor ``e`` matches torch tensor ``t`` in shape and values."""
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def torch_text(text):
    """PyTorch's spelling of an ember message or repr (ember.Size -> torch.Size, ...)."""
    return text.replace("ember.", "torch.")


@pytest.fixture(scope="session")
def bridge():
    return types.SimpleNamespace(to_torch=to_torch, from_torch=from_torch,
                                 copy_weights=copy_weights, close=close,
                                 torch_text=torch_text)
