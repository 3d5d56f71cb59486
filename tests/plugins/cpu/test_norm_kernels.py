"""The CPU plugin's fused `norm` and `nll` entries: against NumPy references through the
test twin, equal to the core's composites through ember, the same bits at 1 and 2
threads, and errors for bad views or targets."""
import numpy as np
import pytest
from ember.core import _tensor as T
from ember_cpu import _kernels as K

import ember

# op codes (abi.h)
LAYER_NORM, LAYER_NORM_BACKWARD, BN_STATS, BN_APPLY, BN_BACKWARD, BN_BACKWARD_EVAL = range(6)
NLL, CROSS_ENTROPY, NLL_BACKWARD, CROSS_ENTROPY_BACKWARD = range(4)


def tol(dt):
    return 2e-5 if dt == np.float32 else 1e-12


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("m,n", [(7, 13), (64, 300), (200, 257), (1, 1)])
def test_layer_norm_twin_against_numpy(dt, m, n):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(m, n)).astype(dt) * 3 + 2
    w, b = rng.normal(size=n).astype(dt), rng.normal(size=n).astype(dt)
    y, mean, rstd = np.empty_like(x), np.empty(m, dt), np.empty(m, dt)
    K._test_fused("norm", LAYER_NORM, [y, mean, rstd, x, w, b], 1e-5)
    rm = x.astype(np.float64).mean(1)
    rr = 1 / np.sqrt(x.astype(np.float64).var(1) + 1e-5)
    np.testing.assert_allclose(mean, rm, rtol=tol(dt), atol=tol(dt))
    np.testing.assert_allclose(rstd, rr, rtol=tol(dt) * 10, atol=tol(dt))
    ref = (x - rm[:, None]) * rr[:, None] * w + b
    np.testing.assert_allclose(y, ref, rtol=tol(dt) * 10, atol=tol(dt) * 10)
    # backward against the closed form in float64
    g = rng.normal(size=(m, n)).astype(dt)
    gx, gw, gb = np.empty_like(x), np.empty(n, dt), np.empty(n, dt)
    K._test_fused("norm", LAYER_NORM_BACKWARD, [gx, gw, gb, g, x, mean, rstd, w])
    xhat = (x - rm[:, None]) * rr[:, None]
    h = g * w
    ref_gx = rr[:, None] * (h - h.mean(1, keepdims=True) - xhat * (h * xhat).mean(1, keepdims=True))
    np.testing.assert_allclose(gx, ref_gx, rtol=1e-3 if dt == np.float32 else 1e-9,
                               atol=1e-3 if dt == np.float32 else 1e-9)
    np.testing.assert_allclose(gw, (g * xhat).sum(0), rtol=1e-3, atol=1e-3 if dt == np.float32 else 1e-9)
    np.testing.assert_allclose(gb, g.sum(0), rtol=1e-4, atol=1e-4 if dt == np.float32 else 1e-10)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_batch_norm_twin_against_numpy(dt):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 4, 9)).astype(dt)
    mean, rstd = np.empty(4, dt), np.empty(4, dt)
    K._test_fused("norm", BN_STATS, [mean, rstd, x], 1e-3)
    np.testing.assert_allclose(mean, x.mean((0, 2)), rtol=tol(dt), atol=tol(dt))
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x.var((0, 2)) + 1e-3), rtol=tol(dt) * 10)
    w = rng.normal(size=4).astype(dt)
    y = np.empty_like(x)
    K._test_fused("norm", BN_APPLY, [y, x, mean, rstd, w, None])
    ref = (x - mean[:, None]) * (rstd * w)[:, None]
    np.testing.assert_allclose(y, ref, rtol=tol(dt) * 10, atol=tol(dt) * 10)
    g = rng.normal(size=x.shape).astype(dt)
    gx, gb = np.empty_like(x), np.empty(4, dt)
    K._test_fused("norm", BN_BACKWARD_EVAL, [gx, None, gb, g, x, mean, rstd, w])
    np.testing.assert_allclose(gx, g * (w * rstd)[:, None], rtol=tol(dt) * 10)
    np.testing.assert_allclose(gb, g.sum((0, 2)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("C", [11, 16, 27, 300])     # no whole block, one, a tail, many
def test_nll_twin_against_numpy(dt, C):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(9, C)).astype(dt) * 4
    t = rng.integers(0, C, size=9)
    t[2] = -100
    w = rng.uniform(0.5, 2, size=C).astype(dt)
    loss, wt = np.empty(9, dt), np.empty(9, dt)
    K._test_fused("nll", CROSS_ENTROPY, [loss, wt, a, t, w], -100)
    a64 = a.astype(np.float64)
    lse = np.log(np.exp(a64 - a64.max(1, keepdims=True)).sum(1)) + a64.max(1)
    keep = t != -100
    ts = np.where(keep, t, 0)
    ref = np.where(keep, -w[ts] * (a64[np.arange(9), ts] - lse), 0)
    np.testing.assert_allclose(loss, ref, rtol=tol(dt) * 10, atol=tol(dt) * 10)
    np.testing.assert_allclose(wt, np.where(keep, w[ts], 0))
    scale = rng.normal(size=9).astype(dt)
    gx = np.empty_like(a)
    K._test_fused("nll", CROSS_ENTROPY_BACKWARD, [gx, scale, a, t, w], -100)
    p = np.exp(a64 - lse[:, None])
    onehot = np.eye(C)[ts]
    ref_g = (scale * np.where(keep, w[ts], 0))[:, None] * (p - onehot)
    np.testing.assert_allclose(gx, ref_g, rtol=tol(dt) * 10, atol=tol(dt) * 10)
    K._test_fused("nll", NLL_BACKWARD, [gx, scale, None, t, w], -100)
    np.testing.assert_allclose(gx, -(scale * np.where(keep, w[ts], 0))[:, None] * onehot)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cross_entropy_row_max_and_nan_in_every_position(dt):
    """The row's logsumexp takes the vectorised row maximum (blocks, then the tail as the
    last whole block): a large logit anywhere in a 37-class row must be found (exp(1000)
    overflows), and a NaN anywhere makes the row's loss NaN."""
    n = 37
    a = np.random.default_rng(1).standard_normal((n, n)).astype(dt)
    a[np.arange(n), np.arange(n)] = 1000
    t = (np.arange(n) + 1) % n
    loss, wt = np.empty(n, dt), np.empty(n, dt)
    K._test_fused("nll", CROSS_ENTROPY, [loss, wt, a, t, None], -100)
    np.testing.assert_allclose(loss, 1000 - a[np.arange(n), t], rtol=1e-6)
    a[np.arange(n), np.arange(n)] = np.nan
    K._test_fused("nll", CROSS_ENTROPY, [loss, wt, a, t, None], -100)
    assert np.isnan(loss).all()


def test_nll_twin_errors():
    a = np.zeros((3, 4))
    loss, wt = np.empty(3), np.empty(3)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        K._test_fused("nll", NLL, [loss, wt, a, np.array([0, 4, 1]), None], -100)
    with pytest.raises(ValueError, match="contiguous"):
        K._test_fused("nll", NLL, [loss, wt, np.zeros((4, 3)).T, np.array([0, 1, 1]), None])
    with pytest.raises(ValueError, match="dtype"):
        K._test_fused("nll", NLL, [loss, wt, a.astype(np.float32), np.array([0, 1, 1]), None])
    with pytest.raises(NotImplementedError):
        K._test_fused("nll", NLL, [loss.astype(np.int64), wt.astype(np.int64), a.astype(np.int64),
                                   np.array([0, 1, 1]), None])
    with pytest.raises(NotImplementedError, match="unknown op code"):
        K._test_fused("nll", 9, [loss, wt, a, np.array([0, 1, 1]), None])


def test_norm_twin_errors():
    x = np.zeros((3, 4))
    with pytest.raises(ValueError, match="wrong sizes"):
        K._test_fused("norm", LAYER_NORM, [np.empty((3, 4)), np.empty(2), np.empty(3), x])
    with pytest.raises(ValueError, match="required operand is NULL"):
        K._test_fused("norm", LAYER_NORM, [np.empty((3, 4)), None, np.empty(3), x])
    with pytest.raises(NotImplementedError, match="unknown op code"):
        K._test_fused("norm", 17, [x])
    with pytest.raises(NotImplementedError):
        K._test_fused("norm", LAYER_NORM, [np.empty((3, 4), np.int64), np.empty(3, np.int64),
                                           np.empty(3, np.int64), x.astype(np.int64)])


# --- through ember: fused == composite ----------------------------------------------------

@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_fused_norm_backward_equals_composite(dtype):
    x = ember.randn(40, 33, dtype=dtype)
    g = ember.randn(40, 33, dtype=dtype)
    w, b = ember.randn(33, dtype=dtype), ember.randn(33, dtype=dtype)
    y, mean, rstd = ember.native_layer_norm(x, (33,), w, b, 1e-5)
    args = (g, x, (33,), mean, rstd, w, b, (True, True, True))
    fused = T.native_layer_norm_backward(*args)
    composite = T._norm_composite("native_layer_norm_backward", *args)
    r = 1e-4 if dtype == ember.float32 else 1e-11
    for f, c in zip(fused, composite):
        assert ember.allclose(f, c, rtol=r, atol=r)
    x4, g4 = ember.randn(5, 3, 4, 4, dtype=dtype), ember.randn(5, 3, 4, 4, dtype=dtype)
    w3 = ember.randn(3, dtype=dtype)
    for train in (True, False):
        rm, rv = ember.zeros(3, dtype=dtype), ember.ones(3, dtype=dtype)
        _, sm, si = ember.native_batch_norm(x4, w3, None, rm, rv, train, 0.1, 1e-5)
        args = (g4, x4, w3, rm, rv, sm, si, train, 1e-5, (True, True, True))
        fused = T.native_batch_norm_backward(*args)
        composite = T._norm_composite("native_batch_norm_backward", *args)
        for f, c in zip(fused, composite):
            assert ember.allclose(f, c, rtol=r, atol=r)


@pytest.mark.parametrize("ce", [True, False])
def test_fused_nll_equals_composite(ce):
    x = ember.randn(3, 7, 5, dtype=ember.float64)
    t = ember.randint(0, 7, (3, 5))
    t[0, 1] = -100
    w = ember.rand(7, dtype=ember.float64)
    fwd = "_cross_entropy_forward" if ce else "nll_loss_forward"
    loss, total = getattr(T, fwd)(x, t, w, 0, -100)
    rows, wt = T._nll_composite(fwd, x, t, w, 0, -100)
    assert ember.allclose(loss.reshape(-1), rows.reshape(3, 5).reshape(-1), rtol=1e-12, atol=1e-12)
    assert ember.allclose(total, wt.sum())
    bwd = "_cross_entropy_backward" if ce else "nll_loss_backward"
    for red, go in ((0, ember.randn(3, 5, dtype=ember.float64)), (1, ember.tensor(1.5, dtype=ember.float64)),
                    (2, ember.tensor(0.5, dtype=ember.float64))):
        args = (go, x, t, w, red, -100, total)
        assert ember.allclose(getattr(T, bwd)(*args), T._nll_composite(bwd, *args),
                              rtol=1e-12, atol=1e-12)


# --- thread determinism -------------------------------------------------------------------

def _run_all():
    """Every fused op on inputs above the parallel cutoff, as NumPy arrays."""
    rng = np.random.default_rng(3)
    out = []
    for dt in (np.float32, np.float64):
        x = rng.normal(size=(513, 260)).astype(dt)
        g = rng.normal(size=x.shape).astype(dt)
        w = rng.normal(size=260).astype(dt)
        y, mean, rstd = np.empty_like(x), np.empty(513, dt), np.empty(513, dt)
        K._test_fused("norm", LAYER_NORM, [y, mean, rstd, x, w, w], 1e-5)
        gx, gw, gb = np.empty_like(x), np.empty(260, dt), np.empty(260, dt)
        K._test_fused("norm", LAYER_NORM_BACKWARD, [gx, gw, gb, g, x, mean, rstd, w])
        x3 = x.reshape(9, 57, 260)
        bm, br, by = np.empty(57, dt), np.empty(57, dt), np.empty_like(x3)
        K._test_fused("norm", BN_STATS, [bm, br, x3], 1e-5)
        K._test_fused("norm", BN_APPLY, [by, x3, bm, br, None, None])
        bgx, bgw, bgb = np.empty_like(x3), np.empty(57, dt), np.empty(57, dt)
        K._test_fused("norm", BN_BACKWARD, [bgx, bgw, bgb, g.reshape(x3.shape), x3, bm, br,
                                            w[:57].copy()])
        t = rng.integers(0, 260, size=513)
        loss, wt, cgx = np.empty(513, dt), np.empty(513, dt), np.empty_like(x)
        K._test_fused("nll", CROSS_ENTROPY, [loss, wt, x, t, None], -100)
        K._test_fused("nll", CROSS_ENTROPY_BACKWARD, [cgx, wt, x, t, None], -100)
        out += [y, mean, rstd, gx, gw, gb, bm, br, by, bgx, bgw, bgb, loss, cgx]
    return out


def test_thread_count_does_not_change_bits():
    n0 = K._get_num_threads()
    try:
        K._set_num_threads(1)
        one = _run_all()
        K._set_num_threads(2)
        two = _run_all()
    finally:
        K._set_num_threads(n0)
    for a, b in zip(one, two):
        assert a.tobytes() == b.tobytes()
