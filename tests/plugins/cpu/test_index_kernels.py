"""ember-cpu's `index` and `search` table entries (ABI 4) called directly on NumPy arrays:
gather/scatter against NumPy, bitwise determinism of the accumulating scatters across
thread counts, the wrap flag, and the error codes."""
import numpy as np
import pytest
from ember_cpu import _kernels as K

import ember

GATHER, SCATTER, ADD, MUL, AMAX, AMIN = range(6)
WRAP = 0x100
LEFT, RIGHT, MULTINOMIAL = range(3)


@pytest.fixture
def threads():
    old = K._get_num_threads()
    yield K._set_num_threads
    K._set_num_threads(old)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.int8, np.float16,
                                np.bool_])
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_matches_numpy(dt, axis):
    g = np.random.default_rng(0)
    a = g.integers(0, 2 if dt is np.bool_ else 100, size=(7, 9)).astype(dt)
    idx = g.integers(0, a.shape[axis], size=(5, 6) if axis == 0 else (7, 4))
    if axis == 0:
        idx = idx[:, :6]
    out = np.zeros(idx.shape, dt)
    K._test_index(GATHER, out, a[:, :out.shape[1]] if axis == 0 else a, idx, axis)
    src = a[:, :out.shape[1]] if axis == 0 else a
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, axis))


@pytest.mark.parametrize("op,ufunc", [(ADD, np.add), (MUL, np.multiply), (AMAX, np.maximum),
                                      (AMIN, np.minimum)])
@pytest.mark.parametrize("dt", [np.float64, np.int64, np.int32, np.uint8])
def test_scatter_reductions_match_numpy(op, ufunc, dt):
    g = np.random.default_rng(1)
    out = g.integers(1, 4, size=(6, 5)).astype(dt)
    src = g.integers(1, 4, size=(8, 5)).astype(dt)
    idx = g.integers(0, 6, size=(8, 5))
    want = out.copy()
    ufunc.at(want, (idx, np.arange(5)[None, :].repeat(8, 0)), src)
    K._test_index(op, out, src, idx, 0)
    np.testing.assert_array_equal(out, want)


def test_scatter_keeps_the_last_duplicate_and_wraps():
    out = np.zeros(4, np.float32)
    K._test_index(SCATTER | WRAP, out, np.array([1, 2, 3], np.float32), np.array([-1, 3, 0]), 0)
    np.testing.assert_array_equal(out, [3, 0, 0, 2])
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 0 with size 4"):
        K._test_index(SCATTER, out, np.ones(1, np.float32), np.array([-1]), 0)
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        K._test_index(GATHER | WRAP, np.zeros(1, np.float32), out, np.array([-5]), 0)


def test_index_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match="unknown op code"):
        K._test_index(6, x, x, np.zeros((2, 3), np.int64), 0)
    with pytest.raises(TypeError, match="int64"):
        K._test_index(GATHER, x, x, np.zeros((2, 3), np.int32), 0)
    with pytest.raises(ValueError, match="dim"):
        K._test_index(GATHER, x, x, np.zeros((2, 3), np.int64), 2)
    with pytest.raises(ValueError, match="shapes"):
        K._test_index(GATHER, x, x, np.zeros((3, 3), np.int64), 1)
    with pytest.raises(TypeError, match="dtype"):
        K._test_index(ADD, x, x.astype(np.float64), np.zeros((2, 3), np.int64), 0)


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_same_bits_for_any_thread_count(dim, threads):
    g = np.random.default_rng(2)
    src = g.standard_normal((512, 256)).astype(np.float32)
    idx = g.integers(0, 16, size=src.shape)                   # heavy duplication
    results = []
    for n in (1, 2, 3):
        threads(n)
        out = np.zeros((16, 256) if dim == 0 else (512, 16), np.float32)
        K._test_index(ADD, out, src, idx if dim == 0 else idx % 16, dim)
        results.append(out)
    for r in results[1:]:
        np.testing.assert_array_equal(r.view(np.int32), results[0].view(np.int32))


def test_ember_index_add_and_put_deterministic(threads):
    g = np.random.default_rng(3)
    src = ember.tensor(g.standard_normal((40000, 8)).astype(np.float32))
    index = ember.tensor(g.integers(0, 7, size=40000))
    flat = ember.tensor(g.integers(0, 50, size=200000))
    vals = ember.tensor(g.standard_normal(200000).astype(np.float32))
    got = []
    for n in (1, 2):
        ember.set_num_threads(n)
        a = ember.zeros(7, 8).index_add_(0, index, src)
        b = ember.zeros(50).index_put_((flat,), vals, accumulate=True)
        c = ember.zeros(7, 8).scatter_add_(0, index[:, None].expand(40000, 8), src)
        got.append([x.numpy().view(np.int32).copy() for x in (a, b, c)])
    for x, y in zip(*got):
        np.testing.assert_array_equal(x, y)


def test_search_matches_numpy():
    seq = np.array([[1.0, 2.0, 2.0, np.nan], [0.0, 5.0, 6.0, 7.0]])
    vals = np.array([[2.0, np.nan, 0.5], [7.0, -1.0, 5.5]])
    for op, side in ((LEFT, "left"), (RIGHT, "right")):
        out = np.zeros(vals.shape, np.int64)
        K._test_search(op, out, seq, vals)
        want = [np.searchsorted(seq[r], vals[r], side=side) for r in range(2)]
        np.testing.assert_array_equal(out, want)
    out32 = np.zeros((2, 3), np.int32)
    K._test_search(RIGHT, out32, seq.astype(np.int64) * 0 + [[1, 2, 2, 9]], vals.astype(
        np.int64) * 0 + 2)
    np.testing.assert_array_equal(out32, [[3, 3, 3], [3, 3, 3]])


def test_multinomial_search_and_row_checks():
    w = np.array([[0.0, 1.0, 0.0, 3.0]])
    u = np.array([[0.0, 0.2499, 0.25, 0.9999]])
    out = np.zeros((1, 4), np.int64)
    K._test_search(MULTINOMIAL, out, w, u)
    np.testing.assert_array_equal(out, [[1, 1, 3, 3]])
    for bad in ([[-1.0, 1.0]], [[np.nan, 1.0]], [[np.inf, 1.0]]):
        with pytest.raises(RuntimeError, match="`inf`, `nan` or element < 0"):
            K._test_search(MULTINOMIAL, np.zeros((1, 0), np.int64), np.array(bad),
                           np.zeros((1, 0)))
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        K._test_search(MULTINOMIAL, np.zeros((1, 1), np.int64), np.zeros((1, 2)),
                       np.zeros((1, 1)))
    with pytest.raises(TypeError, match="floating"):
        K._test_search(MULTINOMIAL, np.zeros((1, 1), np.int64), np.ones((1, 2), np.int64),
                       np.zeros((1, 1), np.int64))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "bool"])
def test_flip_and_shared_indices_along_the_last_dim(dtype):
    """index_select along the last dim with one index row for every position: flip's
    reversed indices run as a reversed copy, any other row as a gather."""
    a = np.random.default_rng(4).standard_normal((6, 9, 11)) * 50
    a = (a > 0) if dtype == "bool" else a.astype(dtype)
    t = ember.tensor(a)
    for dims in [(2,), (0, 2), (1,), (0, 1, 2)]:
        np.testing.assert_array_equal(t.flip(dims).numpy(), np.flip(a, dims))
    np.testing.assert_array_equal(t[:, ::2].flip(2).numpy(), np.flip(a[:, ::2], 2))
    for idx in ([10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1], [10, 9, 8], list(range(11))):
        np.testing.assert_array_equal(ember.index_select(t, 2, ember.tensor(idx)).numpy(),
                                      a[:, :, idx])
