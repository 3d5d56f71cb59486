"""ember.fft: PyTorch's torch.fft over the dtypes ember has.

ember has no complex dtype yet, so a transform whose result is complex (fft, rfft, ihfft,
...) cannot be represented: those raise NotImplementedError rather than return a stand-in.
What is real stays available: the frequency helpers and shifts, and the inverse real
transforms (irfft*, hfft*) of a real input, which torch reads as a complex signal with zero
imaginary part.  Those run through NumPy's pocketfft on the host in the input's precision
(imported on first use) and come back to the input's device."""

from ember.core import _tensor as _T
from ember.core._state import get_default_dtype
from ember.core._tensor import TensorBase
from ember.core.composites import roll

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

_NORMS = (None, "backward", "ortho", "forward")
# hfft's scaling is irfft's the other way round: hfft(x, norm) == irfft(conj(x), swapped norm)
_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_result(name, signature):
    def transform(input, *args, **kwargs):
        raise NotImplementedError(f"ember.fft.{name}: complex tensors are not supported yet")
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = (f"torch.fft.{name}{signature}: its result is complex, which ember "
                         f"cannot represent yet, so it raises NotImplementedError.")
    return transform


fft = _complex_result("fft", "(input, n=None, dim=-1, norm=None)")
ifft = _complex_result("ifft", "(input, n=None, dim=-1, norm=None)")
rfft = _complex_result("rfft", "(input, n=None, dim=-1, norm=None)")
ihfft = _complex_result("ihfft", "(input, n=None, dim=-1, norm=None)")
fft2 = _complex_result("fft2", "(input, s=None, dim=(-2, -1), norm=None)")
ifft2 = _complex_result("ifft2", "(input, s=None, dim=(-2, -1), norm=None)")
rfft2 = _complex_result("rfft2", "(input, s=None, dim=(-2, -1), norm=None)")
ihfft2 = _complex_result("ihfft2", "(input, s=None, dim=(-2, -1), norm=None)")
fftn = _complex_result("fftn", "(input, s=None, dim=None, norm=None)")
ifftn = _complex_result("ifftn", "(input, s=None, dim=None, norm=None)")
rfftn = _complex_result("rfftn", "(input, s=None, dim=None, norm=None)")
ihfftn = _complex_result("ihfftn", "(input, s=None, dim=None, norm=None)")


def _real_input(input, op):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_floating_point():           # integers and bool: the default dtype
        return input.to(get_default_dtype())
    if input.dtype.itemsize < 4:
        raise RuntimeError(f"Unsupported dtype {input.type()[6:-6]}")
    return input


def _inverse_real(input, s, dim, norm, op, hermitian):
    """irfftn (or hfftn when ``hermitian``) of a real ``input`` over ``dim`` with output
    sizes ``s`` (the last one 2 * (m - 1) by default)."""
    import numpy as np
    x = _real_input(input, op)
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = range(x.dim()) if s is None else range(x.dim() - len(s), x.dim())
    dims = [_T._wrap_dim(d, x.dim()) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: FFT dims must be unique")
    if not dims:
        raise RuntimeError(f"{op}: must transform at least one axis")
    sizes = list(s) if s is not None else [x.shape[d] for d in dims]
    if s is None or sizes[-1] == -1:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, sizes)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    a = _T._to_host(x)
    out = np.fft.irfftn(a, sizes, dims, _SWAPPED[norm] if hermitian else (norm or "backward"))
    return _T._from_host(out, x.dtype, x.device)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: ``n`` real points (2 * (m - 1) by default) from the one-sided
    spectrum ``input`` along ``dim`` (real inputs only: ember has no complex dtype)."""
    return _inverse_real(input, None if n is None else [n], [dim], norm, "irfft", False)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfftn over the two dims ``dim`` (real inputs only)."""
    return _inverse_real(input, s, dim, norm, "irfft2", False)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn over ``dim`` (all dims by default) with output sizes ``s``
    (real inputs only)."""
    return _inverse_real(input, s, dim, norm, "irfftn", False)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian-symmetric signal given by its first half ``input``: ``n`` real
    points (2 * (m - 1) by default) along ``dim`` (real inputs only)."""
    return _inverse_real(input, None if n is None else [n], [dim], norm, "hfft", True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfftn over the two dims ``dim`` (real inputs only)."""
    return _inverse_real(input, s, dim, norm, "hfft2", True)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional FFT of a Hermitian-symmetric signal given by its half ``input``
    over ``dim`` (all dims by default) with output sizes ``s`` (real inputs only)."""
    return _inverse_real(input, s, dim, norm, "hfftn", True)


def _frequencies(n, count, d, dtype, device, requires_grad, wrap):
    """arange(count) / (d * n), the upper half counted backwards from -n when ``wrap``."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = get_default_dtype() if dtype is None else dtype
    k = _T.arange(count, dtype=dtype, device=device, requires_grad=requires_grad)
    if wrap:
        k = _T.where(k >= (n + 1) // 2, k - n, k)
    # times the reciprocal, as torch does, so that the values agree to the last bit (and
    # rfftfreq(0) is [nan] as there: 0 * (1 / 0))
    return k * (1.0 / (n * d) if n * d else float("inf"))


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n)."""
    return _frequencies(n, n, d, dtype, device, requires_grad, True)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's ``n // 2 + 1`` outputs: [0, 1, ..., n // 2] / (d * n)."""
    return _frequencies(n, n // 2 + 1, d, dtype, device, requires_grad, False)


def _shift(input, dim, op, half):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dims = range(input.dim()) if dim is None else ([dim] if isinstance(dim, int) else dim)
    dims = [_T._wrap_dim(d, input.dim()) for d in dims]
    if not dims:            # a 0-d input: torch's roll gets no shifts and refuses too
        raise RuntimeError(f"{op}: `shifts` required")
    return roll(input, [half(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    """``input`` rolled by half its size along ``dim`` (all dims by default): the zero
    frequency moves to the centre."""
    return _shift(input, dim, "fftshift", lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of fftshift: the centre moves back to index 0."""
    return _shift(input, dim, "ifftshift", lambda n: (n + 1) // 2)
