"""Shared fixtures for the core tests.  Op tests take a `device` fixture so they can run
on any backend (EMBER_TEST_DEVICES=cpu,reference): they are the seed of the conformance suite."""
import os

import numpy as np
import pytest

import ember

DEVICES = os.environ.get("EMBER_TEST_DEVICES", "cpu").split(",")
if "memcore" in DEVICES:        # the memory core only: every primitive runs on the host
    from ember.testing._devices import MEMORY_CORE, partial_device
    partial_device("memcore", MEMORY_CORE)
# a GPU plugin may report errors found in the data at the next synchronisation: the op tests
# check them at the op
os.environ.setdefault("EMBER_CUDA_SYNC_ERRORS", "1")
ALL_DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
              ember.float16, ember.bfloat16, ember.float32, ember.float64]
FLOAT_DTYPES = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
NUMERIC_DTYPES = ALL_DTYPES[1:]


@pytest.fixture(params=DEVICES)
def device(request):
    if not ember.get_device_module(request.param).is_available():
        pytest.skip(f"device '{request.param}' is not available")
    return request.param


def torch_dtype(d):
    import torch
    return getattr(torch, d.name)


def to_torch(t):
    """An ember tensor's values as a torch tensor of the same dtype (via host memory)."""
    import torch
    arr = t.numpy(force=True)
    out = torch.from_numpy(np.array(arr, order="C", copy=True))
    return out.to(torch_dtype(t.dtype))


def from_torch(t, device="cpu"):
    import torch
    if t.dtype == torch.bfloat16:
        return ember.tensor(t.float().numpy(), device=device).to(ember.bfloat16)
    return ember.tensor(t.numpy(), device=device)


def tol(d):
    return {ember.float16: 1e-2, ember.bfloat16: 2e-2, ember.float32: 1e-5}.get(d, 1e-12)


def assert_matches(e, t, rtol=None, atol=None):
    """ember tensor `e` equals torch tensor `t`: shape, dtype and values."""
    import torch
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert e.dtype.name == str(t.dtype).replace("torch.", ""), (e.dtype, t.dtype)
    r = tol(e.dtype) if rtol is None else rtol
    torch.testing.assert_close(to_torch(e), t, rtol=r, atol=r if atol is None else atol,
                               equal_nan=True)


@pytest.fixture(scope="session")
def oracle():
    """Helpers comparing ember with PyTorch (tests import nothing from conftest)."""
    import types
    return types.SimpleNamespace(torch_dtype=torch_dtype, to_torch=to_torch,
                                 from_torch=from_torch, assert_matches=assert_matches,
                                 tol=tol, ALL_DTYPES=ALL_DTYPES, FLOAT_DTYPES=FLOAT_DTYPES,
                                 NUMERIC_DTYPES=NUMERIC_DTYPES)
