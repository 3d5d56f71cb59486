"""ember-cpu's own float product kernels against float64 products and against the BLAS
path: batches of small products (attention's q @ k.T, att @ v) and single ones that fill
whole panels on the register-tiled kernel (_small_gemm.h), batch entries shared by the
OpenMP team; everything else of 6 rows or more on the packed, blocked GEMM (_gemm.h), tiles
of C shared by the team instead of OpenBLAS's own threads.  Over operand layouts (the
transposing packs), every tail (rows past a tile, columns past a panel, K past a block),
batches, accumulation (the LSTM's weight gradient), kernel variants and thread counts."""
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


def product(a, b, out=None, small=True, packed=True):
    """K._test_matmul with the small-batch kernel and the packed one each on or off (both
    off: BLAS)."""
    out = np.full((a.shape[0], a.shape[1], b.shape[2]), np.nan, a.dtype) if out is None else out
    was_small, was_packed = _blas._set_small_batches(small), _blas._set_packed(packed)
    try:
        K._test_matmul(out, a, b)
    finally:
        _blas._set_small_batches(was_small)
        _blas._set_packed(was_packed)
    return out


def assert_product(got, a, b, dtype):
    Kd = a.shape[2]
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64),
                               rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(Kd))


# (B, M, N, K) on the small kernel: attention's shapes, tails of every size (rows past a
# 4-row tile, columns past a 16-column panel, K past an 8 x 8 transpose block), and a tile
# taller than the matrix; single products (B = 1) take the tiles when N fills whole panels
# and A is rows of unit stride; C of one AVX-512 vector's columns or fewer takes the 8-row
# tiles there (attention's 16-wide heads, rows past a tile of 8, float64's 8 columns); an
# entry's buffers live on the stack up to 4096 elements, in malloc'd memory past that
SMALL = [(64, 64, 64, 32), (6, 13, 21, 19), (5, 4, 8, 8), (3, 9, 40, 1), (7, 33, 17, 70),
         (1, 32, 128, 64), (1, 4, 64, 64), (1, 13, 48, 7), (1, 30, 20, 9),
         (64, 32, 16, 32), (64, 32, 32, 16), (3, 13, 16, 5), (2, 11, 8, 9), (2, 20, 12, 300)]
# on the packed kernel (the small one off): a language model's decoder, tails of every kind
# (K in whole and part blocks of 8 for the vector packs, the last pack's spill past a block
# of whole panels), a C taller than wide (split by rows), a batch of entries
PACKED = [(1, 70, 197, 20), (1, 7, 17, 5), (1, 6, 16, 1), (1, 145, 33, 257), (1, 9, 2100, 3),
          (1, 300, 40, 600), (3, 20, 64, 70), (2, 13, 23, 513), (1, 12, 40, 64)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,shape", [("small", s) for s in SMALL] +
                         [("packed", s) for s in PACKED])
@pytest.mark.parametrize("a_t,b_t", [(False, False), (True, False), (False, True), (True, True)])
def test_against_float64_and_blas(kernel, shape, a_t, b_t, dtype):
    B, M, N, Kd = shape
    rng = np.random.default_rng(sum(shape))
    a = layout(rng.standard_normal((B, M, Kd)).astype(dtype), a_t)
    b = layout(rng.standard_normal((B, Kd, N)).astype(dtype), b_t)
    got = product(a, b, small=kernel == "small")
    assert_product(got, a, b, dtype)
    np.testing.assert_allclose(got, product(a, b, small=False, packed=False), rtol=TOL[dtype],
                               atol=TOL[dtype] * np.sqrt(Kd))


def test_small_strided_output_and_shared_b():
    """A C that is not rows of unit stride goes through a buffer; a B shared by the batch
    (stride 0) is packed for each entry alike."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 12, 20)).astype(np.float32)
    b = np.broadcast_to(rng.standard_normal((1, 20, 24)).astype(np.float32), (6, 20, 24))
    out = np.zeros((6, 24, 12), np.float32).transpose(0, 2, 1)
    product(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-5,
                               atol=1e-4)


@pytest.mark.parametrize("kernel,a_shape,b_shape", [
    ("small", (64, 64, 32), (64, 32, 64)), ("packed", (1, 301, 700), (1, 700, 530))])
def test_bits_do_not_depend_on_threads(kernel, a_shape, b_shape):
    rng = np.random.default_rng(9)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = layout(rng.standard_normal(b_shape).astype(np.float32), True)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = product(a, b, small=kernel == "small")
        ember.set_num_threads(2)
        two = product(a, b, small=kernel == "small")
    finally:
        ember.set_num_threads(before)
    assert np.array_equal(one, two)


def test_attention_through_the_public_api():
    """q @ k.transpose(-2, -1) and att @ v on views of one projection, as a GPT block
    computes them, forward and backward, against torch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 16, 3 * 2 * 8)).astype(np.float32)
    g = rng.standard_normal((4, 2, 16, 8)).astype(np.float32)

    def attention(lib, x):
        q, k, v = x.split(2 * 8, dim=2)
        q, k, v = (t.view(4, 16, 2, 8).transpose(1, 2) for t in (q, k, v))
        return (q @ k.transpose(-2, -1)).softmax(-1) @ v

    ex = ember.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    ey, ty = attention(ember, ex), attention(torch, tx)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_narrower_variants(level, dtype):
    """The SSE2 and AVX2 variants (their panels are narrower) on whichever CPU runs the
    tests: every tail, both layouts."""
    previous = _blas._set_gemm_cap(level)
    try:
        width = 32 // np.dtype(dtype).itemsize     # 2 vectors of 16 bytes (SSE2)
        if level == 0:
            assert _blas._gemm_panel(dtype == np.float64) == width
        else:                                   # AVX2 where the CPU has it
            assert _blas._gemm_panel(dtype == np.float64) in (width, 2 * width)
        for B, M, N, Kd in PACKED:
            rng = np.random.default_rng(M)
            a = layout(rng.standard_normal((B, M, Kd)).astype(dtype), True)
            b = layout(rng.standard_normal((B, Kd, N)).astype(dtype), N % 2 == 0)
            assert_product(product(a, b, small=False), a, b, dtype)
    finally:
        _blas._set_gemm_cap(previous)


def test_packed_shared_b_and_strided_rows():
    """A B shared by the batch (stride 0) folds the batch into rows; A rows with a gap
    between them (a narrowed view) are read in place."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 30, 50)).astype(np.float32)[:, :, :40]
    b = np.broadcast_to(rng.standard_normal((1, 40, 48)).astype(np.float32), (4, 40, 48))
    assert_product(product(a, b, small=False), a, b, np.float32)


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
    for on in (True, False):
        before = _blas._set_packed(on)
        try:
            lstm.zero_grad()
            lstm(x)[0].square().sum().backward()
        finally:
            _blas._set_packed(before)
        grads.append([p.grad.numpy().copy() for p in lstm.parameters()])
    for mine, blas in zip(*grads):
        np.testing.assert_allclose(mine, blas, rtol=1e-5, atol=1e-5)
