"""Float products on ember-cpu's packed kernel (_gemm.h), tiles of C shared by ember's
OpenMP team instead of OpenBLAS's own threads: against float64 products and against the BLAS
path, over operand layouts, every tail (rows past a 6-row tile, columns past a panel, K past
a 256-step block, N past a 2048-column block), batches, accumulation (the LSTM's weight
gradient) and thread counts."""
import numpy as np
import pytest

import ember

K = pytest.importorskip("ember_cpu._kernels")
_blas = pytest.importorskip("ember_cpu._blas")

TOL = {np.float32: 2e-5, np.float64: 1e-12}


def layout(x, transposed):
    """x itself, or the same values held column-major (a transposed view)."""
    if not transposed:
        return x
    return np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)


def product(a, b, packed=True):
    """K._test_matmul on the packed path (the small-batch kernel off) or on BLAS."""
    out = np.full((a.shape[0], a.shape[1], b.shape[2]), np.nan, a.dtype)
    small, before = _blas._set_small_batches(False), _blas._set_packed(packed)
    try:
        K._test_matmul(out, a, b)
    finally:
        _blas._set_small_batches(small)
        _blas._set_packed(before)
    return out


# (B, M, N, K): a language model's decoder, tails of every kind (K in whole and part blocks
# of 8 for the vector packs, the last pack's spill past a block of whole panels), a C taller
# than wide (split by rows), a batch of entries
SHAPES = [(1, 70, 197, 20), (1, 7, 17, 5), (1, 6, 16, 1), (1, 145, 33, 257), (1, 9, 2100, 3),
          (1, 300, 40, 600), (3, 20, 64, 70), (2, 13, 23, 513), (1, 12, 40, 64)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("a_t,b_t", [(False, False), (True, False), (False, True), (True, True)])
def test_against_float64_and_blas(shape, a_t, b_t, dtype):
    B, M, N, Kd = shape
    rng = np.random.default_rng(sum(shape))
    a = layout(rng.standard_normal((B, M, Kd)).astype(dtype), a_t)
    b = layout(rng.standard_normal((B, Kd, N)).astype(dtype), b_t)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = product(a, b)
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(Kd))
    np.testing.assert_allclose(got, product(a, b, packed=False), rtol=TOL[dtype],
                               atol=TOL[dtype] * np.sqrt(Kd))


@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_narrower_variants(level, dtype):
    """The SSE2 and AVX2 variants (their panels are narrower) on whichever CPU runs the
    tests: every tail, both layouts."""
    previous = _blas._set_gemm_cap(level)
    try:
        for B, M, N, Kd in SHAPES:
            rng = np.random.default_rng(M)
            a = layout(rng.standard_normal((B, M, Kd)).astype(dtype), True)
            b = layout(rng.standard_normal((B, Kd, N)).astype(dtype), N % 2 == 0)
            np.testing.assert_allclose(product(a, b), a.astype(np.float64) @ b.astype(np.float64),
                                       rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(Kd))
    finally:
        _blas._set_gemm_cap(previous)


def test_shared_b_and_strided_rows():
    """A B shared by the batch (stride 0) folds the batch into rows; A rows with a gap
    between them (a narrowed view) are read in place."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 30, 50)).astype(np.float32)[:, :, :40]
    b = np.broadcast_to(rng.standard_normal((1, 40, 48)).astype(np.float32), (4, 40, 48))
    np.testing.assert_allclose(product(a, b), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-5, atol=1e-4)


def test_bits_do_not_depend_on_threads():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((1, 301, 700)).astype(np.float32)
    b = layout(rng.standard_normal((1, 700, 530)).astype(np.float32), True)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = product(a, b)
        ember.set_num_threads(2)
        two = product(a, b)
    finally:
        ember.set_num_threads(before)
    assert np.array_equal(one, two)


def test_public_matmul_and_linear_against_torch():
    """The decoder of a language model through the public API, forward and backward (the
    weight gradient reads a transposed operand), against torch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((70, 40)).astype(np.float32)
    w = rng.standard_normal((300, 40)).astype(np.float32)
    g = rng.standard_normal((70, 300)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        lx, lw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.linear(lx, lw)
        y.backward(lib.tensor(g))
        results.append([t.detach().numpy() for t in (y, lx.grad, lw.grad)])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4)


def test_lstm_weight_gradient_against_blas():
    """The LSTM layer's backward sums dz^T h_prev over steps on the packed kernel (two
    products, the second accumulating): the same gradients as on BLAS."""
    ember.manual_seed(0)
    lstm = ember.nn.LSTM(24, 32)
    x = ember.randn(9, 5, 24)
    grads = []
    for packed in (True, False):
        before = _blas._set_packed(packed)
        try:
            lstm.zero_grad()
            lstm(x)[0].square().sum().backward()
        finally:
            _blas._set_packed(before)
        grads.append([p.grad.numpy().copy() for p in lstm.parameters()])
    for mine, blas in zip(*grads):
        np.testing.assert_allclose(mine, blas, rtol=1e-5, atol=1e-5)
