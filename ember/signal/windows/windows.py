"""The window functions of ``torch.signal.windows``, each computed by core/windows.py's
builder (float64 NumPy, returned in the asked dtype and device)."""
import math

from ember.core import windows as _w

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _check_m(op, M):
    if M < 0:
        raise ValueError(f"{op} requires non-negative window length, got M={M}")


def _window(op, M, sym, formula, dtype, device, requires_grad):
    _check_m(op, M)
    return _w.build(op, M, sym, formula, dtype, device, requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window with zeros at both ends."""
    return _window("bartlett", M, sym, _w.bartlett, dtype, device, requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window, general_cosine with a = (0.42, 0.5, 0.08)."""
    return general_cosine(M, a=(0.42, 0.5, 0.08), sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sin(pi (n + 0.5) / M): the cosine (sine) window."""
    def formula(np, n):
        return np.sin(math.pi * (np.arange(n) + 0.5) / n)
    return _window("cosine", M, sym, formula, dtype, device, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau), centered by default."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")

    def formula(np, n):
        c = (n - 1) / 2 if center is None else center
        return np.exp(-np.abs(np.arange(n) - c) / tau)
    return _window("exponential", M, sym, formula, dtype, device, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """exp(-((n - (M - 1) / 2) / std)^2 / 2)."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def formula(np, n):
        x = np.arange(n) - (n - 1) / 2
        return np.exp(-((x / std) ** 2) / 2)
    return _window("gaussian", M, sym, formula, dtype, device, requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_k (-1)^k a_k cos(2 pi k n / (M - 1))."""
    coefficients = tuple(float(v) for v in a)
    return _window("general_cosine", M, sym,
                   lambda np, n: _w.general_cosine(np, n, coefficients), dtype, device,
                   requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=(alpha, 1.0 - alpha), sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, alpha=0.54, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, lambda np, n: _w.kaiser(np, n, beta), dtype, device,
                   requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Nuttall window, a four-term general_cosine."""
    return general_cosine(M, a=(0.3635819, 0.4891775, 0.1365995, 0.0106411), sym=sym,
                          dtype=dtype, device=device, requires_grad=requires_grad)
