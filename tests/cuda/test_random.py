"""Random fills on "cuda": the counter-based Philox4x32-10 of the CPU plugin, so for one seed
the uniform numbers on the GPU are the CPU's bit for bit (float32, float64, and float16/
bfloat16, computed in float32 and rounded), in row-major order of any strided output;
normal numbers agree with the CPU's to the last ulp or two of log/cos and have the right
statistics; errors as the CPU plugin."""
import numpy as np
import pytest

import ember

DEV = "cuda"
FLOATS = [ember.float32, ember.float64, ember.float16, ember.bfloat16]


def host(t):
    """values on the host as float64 (bfloat16 through float32)"""
    c = t.cpu()
    return (c.float() if c.dtype == ember.bfloat16 else c).numpy().astype(np.float64)


def bits(t):
    c = t.cpu()
    a = (c.float() if c.dtype == ember.bfloat16 else c).numpy()
    return a.view({8: np.uint64, 4: np.uint32, 2: np.uint16}[a.itemsize])


@pytest.mark.parametrize("dt", FLOATS)
def test_rand_is_the_cpus(dt):
    for seed in (0, 1234, 2**63 + 5):
        ember.manual_seed(seed)
        a = ember.rand(1000, device=DEV, dtype=dt)
        a2 = ember.rand(7, 13, device=DEV, dtype=dt)          # the offset moved on by 1000
        ember.manual_seed(seed)
        b = ember.rand(1000, dtype=dt)
        b2 = ember.rand(7, 13, dtype=dt)
        assert a.device.type == "cuda" and a.dtype == dt
        np.testing.assert_array_equal(bits(a), bits(b))
        np.testing.assert_array_equal(bits(a2), bits(b2))
        top = host(a).max()                  # float16/bfloat16 may round up to 1, as the CPU
        assert 0 <= host(a).min() and (top < 1 if dt in (ember.float32, ember.float64) else top <= 1)


@pytest.mark.parametrize("dt", [ember.float32, ember.float64])
def test_uniform_bounds_and_generators(dt):
    g, h = ember.Generator(DEV).manual_seed(77), ember.Generator().manual_seed(77)
    a = ember.empty(5000, device=DEV, dtype=dt).uniform_(-3.5, 2.25, generator=g)
    b = ember.empty(5000, dtype=dt).uniform_(-3.5, 2.25, generator=h)
    np.testing.assert_array_equal(bits(a), bits(b))
    assert -3.5 <= host(a).min() and host(a).max() < 2.25
    c = ember.empty(10, device=DEV, dtype=dt).uniform_(1.5, 1.5, generator=g)   # from == to
    assert (host(c) == 1.5).all()
    n = (1 << 20) + 3                                 # several waves of the grid
    big = ember.empty(n, device=DEV, dtype=dt).uniform_(generator=g)
    np.testing.assert_array_equal(bits(big), bits(_cpu_after(dt, 77, 5010, n)))


def _cpu_after(dt, seed, skip, n):
    """the CPU's n uniforms after `skip` draws of seed"""
    g = ember.Generator().manual_seed(seed)
    ember.empty(skip, dtype=dt).uniform_(generator=g)
    return ember.empty(n, dtype=dt).uniform_(generator=g)


@pytest.mark.parametrize("dt", FLOATS)
def test_strided_out_in_row_major_order(dt):
    """element i of a strided output, in row-major order, draws counter offset + i"""
    ember.manual_seed(9)
    x = ember.empty(30, 40, device=DEV, dtype=dt).t()
    x.uniform_()
    y = ember.empty(50, 60, device=DEV, dtype=dt)[::2, 1::3]
    y.normal_(1.0, 2.0)
    ember.manual_seed(9)
    xc = ember.empty(30, 40, dtype=dt).t()
    xc.uniform_()
    yc = ember.empty(50, 60, dtype=dt)[::2, 1::3]
    yc.normal_(1.0, 2.0)
    np.testing.assert_array_equal(bits(x), bits(xc))
    np.testing.assert_allclose(host(y), host(yc), rtol=1e-5 if dt in (ember.float32,
                               ember.float64) else 1e-2, atol=1e-5)
    ember.manual_seed(9)
    flat = ember.rand(1200, device=DEV, dtype=dt)     # the same draws, laid out flat
    np.testing.assert_array_equal(bits(x.contiguous()).reshape(-1), bits(flat))


@pytest.mark.parametrize("dt", [ember.float32, ember.float64])
def test_randn_statistics_and_cpu(dt):
    ember.manual_seed(5)
    a = ember.randn(200000, device=DEV, dtype=dt)
    ember.manual_seed(5)
    b = ember.randn(200000, dtype=dt)
    x, y = host(a), host(b)
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    assert abs((x < -1.96).mean() - 0.025) < 0.003
    np.testing.assert_allclose(x, y, rtol=2e-5 if dt == ember.float32 else 1e-12, atol=1e-6)
    n = ember.empty(100000, device=DEV, dtype=dt).normal_(3.0, 0.5)
    v = host(n)
    assert abs(v.mean() - 3.0) < 0.01 and abs(v.std() - 0.5) < 0.01
    z = ember.empty(100, device=DEV, dtype=dt).normal_(2.0, 0.0)
    assert (host(z) == 2.0).all()


@pytest.mark.parametrize("dt", [ember.float16, ember.bfloat16])
def test_randn_narrow_floats(dt):
    ember.manual_seed(6)
    a = host(ember.randn(50000, device=DEV, dtype=dt))
    ember.manual_seed(6)
    b = host(ember.randn(50000, dtype=dt))
    assert abs(a.mean()) < 0.02 and abs(a.std() - 1) < 0.02
    assert (a == b).mean() > 0.99                      # float32 math, then one rounding


def test_errors_and_empty():
    x = ember.empty(4, device=DEV)
    with pytest.raises(RuntimeError, match="expects from <= to"):
        x.uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match=r"expects std >= 0.0"):
        x.normal_(0.0, -1.0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
        ember.empty(3, dtype=ember.int32, device=DEV).uniform_()
    assert ember.rand(0, device=DEV).shape == (0,)
    assert ember.randn(3, 0, device=DEV).shape == (3, 0)
    ember.manual_seed(1)
    ember.rand(0, device=DEV)                          # an empty fill draws nothing
    a = ember.rand(5, device=DEV)
    ember.manual_seed(1)
    np.testing.assert_array_equal(bits(a), bits(ember.rand(5)))
