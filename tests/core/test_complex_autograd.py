"""Autograd through complex tensors against PyTorch: complex leaves, PyTorch's conjugate
convention (the gradient of a holomorphic op is grad * conj(f'(z)); abs, angle, real and
imag as written for complex inputs), real inputs of complex results (the real part), the
complex unary ops' values, complex random draws and forward mode through the views."""
import numpy as np
import pytest
import torch

import ember

_A = np.random.default_rng(0).standard_normal((3, 4, 2))
_B = np.random.default_rng(1).standard_normal((4, 3, 2))
_V = np.random.default_rng(2).standard_normal((3, 4))

# name: loss(L, z, w, x) of complex leaves z (3, 4), w (4, 3) and a real leaf x (3, 4)
_CASES = {
    "exp": lambda L, z, w, x: L.view_as_real(z.exp()).sum(),
    "div by a number": lambda L, z, w, x: L.view_as_real(z / (2 + 1j)).pow(2).sum(),
    "div by a tensor": lambda L, z, w, x: (z / (z + 3)).abs().sum(),
    "abs": lambda L, z, w, x: z.abs().sum(),
    "abs squared": lambda L, z, w, x: (z.abs() ** 2).mean(),
    "z conj(z)": lambda L, z, w, x: (z * z.conj()).real.sum(),
    "log": lambda L, z, w, x: z.log().imag.sum() + z.log().real.sum(),
    "sqrt": lambda L, z, w, x: L.view_as_real(z.sqrt()).sum(),
    "pow 2": lambda L, z, w, x: L.view_as_real(z ** 2).sum(),
    "pow 2.5": lambda L, z, w, x: (z ** 2.5).abs().sum(),
    "sum": lambda L, z, w, x: z.sum().abs(),
    "mean": lambda L, z, w, x: z.mean(0).abs().sum(),
    "matmul": lambda L, z, w, x: (z @ w).abs().sum(),
    "matmul of a real cast": lambda L, z, w, x: (x.to(L.complex128) @ w).abs().sum(),
    "cat": lambda L, z, w, x: L.cat([z, z * 2]).abs().sum(),
    "stack": lambda L, z, w, x: L.stack([z, z]).real.sum(),
    "flip": lambda L, z, w, x: (z.flip(0) * z).real.sum(),
    "sin cos": lambda L, z, w, x: (z.sin() + z.cos()).abs().sum(),
    "tanh sigmoid": lambda L, z, w, x: (z.tanh() + z.sigmoid()).abs().sum(),
    "sinh cosh tan": lambda L, z, w, x: (z.sinh() * 0.1 + z.cosh() * 0.1 + z.tan()).abs().sum(),
    "log2 log10 log1p": lambda L, z, w, x: (z.log2() + z.log10() + z.log1p()).abs().sum(),
    "expm1 exp2 rsqrt": lambda L, z, w, x: (z.expm1() + z.exp2() + z.rsqrt()).abs().sum(),
    "real imag": lambda L, z, w, x: (z.real * 2 + z.imag * 3).sum(),
    "angle": lambda L, z, w, x: z.angle().sum(),
    "real times complex": lambda L, z, w, x: (x * z).abs().sum(),
    "polar": lambda L, z, w, x: (L.polar(x.abs() + 1, x) * z).real.sum(),
    "complex": lambda L, z, w, x: L.complex(x, x * 2).abs().sum(),
    "sgn": lambda L, z, w, x: L.view_as_real(z.sgn()).sum(),
    "reciprocal square": lambda L, z, w, x: (z.reciprocal() + z.square()).abs().sum(),
    "conj products": lambda L, z, w, x: (z.conj() * z.conj()).imag.sum(),
    "cumsum": lambda L, z, w, x: z.cumsum(1).abs().sum(),
    "indexing": lambda L, z, w, x: z[[0, 2]].abs().sum() + z[1:, ::2].real.sum(),
    "transposes": lambda L, z, w, x: z.t().abs().sum() + z.mT.real.sum(),
    "einsum": lambda L, z, w, x: L.einsum("ij,jk->ik", z, w).abs().sum(),
    "linear": lambda L, z, w, x: L.nn.functional.linear(z, w.t()).abs().sum(),
    "where": lambda L, z, w, x: L.where(x > 0, z, z * 2).abs().sum(),
    "norm": lambda L, z, w, x: z.norm() + L.linalg.vector_norm(z, dim=1).sum(),
    "rotary embedding": lambda L, z, w, x: L.view_as_real(
        L.view_as_complex(L.stack([x, x * 0.5], -1)) * z.detach()).sum(),
    "expand": lambda L, z, w, x: z[0].expand(3, 4).abs().sum(),
    "sub add neg": lambda L, z, w, x: (z - 2 * z.conj() + 1j).abs().sum() + (-z).imag.sum(),
}


def _grads(L, case):
    def leaf(a):
        return L.tensor(a[..., 0] + 1j * a[..., 1], dtype=L.complex128, requires_grad=True)
    z, w, x = leaf(_A), leaf(_B), L.tensor(_V, requires_grad=True)
    loss = _CASES[case](L, z, w, x)
    loss.backward()
    return [float(loss)] + [None if t.grad is None else t.grad.resolve_conj().numpy()
                            for t in (z, w, x)]


@pytest.mark.parametrize("case", list(_CASES))
def test_gradients_match_torch(case):
    got, want = _grads(ember, case), _grads(torch, case)
    assert got[0] == pytest.approx(want[0], rel=1e-10)
    for g, t in zip(got[1:], want[1:]):
        assert (g is None) == (t is None)
        if t is not None:
            assert g.dtype == t.dtype
            np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-12)


_EDGES = [30 + 1j, -30 - 2j, 0j, -0j, complex(0, -0.0), complex(-4, -0.0), 1e-8 + 1e-8j,
          30j, -3.29 - 0.0021j, 25 + 3j]


@pytest.mark.parametrize("op", ["exp", "exp2", "log", "log2", "log10", "log1p", "expm1",
                                "sqrt", "rsqrt", "reciprocal", "square", "sin", "cos",
                                "sinh", "cosh", "tanh", "tan", "sigmoid"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_unary_values_match_torch(op, dtype):
    g = np.random.default_rng(3)
    z = np.concatenate([g.standard_normal(40) * 2 + 2j * g.standard_normal(40), _EDGES])
    got = getattr(ember, op)(ember.tensor(z, dtype=getattr(ember, dtype))).numpy()
    want = getattr(torch, op)(torch.tensor(z, dtype=getattr(torch, dtype))).numpy()
    tol = 1e-12 if dtype == "complex128" else 2e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    if op == "sqrt":                    # the sign of a zero imaginary part too
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


def test_complex_random_draws():
    """Real and imaginary parts each uniform in [0, 1) / each normal with variance 1/2."""
    ember.manual_seed(0)
    n = ember.randn(100000, dtype=ember.complex64)
    u = ember.rand(100000, dtype=ember.complex128)
    assert n.dtype is ember.complex64 and u.dtype is ember.complex128
    assert abs(float(n.real.var()) - 0.5) < 0.02 and abs(float(n.imag.var()) - 0.5) < 0.02
    assert abs(float((n.abs() ** 2).mean()) - 1.0) < 0.02
    assert 0 <= float(u.real.min()) and float(u.imag.max()) < 1
    assert abs(float(u.imag.mean()) - 0.5) < 0.01
    assert ember.randn_like(n).dtype is ember.complex64
    z = ember.empty(5, dtype=ember.complex64).normal_(0, 2)
    assert z.dtype is ember.complex64 and bool((z.imag != 0).all())


def test_a_complex_parameter_trains_as_torch():
    """SGD with momentum on a complex weight (a Fourier-layer style parameter)."""
    w0 = _A[..., 0] + 1j * _A[..., 1]
    out = []
    for L in (ember, torch):
        w = L.nn.Parameter(L.tensor(w0, dtype=L.complex128))
        x = L.tensor(_V)
        opt = L.optim.SGD([w], lr=0.05, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            ((x.to(L.complex128) * w).exp().abs() ** 2).mean().backward()
            opt.step()
        out.append(w.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10)


def test_forward_mode_through_the_complex_views():
    x = np.array([1.0, 2.0, -1.0, 0.5])
    t = np.array([1.0, 0.0, 0.5, -2.0])
    got = [L.func.jvp(lambda v: L.view_as_real(L.view_as_complex(v.reshape(2, 2)) * (2 + 1j)),
                      (L.tensor(x),), (L.tensor(t),))[1].numpy() for L in (ember, torch)]
    np.testing.assert_allclose(got[0], got[1])


def test_complex_exp_keeps_a_zero_imaginary_part():
    z = [complex(float("inf"), 0), complex(-float("inf"), 0), complex(2, -0.0), 1 + 2j]
    got = ember.exp(ember.tensor(z, dtype=ember.complex128)).numpy()
    want = torch.exp(torch.tensor(z, dtype=torch.complex128)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


@pytest.mark.parametrize("call", ["m.var(z, 1)", "z.std()", "m.var_mean(z, 0)[0]",
                                  "m.std_mean(z, 1, correction=0)[0]", "z.var(0, keepdim=True)"])
def test_variance_of_complex_tensors(call):
    """Real results, E|z - mean|^2 with the correction, and their gradients, as torch."""
    a = _A[..., 0] + 1j * _A[..., 1]
    out = []
    for m in (ember, torch):
        z = m.tensor(a, dtype=m.complex128, requires_grad=True)
        r = eval(call, {"m": m, "z": z})
        r.sum().backward()
        out.append((str(r.dtype).split(".")[-1], r.detach().numpy(), z.grad.resolve_conj().numpy()))
    assert out[0][0] == out[1][0] == "float64"
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-10, atol=1e-12)
