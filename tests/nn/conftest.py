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


def _compare_functional(oracle, device, name, shapes, dtype, *args, tol=None, **kw):
    """``F.<name>(*inputs, *args, **kw)`` in ember and in torch on the same random inputs (one
    per shape in ``shapes``; None passes None): the same values (and indices, for a tuple
    result) and the same gradients of every input."""
    import torch
    torch.manual_seed(0)
    ts = [None if s is None else torch.randn(*s, dtype=oracle.torch_dtype(dtype))
          for s in shapes]
    es = [None if t is None else oracle.from_torch(t, device).requires_grad_(True) for t in ts]
    for t in ts:
        if t is not None:
            t.requires_grad_(True)
    t = getattr(torch.nn.functional, name)(*ts, *args, **kw)
    e = getattr(ember.nn.functional, name)(*es, *args, **kw)
    if isinstance(t, tuple):
        oracle.assert_matches(e[1], t[1])
        t, e = t[0], e[0]
    if tol is None:
        tol = 1e-5 if dtype == ember.float32 else 1e-12
    oracle.assert_matches(e.detach(), t.detach(), rtol=tol, atol=tol)
    g = torch.randn_like(t)
    t.backward(g)
    e.backward(oracle.from_torch(g, device))
    for et, tt in zip(es, ts):
        if tt is not None:
            oracle.assert_matches(et.grad, tt.grad, rtol=tol, atol=tol)


@pytest.fixture(scope="session")
def compare_functional():
    return _compare_functional


def _same_functional_error(oracle, name, args, kw):
    """``F.<name>(*args, **kw)`` raises in ember what it raises in torch: type and message
    (ember tensors in ``args`` become torch ones for torch's call)."""
    import torch
    targs = [oracle.to_torch(a) if isinstance(a, ember.Tensor) else a for a in args]
    with pytest.raises(Exception) as t_err:
        getattr(torch.nn.functional, name)(*targs, **kw)
    with pytest.raises(t_err.type) as e_err:
        getattr(ember.nn.functional, name)(*args, **kw)
    assert str(e_err.value) == str(t_err.value)


@pytest.fixture(scope="session")
def same_functional_error():
    return _same_functional_error


@pytest.fixture(scope="session")
def bridge():
    return types.SimpleNamespace(to_torch=to_torch, from_torch=from_torch,
                                 copy_weights=copy_weights, close=close,
                                 torch_text=torch_text)
