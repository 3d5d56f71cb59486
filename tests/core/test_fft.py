"""ember.fft against torch.fft: the frequency helpers and shifts bit for bit, every transform
(1-D, 2-D, N-D; n/s padding and trimming; the three norms) to rounding."""
import numpy as np
import pytest
import torch

import ember
import ember.fft as FFT


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25, 3.0])
@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_fftfreq_and_rfftfreq_match_torch_exactly(n, d, dtype, device):
    kw_e = {} if dtype is None else {"dtype": getattr(ember, dtype)}
    kw_t = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(FFT, name)(n, d, device=device, **kw_e)
        want = getattr(torch.fft, name)(n, d, **kw_t)
        assert got.dtype.name == str(want.dtype)[6:] and got.device.type == device
        np.testing.assert_array_equal(got.numpy(force=True), want.numpy(force=True))


def test_fftfreq_errors():
    for name in ("fftfreq", "rfftfreq"):
        with pytest.raises(RuntimeError, match=r"negative dimension -1"):
            getattr(FFT, name)(-1)


@pytest.mark.parametrize("shape", [(5,), (4, 7), (2, 3, 6), (0, 3), ()])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, -1)])
def test_shifts_match_torch(shape, dim, device, oracle):
    if shape == ():
        for name in ("fftshift", "ifftshift"):
            with pytest.raises(RuntimeError, match="`shifts` required"):
                getattr(torch.fft, name)(torch.tensor(1.0))
            with pytest.raises(RuntimeError, match=f"{name}: `shifts` required"):
                getattr(FFT, name)(ember.tensor(1.0, device=device))
        return
    a = np.arange(int(np.prod(shape))).reshape(shape)
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    if len(shape) >= 2:
        e, t = e.transpose(0, -1), t.transpose(0, -1)
    for name in ("fftshift", "ifftshift"):
        oracle.assert_matches(getattr(FFT, name)(e, dim), getattr(torch.fft, name)(t, dim))


@pytest.mark.parametrize("name", ["irfft", "hfft"])
@pytest.mark.parametrize("n", [None, 1, 4, 9])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_one_dim_real_inverse_transforms_match_torch(name, n, norm, dim, dtype, device, oracle):
    a = (np.random.default_rng(0).standard_normal((5, 6)) * 4).astype(dtype)
    e, t = ember.tensor(a, device=device).t(), torch.tensor(a).t()
    got = getattr(FFT, name)(e, n, dim, norm)
    want = getattr(torch.fft, name)(t, n, dim, norm)
    oracle.assert_matches(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["irfft2", "irfftn", "hfft2", "hfftn"])
@pytest.mark.parametrize("s", [None, (3, 5), (4, -1)])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_many_dim_real_inverse_transforms_match_torch(name, s, norm, dtype, device, oracle):
    a = np.random.default_rng(1).standard_normal((2, 4, 6)).astype(dtype)
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    got = getattr(FFT, name)(e, s, norm=norm)
    want = getattr(torch.fft, name)(t, s, norm=norm)
    oracle.assert_matches(got, want, rtol=1e-4, atol=1e-4)
    if name.endswith("n"):
        oracle.assert_matches(getattr(FFT, name)(e, s, (0, 2), norm),
                              getattr(torch.fft, name)(t, s, (0, 2), norm), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("call,err", [
    ("F.irfft(T.arange(5.), n=0)", RuntimeError),
    ("F.irfft(T.ones(1))", RuntimeError),
    ("F.irfft(T.arange(5.), norm='x')", RuntimeError),
    ("F.irfft(T.arange(5.), dim=3)", IndexError),
    ("F.irfft(T.arange(5., dtype=T.float16))", RuntimeError),
    ("F.hfftn(T.ones(3, 3), s=(4,), dim=(0, 1))", RuntimeError),
])
def test_errors_match_torch(call, err):
    with pytest.raises(err) as got:
        eval(call, {"F": FFT, "T": ember})
    with pytest.raises(err) as want:
        eval(call, {"F": torch.fft, "T": torch})
    assert str(got.value) == str(want.value)


def _signal(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "irfft", "hfft"])
@pytest.mark.parametrize("n", [None, 1, 3, 8])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
def test_one_dim_transforms_match_torch(name, n, norm, dim, dtype, device, oracle):
    if name in ("rfft", "ihfft") and dtype.startswith("complex"):
        return                                        # refused: see the error test
    a = _signal((5, 6), dtype) * (4 if dtype == "int64" else 1)
    e, t = ember.tensor(a, device=device).t(), torch.tensor(a).t()
    got = getattr(FFT, name)(e, n, dim, norm)
    want = getattr(torch.fft, name)(t, n, dim, norm).resolve_conj()
    assert got.dtype.name == str(want.dtype)[6:]
    oracle.assert_matches(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn",
                                  "ihfft2", "ihfftn", "irfft2", "irfftn", "hfft2", "hfftn"])
@pytest.mark.parametrize("s", [None, (3, 5), (4, -1), (8, 2)])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_many_dim_transforms_match_torch(name, s, norm, dtype, device, oracle):
    if name.startswith(("rfft", "ihfft")) and dtype.startswith("complex"):
        dtype = "float64"
    a = _signal((2, 4, 6), dtype, 1)
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    got = getattr(FFT, name)(e, s, norm=norm)
    want = getattr(torch.fft, name)(t, s, norm=norm).resolve_conj()
    oracle.assert_matches(got, want, rtol=1e-4, atol=1e-4)
    if name.endswith("n"):
        for dim in ((0, 2), (2, 0)):
            oracle.assert_matches(getattr(FFT, name)(e, s, dim, norm),
                                  getattr(torch.fft, name)(t, s, dim, norm).resolve_conj(),
                                  rtol=1e-4, atol=1e-4)
    if name in ("fftn", "ifftn"):       # every dim
        oracle.assert_matches(getattr(FFT, name)(e), getattr(torch.fft, name)(t),
                              rtol=1e-4, atol=1e-4)


def test_round_trips_and_out():
    x = ember.randn(4, 6, dtype=ember.float64)
    assert ember.allclose(FFT.irfft(FFT.rfft(x), n=6), x)
    assert ember.allclose(FFT.ifft(FFT.fft(x)).real, x)
    assert ember.allclose(FFT.ifftn(FFT.fftn(x)).imag, ember.zeros(4, 6, dtype=ember.float64))
    assert ember.allclose(FFT.ifft2(FFT.fft2(x, norm="ortho"), norm="ortho").real, x)
    out = ember.empty(0, dtype=ember.complex128)
    assert FFT.fft(x, out=out) is out and out.shape == (4, 6)
    assert ember.allclose(out, FFT.fft(x))


@pytest.mark.parametrize("call,err", [
    ("F.rfft(T.ones(4, dtype=T.complex64))", RuntimeError),
    ("F.ihfft(T.ones(4, dtype=T.complex64))", RuntimeError),
    ("F.rfftn(T.ones(4, dtype=T.complex64))", RuntimeError),
    ("F.fft(T.ones(4, dtype=T.float16))", RuntimeError),
    ("F.fft(T.ones(4), n=0)", RuntimeError),
    ("F.fftn(T.ones(3, 3), s=(2,), dim=(0, 1))", RuntimeError),
    ("F.fftn(T.ones(3, 3), dim=(0, 0))", RuntimeError),
    ("F.fft(T.ones(3), norm='x')", RuntimeError),
    ("F.fft(T.tensor(1.))", IndexError),
])
def test_transform_errors_match_torch(call, err):
    with pytest.raises(err) as got:
        eval(call, {"F": FFT, "T": ember})
    with pytest.raises(err) as want:
        eval(call, {"F": torch.fft, "T": torch})
    assert str(got.value) == str(want.value)


def test_lazy_submodules():
    assert ember.fft is FFT and ember.linalg is ember.linalg
    assert sorted(FFT.__all__) == FFT.__all__ and set(FFT.__all__) <= set(dir(torch.fft))


@pytest.mark.parametrize("name,s,dim", [
    ("irfft", None, -1), ("irfft", 4, 0), ("irfft", 9, -1), ("irfft", 1, -1),
    ("hfft", None, -1), ("hfft", 7, 0), ("irfftn", None, None), ("irfftn", (3, 5), (0, 1)),
    ("irfft2", (7, 2), (-2, -1)), ("hfftn", (2, 8), (1, 0)), ("hfft2", None, (-2, -1))])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_inverse_transform_gradients_match_torch(name, s, dim, norm, dtype):
    a = _signal((4, 5), dtype, 2)
    e = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    fe, ft = getattr(FFT, name), getattr(torch.fft, name)
    ye = fe(e, s, dim, norm) if dim is not None else fe(e, s, norm=norm)
    yt = ft(t, s, dim, norm) if dim is not None else ft(t, s, norm=norm)
    g = np.random.default_rng(3).standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g, device=ye.device))
    yt.backward(torch.tensor(g))
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(e.grad.numpy(force=True), t.grad.numpy(force=True), rtol=tol, atol=tol)
    assert e.grad.dtype.name == dtype


_TRANSFORMS = {       # name: (call, whether a complex input is allowed)
    "fft": (lambda F, x, norm: F.fft(x, norm=norm), True),
    "fft n=9": (lambda F, x, norm: F.fft(x, n=9, norm=norm), True),
    "fft n=3 dim=0": (lambda F, x, norm: F.fft(x, n=3, dim=0, norm=norm), True),
    "ifft": (lambda F, x, norm: F.ifft(x, norm=norm), True),
    "fft2 s=(5, 7)": (lambda F, x, norm: F.fft2(x, s=(5, 7), norm=norm), True),
    "ifftn": (lambda F, x, norm: F.ifftn(x, norm=norm), True),
    "fftn dim=1": (lambda F, x, norm: F.fftn(x, dim=1, norm=norm), True),
    "irfft n=7": (lambda F, x, norm: F.irfft(x, n=7, norm=norm), True),
    "irfft2 s=(3, 9)": (lambda F, x, norm: F.irfft2(x, s=(3, 9), norm=norm), True),
    "hfft": (lambda F, x, norm: F.hfft(x, norm=norm), True),
    "hfftn s=(5, 8)": (lambda F, x, norm: F.hfftn(x, s=(5, 8), norm=norm), True),
    "rfft": (lambda F, x, norm: F.rfft(x, norm=norm), False),
    "rfft n=5": (lambda F, x, norm: F.rfft(x, n=5, norm=norm), False),
    "rfftn s=(3, 8)": (lambda F, x, norm: F.rfftn(x, s=(3, 8), norm=norm), False),
    "ihfft n=7": (lambda F, x, norm: F.ihfft(x, n=7, norm=norm), False),
    "ihfft2": (lambda F, x, norm: F.ihfft2(x, norm=norm), False),
}


def _input(L, complex_input):
    a = np.random.default_rng(5).standard_normal((4, 6, 2))
    if complex_input:
        return L.tensor(a[..., 0] + 1j * a[..., 1], dtype=L.complex128, requires_grad=True)
    return L.tensor(a[..., 0], requires_grad=True)


def _loss(y, L):
    if y.dtype.is_complex:
        return (y.abs() ** 2).sum()
    return (y * y * L.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum()


@pytest.mark.parametrize("name", list(_TRANSFORMS))
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("complex_input", [False, True])
def test_every_transform_differentiates_as_torch(name, norm, complex_input):
    """Each transform's gradient is its adjoint (PyTorch's conjugate convention), for real
    and complex inputs, with padding and trimming, under each norm."""
    call, takes_complex = _TRANSFORMS[name]
    if complex_input and not takes_complex:
        pytest.skip("a real-input transform")
    grads = []
    for L in (ember, torch):
        x = _input(L, complex_input)
        _loss(call(L.fft, x, norm), L).backward()
        grads.append(x.grad.resolve_conj().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-9)


def test_spectral_losses_and_fourier_layers_train_as_torch():
    """A log-magnitude spectral loss, an STFT loss and a Fourier layer (rfft, a complex
    weight, irfft): the gradients of the input and of the complex weight, and the second
    derivative through create_graph."""
    a = np.random.default_rng(6).standard_normal((2, 16))
    w = np.random.default_rng(7).standard_normal((2, 9, 2))
    out = []
    for L in (ember, torch):
        x = L.tensor(a, requires_grad=True)
        wc = L.tensor(w[..., 0] + 1j * w[..., 1], dtype=L.complex128, requires_grad=True)
        spec = (L.fft.rfft(x).abs() + 1e-3).log().mean()
        stft = L.stft(x.reshape(-1), n_fft=8, hop_length=2, return_complex=True,
                      window=L.hann_window(8, dtype=L.float64)).abs().sum()
        layer = L.fft.irfft(L.fft.rfft(x) * wc, n=16).pow(2).sum()
        gx, = L.autograd.grad(spec + stft + layer, x, create_graph=True)
        (gx.pow(2).sum() + layer).backward()
        out.append((x.grad.numpy(), wc.grad.resolve_conj().numpy()))
    for e, t in zip(*out):
        np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)


def test_forward_mode_through_a_transform_matches_torch():
    x = np.array([1.0, 2.0, -1.0, 0.5, 3.0])
    t = np.array([0.5, -1.0, 0.0, 2.0, 1.0])
    got = [L.func.jvp(lambda v: L.view_as_real(L.fft.rfft(v)), (L.tensor(x),), (L.tensor(t),))[1]
           .numpy() for L in (ember, torch)]
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12, atol=1e-12)
