"""Helpers for the checkpoint tests: round trips through memory and value comparison."""
import io
import types

import numpy as np
import pytest

import ember


def bits(t):
    """t's values as a NumPy array with the exact bits (bfloat16 as its int16 pattern)."""
    if t.dtype == ember.bfloat16:
        t = t.contiguous().view(ember.int16)
    return np.asarray(t.detach().cpu())


def assert_same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    assert a.device == b.device
    np.testing.assert_array_equal(bits(a), bits(b))


def roundtrip(obj, fmt="torch", **load_kwargs):
    """``obj`` saved with ember.save in format ``fmt`` and loaded back."""
    buf = io.BytesIO()
    ember.save(obj, buf, format=fmt)
    buf.seek(0)
    return ember.load(buf, **load_kwargs)


def sample(dtype, shape):
    """A tensor of ``dtype`` with varied values (negative, fractional, inf where it can)."""
    n = int(np.prod(shape)) if shape else 1
    base = ember.arange(n, dtype=ember.float64).reshape(shape) * 1.37 - 3.2
    if dtype == ember.bool:
        return base.gt(0)
    return base.to(dtype)


@pytest.fixture(scope="session")
def ckpt():
    """The helpers above, for the test modules (conftest is not importable by name)."""
    return types.SimpleNamespace(bits=bits, assert_same=assert_same, roundtrip=roundtrip,
                                 sample=sample)


@pytest.fixture(params=["torch", "safetensors"])
def fmt(request):
    """Both formats ember.save writes: PyTorch's zip (the default) and ember's safetensors."""
    return request.param


@pytest.fixture(autouse=True)
def clean_safe_globals():
    saved = ember.serialization.get_safe_globals()
    ember.serialization.clear_safe_globals()
    yield
    ember.serialization.clear_safe_globals()
    ember.serialization.add_safe_globals(saved)
