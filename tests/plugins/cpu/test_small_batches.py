"""Batches of small float products (attention's q @ k.T, att @ v), and single ones that fill
whole panels, run on ember-cpu's register-tiled kernel (_small_gemm.h), batch entries shared
by the OpenMP team, instead of one OpenBLAS call after another: against float64 products and
against the BLAS path, over operand layouts (the transposing pack), ragged tiles, thread
counts and dtypes."""
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


def product(a, b, out=None):
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype) if out is None else out
    K._test_matmul(out, a, b)
    return out


# (B, M, N, K): attention's shapes, tails of every size (rows past a 4-row tile, columns past
# a 16-column panel, K past an 8 x 8 transpose block), and a tile taller than the matrix; single
# products (B = 1) take the tiles when N fills whole panels and A is rows of unit stride
SHAPES = [(64, 64, 64, 32), (6, 13, 21, 19), (5, 4, 8, 8), (3, 9, 40, 1), (7, 33, 17, 70),
          (1, 32, 128, 64), (1, 4, 64, 64), (1, 13, 48, 7), (1, 30, 20, 9)]


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
    previous = _blas._set_small_batches(False)
    try:
        blas = product(a, b)
    finally:
        _blas._set_small_batches(previous)
    np.testing.assert_allclose(got, blas, rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(Kd))


def test_strided_output_and_shared_b():
    """A C that is not rows of unit stride goes through a buffer; a B shared by the batch
    (stride 0) is packed for each entry alike."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 12, 20)).astype(np.float32)
    b = np.broadcast_to(rng.standard_normal((1, 20, 24)).astype(np.float32), (6, 20, 24))
    out = np.zeros((6, 24, 12), np.float32).transpose(0, 2, 1)
    product(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-5,
                               atol=1e-4)


def test_bits_do_not_depend_on_threads():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((64, 64, 32)).astype(np.float32)
    b = layout(rng.standard_normal((64, 32, 64)).astype(np.float32), True)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = product(a, b)
        ember.set_num_threads(2)
        two = product(a, b)
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
