"""Window functions: torch's ``hann_window``/``hamming_window``/``blackman_window``/
``bartlett_window``/``kaiser_window`` and the formulas ``torch.signal.windows`` shares.

A window is a constant: it is computed in float64 with NumPy and returned in the asked dtype
(the default float dtype) on the asked device."""
import math

from ember.core._autograd import set_requires_grad

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _np():
    import numpy
    return numpy


def _positions(np, n):
    return np.arange(n, dtype=np.float64)


def general_cosine(np, n, coefficients):
    """sum_k (-1)^k a_k cos(2 pi k x / (n - 1)), the symmetric window of length n."""
    x = _positions(np, n) * (2 * math.pi / (n - 1))
    return sum(((-1) ** k) * a * np.cos(k * x) for k, a in enumerate(coefficients))


def bartlett(np, n):
    return 1 - np.abs(2 * _positions(np, n) / (n - 1) - 1)


def kaiser(np, n, beta):
    x = 2 * _positions(np, n) / (n - 1) - 1
    return np.i0(beta * np.sqrt(np.clip(1 - x * x, 0, None))) / np.i0(beta)


def build(op, n, symmetric, formula, dtype, device, requires_grad):
    """The window ``formula(np, length)`` of length ``n``; a periodic one (``not
    symmetric``) is the symmetric window of n + 1 without its last sample."""
    from ember.core import _tensor as _T
    from ember.core._state import get_default_dtype
    if n < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length={n}")
    dtype = get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dtype}")
    np = _np()
    if n <= 1:
        values = np.ones(n)
    else:
        length = n if symmetric else n + 1
        values = formula(np, length)[:n]
    out = _T.tensor(np.ascontiguousarray(values), dtype=dtype, device=device)
    return set_requires_grad(out, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """0.5 - 0.5 cos(2 pi n / N), periodic (N = window_length) or symmetric."""
    return build("hann_window", window_length, not periodic,
                 lambda np, n: general_cosine(np, n, (0.5, 0.5)), dtype, device,
                 requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """alpha - beta cos(2 pi n / N)."""
    return build("hamming_window", window_length, not periodic,
                 lambda np, n: general_cosine(np, n, (alpha, beta)), dtype, device,
                 requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    return build("blackman_window", window_length, not periodic,
                 lambda np, n: general_cosine(np, n, (0.42, 0.5, 0.08)), dtype, device,
                 requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangular window 1 - |2n / N - 1|."""
    return build("bartlett_window", window_length, not periodic, bartlett, dtype, device,
                 requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta), I0 the modified Bessel function."""
    return build("kaiser_window", window_length, not periodic,
                 lambda np, n: kaiser(np, n, beta), dtype, device, requires_grad)
