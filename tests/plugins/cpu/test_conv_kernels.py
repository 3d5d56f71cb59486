"""The CPU plugin's fused conv and pool kernels: equal to the core's composites (what a
device without them runs), and the same bits for 1 and 2 threads."""
import pytest
from ember.core import _tensor as T

import ember

CONV = [((1, 1), (1, 1), (1, 1), 1), ((2, 1), (0, 2), (1, 2), 2), ((1, 1), (0, 0), (1, 1), 2),
        ((3, 2), (2, 1), (2, 1), 1)]


@pytest.fixture
def threads():
    before = ember.get_num_threads()
    yield
    ember.set_num_threads(before)


@pytest.mark.parametrize("args", CONV)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("kernel", [(3, 3), (1, 1), (2, 3)])
def test_conv_kernel_matches_composite(args, dtype, kernel):
    g = args[3]
    x = ember.randn(3, 4, 9, 10, dtype=dtype)
    w = ember.randn(6, 4 // g, *kernel, dtype=dtype)
    b = ember.randn(6, dtype=dtype)
    r = T.convolution(x, w, b, *args)
    c = T._conv_composite(x, w, b, *args)
    tol = 1e-4 if dtype == ember.float32 else 1e-12
    assert ember.allclose(r, c, rtol=tol, atol=tol)
    go = ember.randn(*r.shape, dtype=dtype)
    fused = T.convolution_backward(go, x, w, *args, (True, True, True))
    comp = T._conv_composite(x, w, b, *args, grad_output=go)
    for f, c in zip(fused, comp):
        assert ember.allclose(f, c, rtol=tol, atol=tol)


POOL = [("max_pool2d_with_indices", ((3, 3), (2, 2), (1, 1), (1, 1), True)),
        ("max_pool2d_with_indices", ((2, 3), (1, 2), (1, 0), (2, 1), False)),
        ("avg_pool2d", ((3, 3), (2, 2), (1, 1), True, False, None)),
        ("avg_pool2d", ((2, 2), (1, 1), (1, 1), False, True, 3)),
        ("_adaptive_avg_pool2d", ((4, 3),)),
        ("adaptive_max_pool2d", ((4, 3),))]


@pytest.mark.parametrize("name, args", POOL)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_pool_kernel_matches_composite(name, args, dtype):
    x = ember.randn(2, 3, 9, 7, dtype=dtype)
    r = getattr(T, name)(x, *args)
    c = T._pool_composite(name, x, *args)
    tol = 1e-5 if dtype == ember.float32 else 1e-12
    if isinstance(r, tuple):
        assert ember.equal(r[1], c[1])
        r, c = r[0], c[0]
    assert ember.allclose(r, c, rtol=tol, atol=tol)


def _run_all():
    ember.manual_seed(0)
    x = ember.randn(16, 8, 30, 30)
    w = ember.randn(12, 4, 3, 3)
    out = T.convolution(x, w, None, (1, 1), (1, 1), (1, 1), 2)
    go = ember.randn(*out.shape)
    res = [out, *T.convolution_backward(go, x, w, (1, 1), (1, 1), (1, 1), 2, (True,) * 3)]
    m, i = T.max_pool2d_with_indices(x, (3, 3), (2, 2), (1, 1), (1, 1), False)
    res += [m, i, T.max_pool2d_with_indices_backward(m, x, (3, 3), (2, 2), (1, 1), (1, 1),
                                                     False, i)]
    a = T.avg_pool2d(x, (3, 3), (2, 2), (1, 1), False, True, None)
    res += [a, T.avg_pool2d_backward(a, x, (3, 3), (2, 2), (1, 1), False, True, None)]
    return res


def test_same_bits_for_any_thread_count(threads):
    from ember_cpu import _kernels
    if not _kernels._openmp_enabled():
        pytest.skip("built without OpenMP")
    ember.set_num_threads(1)
    one = _run_all()
    ember.set_num_threads(2)
    two = _run_all()
    for a, b in zip(one, two):
        assert ember.equal(a, b)


def test_bad_indices_raise():
    x = ember.randn(1, 1, 4, 4)
    g = ember.ones(1, 1, 2, 2)
    bad = ember.tensor([[[[0, 1], [2, 99]]]])
    with pytest.raises(IndexError, match="out of range"):
        T.max_pool2d_with_indices_backward(g, x, (2, 2), (2, 2), (0, 0), (1, 1), False, bad)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("kernel, padding", [((3, 3), (1, 1)), ((1, 1), (0, 0)),
                                             ((3, 3), (0, 0))])
def test_group_chunks_match_composite_and_one_thread(threads, n, kernel, padding):
    """Fewer samples than two per thread (vmap's per-sample gradients: one sample of many
    groups): threads share chunks of the groups, with one thread's bits."""
    from ember_cpu import _kernels
    ember.manual_seed(0)
    args = ((1, 1), padding, (1, 1), 16)
    x = ember.randn(n, 16 * 4, 14, 14)
    w = ember.randn(16 * 8, 4, *kernel)
    b = ember.randn(16 * 8)
    go = ember.randn(*T._conv_composite(x, w, b, *args).shape)
    res = {}
    for nt in (1, 2):
        ember.set_num_threads(nt)
        res[nt] = [T.convolution(x, w, b, *args),
                   *T.convolution_backward(go, x, w, *args, (True, True, True))]
    comp = [T._conv_composite(x, w, b, *args),
            *T._conv_composite(x, w, b, *args, grad_output=go)]
    for r, c in zip(res[1], comp):
        assert ember.allclose(r, c, rtol=1e-4, atol=1e-4)
    if _kernels._openmp_enabled():
        for a, c in zip(res[1], res[2]):
            assert ember.equal(a, c)
