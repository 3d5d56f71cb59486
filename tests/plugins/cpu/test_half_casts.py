"""ember-cpu's vectorised float32 -> float16 / bfloat16 casts of contiguous rows
(_cast_rows.h: F16C, integer arithmetic) give the bits of the element-by-element
conversion the strided path runs (ember/half.h): rounding to nearest even, overflow to
inf, subnormals, signed zeros, NaN payloads made canonical."""
import numpy as np
import pytest
import torch

import ember


def _values():
    rng = np.random.default_rng(0)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 65519, 65520, 65504, 1e-8, -1e-8,
                        6e-8, 3e-8, 2.98e-8, 5.96e-8, 0.0, -0.0, 1e-5, 6.1e-5, 3.4e38,
                        1.0009765625, 1.00048828125, 256.5, 257.5], dtype=np.float32)
    payloads = np.array([0x7FC00001, 0xFFC12345, 0x7F800001], dtype=np.uint32).view(np.float32)
    return np.concatenate([(rng.standard_normal(5000) * 1000).astype(np.float32), special,
                           (rng.standard_normal(5000) * 1e-6).astype(np.float32),
                           (rng.standard_normal(999) * 1e-7).astype(np.float32), payloads])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_contiguous_casts_have_the_elementwise_bits(dtype):
    x = _values()
    dt = getattr(ember, dtype)
    fast = ember.tensor(x).to(dt).view(ember.int16).numpy()
    strided = ember.tensor(np.stack([x, x], 1))[:, 0].to(dt).view(ember.int16).numpy()
    np.testing.assert_array_equal(fast, strided)
    want = torch.tensor(x).to(getattr(torch, dtype)).view(torch.int16).numpy()
    ok = ~np.isnan(x)                                  # NaN payloads: ember's canonical ones
    np.testing.assert_array_equal(fast[ok], want[ok])
