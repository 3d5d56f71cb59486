"""ember-cpu's random values from the Philox words (_random_rows.h): float32 normal draws
through vectorisable log and cos polynomials stay within a few ulp of Box-Muller computed
in float64 from the same words; uniform draws are exactly the words' top bits, scaled to their
bounds with one rounding per operation."""
import numpy as np
import pytest
from ember_cpu import _random

import ember


def _words(seed, n):
    return np.array([_random._philox(i & 0xFFFFFFFF, i >> 32, 0, 0, seed & 0xFFFFFFFF,
                                     seed >> 32) for i in range(n)], dtype=np.uint64)


def test_normal_float32_is_box_muller_of_its_words():
    w = _words(5, 4000)
    u1 = (w[:, 0] >> 8) / 16777216.0 + 1 / 16777216.0
    u2 = (w[:, 1] >> 8) / 16777216.0
    exact = np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    got = ember.randn(4000, generator=ember.Generator().manual_seed(5)).numpy()
    ulps = np.abs(got - exact) / np.spacing(np.abs(exact).astype(np.float32))
    assert ulps.max() <= 4, ulps.max()
    m = ember.empty(4000).normal_(3.0, 0.5, generator=ember.Generator().manual_seed(5))
    np.testing.assert_allclose(m.numpy(), 3.0 + 0.5 * exact, rtol=2e-6, atol=2e-6)


def test_uniform_is_the_top_bits_of_its_words():
    w = _words(9, 1000)
    got = ember.rand(1000, generator=ember.Generator().manual_seed(9)).numpy()
    np.testing.assert_array_equal(got, ((w[:, 0] >> 8) / 16777216.0).astype(np.float32))
    d = ember.rand(1000, dtype=ember.float64, generator=ember.Generator().manual_seed(9))
    exact = ((w[:, 0] >> 5) * 67108864.0 + (w[:, 1] >> 6)) / 9007199254740992.0
    np.testing.assert_array_equal(d.numpy(), exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_bounds_round_product_and_sum_apart(dtype):
    """U[lo, hi) is lo + (hi - lo) * u with the product and the sum rounded apart, as
    ember-cuda computes it: an FMA (gcc contracts one in the AVX2/AVX-512 clones) gave
    other bits on about half the draws, so a seed gave other numbers on the GPU."""
    dt = ember.float32 if dtype is np.float32 else ember.float64
    u = ember.empty(5000, dtype=dt).uniform_(generator=ember.Generator().manual_seed(77))
    got = ember.empty(5000, dtype=dt).uniform_(-3.5, 2.25,
                                               generator=ember.Generator().manual_seed(77))
    lo, hi = dtype(-3.5), dtype(2.25)
    np.testing.assert_array_equal(got.numpy(), lo + (hi - lo) * u.numpy())


def test_uniform_never_reaches_its_upper_end():
    x = ember.empty(100000).uniform_(1.0, 1.0000001, generator=ember.Generator().manual_seed(1))
    assert (x.numpy() < np.float32(1.0000001)).all() and (x.numpy() >= 1.0).all()
