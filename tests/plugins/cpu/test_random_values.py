"""ember-cpu's random values from the Philox words (_random_rows.h): float32 normal draws
through vectorisable log and cos polynomials stay within a few ulp of Box-Muller computed
in float64 from the same words; uniform draws are exactly the words' top bits."""
import numpy as np
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


def test_uniform_never_reaches_its_upper_end():
    x = ember.empty(100000).uniform_(1.0, 1.0000001, generator=ember.Generator().manual_seed(1))
    assert (x.numpy() < np.float32(1.0000001)).all() and (x.numpy() >= 1.0).all()
