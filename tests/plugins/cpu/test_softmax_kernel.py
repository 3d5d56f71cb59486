"""ember-cpu's fused softmax entry (optional in the ABI) against NumPy, through its test twin:
every op over layouts and dtypes, the vectorised float32 exp over its whole range, thread
independence, and the error codes."""
import numpy as np
import pytest
from ember_cpu import _kernels as K

SOFTMAX, LOG_SOFTMAX, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD = range(4)
TOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-13}


def reference(op, a, b=None):
    a = a.astype(np.float64)
    if op in (SOFTMAX, LOG_SOFTMAX):
        s = a - a.max(-1, keepdims=True)
        lse = np.log(np.exp(s).sum(-1, keepdims=True))
        return np.exp(s - lse) if op == SOFTMAX else s - lse
    b = b.astype(np.float64)
    if op == SOFTMAX_BACKWARD:
        return b * (a - (a * b).sum(-1, keepdims=True))
    return a - np.exp(b) * a.sum(-1, keepdims=True)


def call(op, out, a, b=None):
    K._test_softmax(op, out, a, b)
    return out


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("length", [1, 15, 16, 17, 300])
@pytest.mark.parametrize("op", range(4))
def test_ops(op, length, layout, dtype):
    rng = np.random.default_rng(length)
    a = (rng.standard_normal((7, length)) * 5).astype(dtype)
    b = reference(LOG_SOFTMAX if op == LOG_SOFTMAX_BACKWARD else SOFTMAX,
                  rng.standard_normal((7, length))).astype(dtype)
    out = np.empty((7, length), dtype)
    if layout == "transposed":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
        out = np.asfortranarray(out)
    elif layout == "strided":
        a, b = np.repeat(a, 2, axis=1)[:, ::2], np.repeat(b, 2, axis=1)[:, ::2]
    got = call(op, out, a, b if op >= SOFTMAX_BACKWARD else None)
    want = reference(op, a, b)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[dtype],
                               atol=TOL[dtype] * max(1.0, np.abs(want).max()))


def test_bfloat16_rounds_through_float32():
    a = np.array([[1.0, 2.0, 3.0]], np.float32)
    bits = (a.view(np.uint32) >> 16).astype(np.uint16)
    out = np.empty_like(bits)
    K._test_softmax(SOFTMAX, out, bits, None, 15)
    got = (out.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_allclose(got, reference(SOFTMAX, a), rtol=8e-3)


def test_exp_over_its_whole_range():
    """softmax of [x, 0]: exp(x) / (1 + exp(x)) exercises the float32 exp from underflow
    (subnormals, then 0) to large values; log_softmax of one element is exactly 0."""
    x = np.concatenate([np.linspace(-110, 0, 20001), [-87.0, -88.5, -103.0, -104.5, -1e30]])
    x = x.astype(np.float32)
    rows = np.stack([x, np.zeros_like(x)], 1)
    got = call(SOFTMAX, np.empty_like(rows), rows)[:, 0]
    want = np.exp(x.astype(np.float64)) / (1 + np.exp(x.astype(np.float64)))
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-45)
    assert got[-1] == 0.0
    one = call(LOG_SOFTMAX, np.empty((5, 1), np.float32), rows[:5, :1])
    assert (one == 0).all()


def test_nan_inf_rows():
    inf, nan = np.inf, np.nan
    a = np.array([[nan, 1, 2], [inf, 1, 2], [-inf, -inf, -inf], [-inf, 0, 1]], np.float32)
    got = call(SOFTMAX, np.empty_like(a), a)
    assert np.isnan(got[:3]).all()
    np.testing.assert_allclose(got[3], reference(SOFTMAX, a[3:])[0], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", [SOFTMAX, LOG_SOFTMAX])
def test_row_max_and_nan_in_every_position(op, dtype):
    """The vectorised row maximum over whole vector blocks and the tail: a large element
    anywhere in a 37-long row must be found (else exp overflows), and a NaN anywhere must
    turn the whole row NaN."""
    n = 37
    big = np.random.default_rng(1).standard_normal((n, n)).astype(dtype)
    big[np.arange(n), np.arange(n)] = 1000           # exp(1000) overflows even float64
    got = call(op, np.empty_like(big), big)
    np.testing.assert_allclose(got, reference(op, big), rtol=TOL[dtype], atol=TOL[dtype])
    nan = big.copy()
    nan[np.arange(n), np.arange(n)] = np.nan
    assert np.isnan(call(op, np.empty_like(nan), nan)).all()


def test_thread_count_does_not_change_bits():
    a = np.random.default_rng(0).standard_normal((512, 200)).astype(np.float32)
    n0 = K._get_num_threads()
    try:
        K._set_num_threads(1)
        one = call(SOFTMAX, np.empty_like(a), a).copy()
        K._set_num_threads(2)
        two = call(SOFTMAX, np.empty_like(a), a)
    finally:
        K._set_num_threads(n0)
    assert one.tobytes() == two.tobytes()


def test_errors():
    f = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match="unknown op code"):
        K._test_softmax(4, f.copy(), f)
    with pytest.raises(ValueError, match="needs the output"):
        K._test_softmax(SOFTMAX_BACKWARD, f.copy(), f)
    with pytest.raises(NotImplementedError, match="softmax: not implemented for 'int64'"):
        K._test_softmax(SOFTMAX, np.ones((2, 3), np.int64), np.ones((2, 3), np.int64))
    with pytest.raises(TypeError, match="out's dtype"):
        K._test_softmax(SOFTMAX, f.copy(), f.astype(np.float64))
    with pytest.raises(ValueError, match="shapes"):
        K._test_softmax(SOFTMAX, np.ones((3, 2), np.float32), f)
    empty = np.ones((0, 3), np.float32)
    K._test_softmax(SOFTMAX, empty.copy(), empty)
