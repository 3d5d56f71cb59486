"""The GPU suite: ember on "cuda" checked against PyTorch on "cuda" (the GPU machine has a
CUDA build of PyTorch) over dtypes, broadcasting, non-contiguous and empty operands.

Every test here is skipped, with the reason, where ember's CUDA backend is unavailable
(no GPU, no PyCUDA: CI).  Operands are made on the device with ``device=``; values come
back with ``.cpu()``."""
import os

import numpy as np
import pytest

import ember

# errors found in the data raise at the op (the default reports them at the next
# synchronisation, as CUDA does; test_runtime checks that mode in a subprocess)
os.environ.setdefault("EMBER_CUDA_SYNC_ERRORS", "1")

DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
          ember.float16, ember.bfloat16, ember.float32, ember.float64]
FLOATS = [ember.float16, ember.bfloat16, ember.float32, ember.float64]


def pytest_collection_modifyitems(config, items):
    if ember.cuda.is_available():
        return
    reason = f"ember's CUDA backend is unavailable: {ember.cuda.unavailable_reason()}"
    for item in items:
        if "/tests/cuda/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.skip(reason=reason))


def _torch():
    import torch
    return torch


def torch_device():
    """'cuda' when the oracle PyTorch sees the GPU, else 'cpu'."""
    torch = _torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


def tdtype(d):
    return getattr(_torch(), d.name)


def to_torch(e, device=None):
    """An ember tensor's values as a PyTorch tensor (same dtype) on the oracle's device."""
    torch = _torch()
    c = e.detach().cpu()
    arr = c.float().numpy() if c.dtype == ember.bfloat16 else c.numpy()
    t = torch.from_numpy(np.array(arr, copy=True)).to(tdtype(e.dtype))
    return t.to(device or torch_device())


def from_torch(t, device="cuda"):
    """A PyTorch tensor's values as an ember tensor on ``device``."""
    torch = _torch()
    c = t.detach().cpu()
    if c.dtype == torch.bfloat16:
        return ember.tensor(c.float().numpy(), device=device).to(ember.bfloat16)
    return ember.tensor(c.numpy(), device=device)


def tol(d):
    return {ember.float16: 2e-3, ember.bfloat16: 1.6e-2, ember.float32: 2e-5}.get(d, 1e-10)


def assert_matches(e, t, rtol=None, atol=None):
    """ember tensor ``e`` (on cuda) equals PyTorch tensor ``t``: device, shape, dtype, values."""
    torch = _torch()
    assert e.device.type == "cuda", e.device
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert e.dtype.name == str(t.dtype).replace("torch.", ""), (e.dtype, t.dtype)
    r = tol(e.dtype) if rtol is None else rtol
    torch.testing.assert_close(to_torch(e, t.device), t, rtol=r, atol=r if atol is None else atol,
                               equal_nan=True)


@pytest.fixture(scope="session")
def oracle():
    import types
    return types.SimpleNamespace(torch=_torch(), device=torch_device(), tdtype=tdtype,
                                 to_torch=to_torch, from_torch=from_torch, tol=tol,
                                 assert_matches=assert_matches, DTYPES=DTYPES, FLOATS=FLOATS)
