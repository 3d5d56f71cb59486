"""ember-cpu's contiguous casts (_cast_rows.h): the everyday pairs as one C loop, float16 and
bfloat16 through vectorised conversions, and the staging of half operands: the same values
as the element-by-element path a strided view takes, NaN payloads, infinities and values
beyond the integer range included."""
import warnings

import numpy as np
import pytest

import ember

PAIRS = [("float32", "float64"), ("float64", "float32"), ("float32", "int64"),
         ("float64", "int64"), ("float32", "int32"), ("float64", "int32"), ("int64", "float32"),
         ("int64", "float64"), ("int32", "float32"), ("int32", "float64"), ("int32", "int64"),
         ("int64", "int32"), ("bool", "int64"), ("uint8", "int64"), ("float32", "bool"), ("bool", "float32"), ("bool", "float64"),
         ("int64", "bool"), ("float16", "float32"), ("bfloat16", "float32"),
         ("float32", "float16"), ("float32", "bfloat16")]


def _values(dtype):
    rng = np.random.default_rng(2)
    if dtype == "bool":
        return rng.random(1003) < 0.5
    if dtype in ("uint8", "int32", "int64"):
        info = np.iinfo(dtype)
        v = rng.integers(max(info.min, -2 ** 40), min(info.max, 2 ** 40), 1003, dtype=np.int64)
        v[:4] = [0, 1, max(info.min, -2 ** 40), min(info.max, 2 ** 40)]
        return v.astype(dtype)
    v = rng.standard_normal(1003) * 1e3
    v[:9] = [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 0.0, -0.0]
    return v


@pytest.mark.parametrize("src,dst", PAIRS)
def test_contiguous_casts_equal_the_strided_path(src, dst):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        host = _values(src)
        x = ember.tensor(host if src not in ("float16", "bfloat16") else host.astype(np.float32)
                         ).to(getattr(ember, src))
        # the same values twice, side by side: a column view is strided (the staged path)
        both = ember.stack([x, x], 1)
        fast = x.to(getattr(ember, dst))
        slow = both[:, 0].to(getattr(ember, dst))
    assert fast.dtype == slow.dtype
    a, b = fast.view(-1), slow.contiguous().view(-1)
    if dst in ("float16", "bfloat16"):
        a, b = a.view(ember.int16), b.view(ember.int16)
    elif dst in ("float32", "float64"):
        a, b = a.view(ember.int32 if dst == "float32" else ember.int64), \
            b.view(ember.int32 if dst == "float32" else ember.int64)
    np.testing.assert_array_equal(a.numpy(), b.numpy())       # bits, NaN payloads included


def test_float_to_int32_wraps_through_int64_as_before():
    x = np.array([3e9, -3e9, 2147483520.0, -2147483648.0, 1.9, -1.9, np.nan, np.inf] * 3,
                 np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = x.astype(np.int64).astype(np.int32)
    np.testing.assert_array_equal(ember.tensor(x).int().numpy(), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_staging_equals_the_element_by_element_path(dtype):
    # signalling and quiet NaNs, infinities, subnormals, signed zeros, ordinary values
    bits = np.array([0x7C01, 0xFC01, 0x7E00, 0x7C00, 0x3C00, 0x0001, 0x8000, 0x4248] * 5,
                    np.uint16)
    h = ember.tensor(bits.view(np.int16)).view(getattr(ember, dtype))
    s = ember.stack([h, h], 1)[:, 0]              # the same values through a strided view
    np.testing.assert_array_equal(h.float().view(ember.int32).numpy(),
                                  s.float().view(ember.int32).numpy())
    for op in (lambda t: t * 3, lambda t: t + t, lambda t: t.exp()):   # staged kernels
        np.testing.assert_array_equal(op(h).view(ember.int16).numpy(),
                                      op(s).contiguous().view(ember.int16).numpy())
