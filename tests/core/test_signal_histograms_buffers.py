"""Window functions (torch.*_window, torch.signal.windows), stft/istft, histogram/
histogramdd, histc-free binning, asarray/frombuffer/from_file, against torch."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(5)


def _close(e, t, atol=1e-5, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(e.numpy(), dtype=np.complex128),
                               t.detach().numpy().astype(np.complex128), atol=atol, rtol=rtol)


@pytest.mark.parametrize("name", ["bartlett_window", "blackman_window", "hamming_window",
                                  "hann_window", "kaiser_window"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, n, periodic):
    e = getattr(ember, name)(n, periodic)
    t = getattr(torch, name)(n, periodic)
    assert e.dtype == ember.float32 and tuple(e.shape) == tuple(t.shape)
    _close(e, t)
    e64 = getattr(ember, name)(n, periodic, dtype=ember.float64)
    assert e64.dtype == ember.float64
    _close(e64, getattr(torch, name)(n, periodic, dtype=torch.float64), atol=1e-12)


def test_window_arguments_and_errors():
    _close(ember.hamming_window(9, True, 0.5, 0.5), torch.hamming_window(9, True, 0.5, 0.5))
    _close(ember.kaiser_window(10, False, 5.0), torch.kaiser_window(10, False, 5.0))
    with pytest.raises(RuntimeError):
        ember.hann_window(-1)
    with pytest.raises(RuntimeError):
        ember.hann_window(4, dtype=ember.int64)
    w = ember.hann_window(4, requires_grad=True)
    assert w.grad_fn is None and w.requires_grad


@pytest.mark.parametrize("name,kw", [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.0}),
    ("gaussian", {"std": 1.5}), ("general_cosine", {"a": [0.5, 0.3, 0.2]}),
    ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}),
    ("kaiser", {"beta": 8.0}), ("nuttall", {})])
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows(name, kw, sym):
    e = getattr(ember.signal.windows, name)(11, sym=sym, **kw)
    t = getattr(torch.signal.windows, name)(11, sym=sym, **kw)
    _close(e, t)


@pytest.mark.parametrize("center,pad_mode", [(True, "reflect"), (True, "constant"),
                                             (False, "reflect")])
@pytest.mark.parametrize("normalized,onesided", [(False, True), (True, False)])
def test_stft_istft(center, pad_mode, normalized, onesided):
    x = RNG.standard_normal((2, 200)).astype(np.float32)
    win = torch.hann_window(32)
    kw = dict(n_fft=32, hop_length=8, center=center, pad_mode=pad_mode,
              normalized=normalized, onesided=onesided, return_complex=True)
    t = torch.stft(torch.tensor(x), window=win, **kw)
    e = ember.stft(ember.tensor(x), window=ember.hann_window(32), **kw)
    assert tuple(e.shape) == tuple(t.shape)
    _close(e, t, atol=1e-4)
    assert tuple(ember.tensor(x).stft(window=ember.hann_window(32), **kw).shape) == \
        tuple(t.shape)
    if center:
        ikw = dict(n_fft=32, hop_length=8, center=True, normalized=normalized,
                   onesided=onesided, length=200)
        ti = torch.istft(t, window=win, **ikw)
        ei = ember.istft(e, window=ember.hann_window(32), **ikw)
        _close(ei, ti, atol=1e-4)
        _close(ei, torch.tensor(x), atol=1e-4)           # the round trip


def test_stft_errors():
    with pytest.raises(RuntimeError):
        ember.stft(ember.randn(100), 16)                 # return_complex must be given
    with pytest.raises(RuntimeError):
        ember.stft(ember.randn(100), 16, win_length=32, return_complex=True)


@pytest.mark.parametrize("density", [False, True])
def test_histogram(density):
    x = RNG.standard_normal(50).astype(np.float32)
    w = RNG.uniform(size=50).astype(np.float32)
    for bins, kw in [(7, {}), (5, {"range": (-1.0, 1.0)}), (4, {"weight": w})]:
        tk = {k: torch.tensor(v) if k == "weight" else v for k, v in kw.items()}
        ek = {k: ember.tensor(v) if k == "weight" else v for k, v in kw.items()}
        th, tb = torch.histogram(torch.tensor(x), bins, density=density, **tk)
        eh, eb = ember.histogram(ember.tensor(x), bins, density=density, **ek)
        _close(eh, th)
        _close(eb, tb)
    edges = np.array([-2.0, -0.5, 0.0, 3.0], dtype=np.float32)
    th, _ = torch.histogram(torch.tensor(x), torch.tensor(edges), density=density)
    eh, _ = ember.tensor(x).histogram(ember.tensor(edges), density=density)
    _close(eh, th)


def test_histogramdd():
    x = RNG.standard_normal((40, 2)).astype(np.float32)
    t = torch.histogramdd(torch.tensor(x), bins=[3, 4])
    e = ember.histogramdd(ember.tensor(x), bins=[3, 4])
    _close(e.hist, t.hist)
    for eb, tb in zip(e.bin_edges, t.bin_edges):
        _close(eb, tb)
    t = torch.histogramdd(torch.tensor(x), bins=2, range=[-1.0, 1.0, -2.0, 2.0], density=True)
    e = ember.histogramdd(ember.tensor(x), bins=2, range=[-1.0, 1.0, -2.0, 2.0], density=True)
    _close(e.hist, t.hist)
    with pytest.raises(RuntimeError):
        ember.histogram(ember.tensor([1, 2, 3]), 3)         # integer input


def test_asarray():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    e, t = ember.asarray(a), torch.asarray(a)
    assert e.tolist() == t.tolist() and e.dtype == ember.float32
    a[0, 0] = 9                                       # shares the NumPy buffer, as torch
    assert e[0, 0].item() == t[0, 0].item() == 9
    e2 = ember.asarray(a, copy=True)
    a[0, 0] = 1
    assert e2[0, 0].item() == 9
    x = ember.ones(3)
    assert ember.asarray(x) is x
    assert ember.asarray(x, dtype=ember.float64).dtype == ember.float64
    assert ember.asarray([1, 2.5]).dtype.name == str(torch.asarray([1, 2.5]).dtype)[6:]
    assert ember.asarray(3).shape == () and ember.asarray([[1, 2]], dtype=ember.int32).dtype \
        == ember.int32
    with pytest.raises(ValueError):
        ember.asarray(np.arange(3), copy=False, dtype=ember.float64)


def test_frombuffer_and_from_file(tmp_path):
    buf = bytearray(np.arange(5, dtype=np.int32).tobytes())
    e = ember.frombuffer(buf, dtype=ember.int32, count=3, offset=4)
    t = torch.frombuffer(bytearray(buf), dtype=torch.int32, count=3, offset=4)
    assert e.tolist() == t.tolist() == [1, 2, 3]
    buf[4] = 7                                        # shares the buffer
    assert e[0].item() == 7
    with pytest.raises(ValueError):
        ember.frombuffer(bytearray(3), dtype=ember.int32)
    path = tmp_path / "data.bin"
    path.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    e = ember.from_file(str(path), size=4, dtype=ember.float32)
    t = torch.from_file(str(path), size=4, dtype=torch.float32)
    assert e.tolist() == t.tolist()
    s = ember.from_file(str(path), shared=True, size=4, dtype=ember.float32)
    s[0] = 5.0
    del s
    assert np.frombuffer(path.read_bytes(), dtype=np.float32)[0] == 5.0


def test_histogram_defaults_to_100_bins_as_torch():
    x = np.random.default_rng(2).standard_normal(500).astype(np.float32)
    e, t = ember.histogram(ember.tensor(x)), torch.histogram(torch.tensor(x))
    np.testing.assert_array_equal(e.hist.numpy(), t.hist.numpy())
    np.testing.assert_allclose(e.bin_edges.numpy(), t.bin_edges.numpy(), rtol=1e-5, atol=1e-6)
    assert len(ember.tensor(x).histogram().hist) == 100
