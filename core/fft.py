"""ember.fft: PyTorch's torch.fft.

The transforms run NumPy's pocketfft on the host copy of the input, in the input's
precision (imported on first use), and come back to the input's device as complex64/
complex128 (or float32/float64 for the real-output ones: irfft*, hfft*): float32 and
integer inputs give complex64, float64 gives complex128, as in PyTorch.  Half precision is
refused as PyTorch's CPU does.  Every transform differentiates (forward and reverse mode)
with PyTorch's formulas: each is linear, and its derivative is its adjoint (_adjoint)."""

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg
from ember.core._state import get_default_dtype
from ember.core.shapes import roll

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

_NORMS = (None, "backward", "ortho", "forward")
# the inverse of a scaling: hfft(x, norm) == irfft(conj(x), swapped norm), and
# ihfft(x, norm) == conj(rfft(x, swapped norm))
_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _input(input, op, real_only=False, real_word="real"):
    """``input`` checked: integers and bool become the default dtype; half precision and,
    for the real-to-complex transforms, complex inputs are refused."""
    _tensor_arg(input, op, position=1)
    if input.dtype.is_complex:
        if real_only:
            raise RuntimeError(f"{op} expects a {real_word} input tensor, but got "
                               f"{_T._st_name(input.dtype)}")
        return input
    if not input.is_floating_point():
        return input.to(get_default_dtype())
    if input.dtype.itemsize < 4:
        raise RuntimeError(f"Unsupported dtype {_T._st_name(input.dtype)}")
    return input


def _plan(x, s, dim, norm, op, one_sided_output=False):
    """(sizes, dims) of a transform over ``dim`` with signal sizes ``s`` (-1 or None: the
    input's; for the complex-to-real transforms the last one defaults to 2 * (m - 1))."""
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = range(x.dim()) if s is None else range(x.dim() - len(s), x.dim())
    dim = [dim] if isinstance(dim, int) else list(dim)
    if dim and x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
    dims = [_T._wrap_dim(d, x.dim()) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = list(s) if s is not None else [x.shape[d] for d in dims]
    if one_sided_output:
        if not dims:
            raise RuntimeError(f"{op}: must transform at least one axis")
        if s is None or sizes[-1] == -1:
            sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, sizes)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return sizes, dims


def _to_tensor(arr, dt, like):
    return _T._from_host(arr, dt, like.device)


def _host(kind, x, sizes, dims, norm, flag):
    """One transform on the host copy of ``x`` (a tensor of the result's device):
    kind "c2c" (``flag``: inverse), "r2c" (rfftn; ``flag``: ihfftn, the conjugate with the
    swapped scaling) or "c2r" (irfftn; ``flag``: hfftn, of the conjugate input with the
    swapped scaling).  ``norm`` is the forward scaling's name."""
    import numpy as np
    a = _T._to_host(x)
    if kind == "c2c":
        if not dims:
            return _to_tensor(a, x.dtype.to_complex(), x)
        f = np.fft.ifftn if flag else np.fft.fftn
        return _to_tensor(f(a, sizes, dims, norm or "backward"), x.dtype.to_complex(), x)
    if kind == "r2c":
        out = np.fft.rfftn(a, sizes, dims, _SWAPPED[norm] if flag else (norm or "backward"))
        return _to_tensor(np.conj(out) if flag else out, x.dtype.to_complex(), x)
    scaling = _SWAPPED[norm] if flag else (norm or "backward")
    return _to_tensor(np.fft.irfftn(np.conj(a) if flag else a, sizes, dims, scaling),
                      x.dtype.to_real(), x)


def _fit(g, shape, dims):
    """The gradient of a transform's padded/trimmed input brought back to the input's
    ``shape`` along ``dims``: trimmed where the input was padded, zeros where it was
    trimmed."""
    for d in dims:
        m, k = shape[d], g.shape[d]
        if m < k:
            g = g.narrow(d, 0, m)
        elif m > k:
            g = _zero_padded(g, d, m)
    return g


def _zero_padded(g, d, m):
    """``g`` with zeros after it along ``d`` up to size ``m``."""
    shape = list(g.shape)
    shape[d] = m
    out = _T.zeros(shape, dtype=g.dtype, device=g.device)
    out.narrow(d, 0, g.shape[d]).copy_(g)
    return out


def _adjoint(kind, g, shape, sizes, dims, norm, flag):
    """PyTorch's derivative of each transform: the adjoint linear map applied to the
    output's gradient ``g`` (the conjugate convention), then fitted to the input's shape.
    A real input keeps the real part (the engine's conform).  Through _transform, so a
    gradient that itself requires grad (create_graph) is differentiated again."""
    from ember.core.complex_functions import conj_physical
    back = _SWAPPED[norm]
    if kind == "c2c":             # F^H: the opposite direction with the swapped scaling
        gi = _transform("c2c", g, sizes, dims, back, not flag)
    elif kind == "r2c":
        # the one-sided bins are the first of the full spectrum's: zero-pad the rest, then
        # the c2c adjoint (ihfftn: of the conjugate, its scaling the forward's own)
        padded = _zero_padded(g, dims[-1], sizes[-1])
        gi = _transform("c2c", conj_physical(padded) if flag else padded, sizes, dims,
                   norm if flag else back, True)
    else:
        # the adjoint of the one-sided inverse: the one-sided forward transform with the
        # same scaling, the bins that stand for themselves and their mirror image doubled
        gi = _transform("r2c", g, sizes, dims, norm if flag else back, False)
        last = dims[-1]
        double = sizes[-1] - gi.shape[last]
        if double > 0:
            scale = _T.ones(gi.shape[last], dtype=g.dtype, device=g.device)
            scale[1:1 + double] = 2.0
            gi = gi * scale.reshape([-1] + [1] * (gi.dim() - 1 - last))
        if flag:                  # hfftn transformed the conjugate
            gi = conj_physical(gi)
    return _fit(gi, shape, dims)


_FUNCTION = None


def _transform(kind, x, sizes, dims, norm, flag):
    """``_host``, recorded by autograd (and carrying tangents) where ``x`` is tracked."""
    from ember.core._autograd import _tracked
    if not _tracked(x):
        return _host(kind, x, sizes, dims, norm, flag)
    global _FUNCTION
    if _FUNCTION is None:         # made on first use: ember.autograd loads lazily
        from ember.core.function import Function

        class _Transform(Function):
            @staticmethod
            def forward(ctx, x, kind, sizes, dims, norm, flag):
                ctx.args = (kind, tuple(x.shape), sizes, dims, norm, flag)
                return _host(kind, x.detach(), sizes, dims, norm, flag)

            @staticmethod
            def backward(ctx, g):
                return (_adjoint(ctx.args[0], g, *ctx.args[1:]),) + (None,) * 5

            @staticmethod
            def jvp(ctx, t, *_):              # linear: the transform of the tangent
                kind, _shape, sizes, dims, norm, flag = ctx.args
                return _transform(kind, t, sizes, dims, norm, flag)
        _FUNCTION = _Transform
    return _FUNCTION.apply(x, kind, sizes, dims, norm, flag)


def _c2c(input, s, dim, norm, op, inverse):
    """fftn / ifftn: complex-to-complex (a real input is read as complex)."""
    x = _input(input, op)
    sizes, dims = _plan(x, s, dim, norm, op)
    return _transform("c2c", x, sizes, dims, norm, inverse)


def _r2c(input, s, dim, norm, op, hermitian):
    """rfftn (or ihfftn when ``hermitian``): the one-sided spectrum of a real input."""
    x = _input(input, op, True, "real-valued" if op.endswith(("n", "2")) else "real")
    sizes, dims = _plan(x, s, dim, norm, op)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    return _transform("r2c", x, sizes, dims, norm, hermitian)


def _c2r(input, s, dim, norm, op, hermitian):
    """irfftn (or hfftn when ``hermitian``) over ``dim`` with output sizes ``s`` (the last
    one 2 * (m - 1) by default); a real input is read as complex."""
    x = _input(input, op)
    sizes, dims = _plan(x, s, dim, norm, op, one_sided_output=True)
    return _transform("c2r", x, sizes, dims, norm, hermitian)


def _one(n):
    return None if n is None else [n]


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform of ``input`` along ``dim`` (``n`` points: the
    input is zero-padded or trimmed); complex result."""
    return _out(_c2c(input, _one(n), [dim], norm, "fft", False), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of fft along ``dim``."""
    return _out(_c2c(input, _one(n), [dim], norm, "ifft", True), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """fftn over the two dims ``dim``."""
    return _out(_c2c(input, s, dim, norm, "fft2", False), out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ifftn over the two dims ``dim``."""
    return _out(_c2c(input, s, dim, norm, "ifft2", True), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D discrete Fourier transform over ``dim`` (all dims, or the last len(s))."""
    return _out(_c2c(input, s, dim, norm, "fftn", False), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of fftn."""
    return _out(_c2c(input, s, dim, norm, "ifftn", True), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-sided FFT of a real ``input``: n // 2 + 1 complex points along ``dim``."""
    return _out(_r2c(input, _one(n), [dim], norm, "rfft", False), out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfftn over the two dims ``dim``."""
    return _out(_r2c(input, s, dim, norm, "rfft2", False), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D FFT of a real ``input``, one-sided along the last of ``dim``."""
    return _out(_r2c(input, s, dim, norm, "rfftn", False), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the one-sided inverse FFT of a real ``input``."""
    return _out(_r2c(input, _one(n), [dim], norm, "ihfft", True), out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ihfftn over the two dims ``dim``."""
    return _out(_r2c(input, s, dim, norm, "ihfft2", True), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse of hfftn: one-sided along the last of ``dim``."""
    return _out(_r2c(input, s, dim, norm, "ihfftn", True), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: ``n`` real points (2 * (m - 1) by default) from the one-sided
    spectrum ``input`` along ``dim``."""
    return _out(_c2r(input, _one(n), [dim], norm, "irfft", False), out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfftn over the two dims ``dim``."""
    return _out(_c2r(input, s, dim, norm, "irfft2", False), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn over ``dim`` (all dims by default) with output sizes ``s``."""
    return _out(_c2r(input, s, dim, norm, "irfftn", False), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian-symmetric signal given by its first half ``input``: ``n`` real
    points (2 * (m - 1) by default) along ``dim``."""
    return _out(_c2r(input, _one(n), [dim], norm, "hfft", True), out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfftn over the two dims ``dim``."""
    return _out(_c2r(input, s, dim, norm, "hfft2", True), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D FFT of a Hermitian-symmetric signal given by its half ``input`` over ``dim``
    (all dims by default) with output sizes ``s``."""
    return _out(_c2r(input, s, dim, norm, "hfftn", True), out)


def _out(result, out):
    return result if out is None else _T._result_out(result, out, "fft")


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
    _tensor_arg(input, op, position=1)
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


# The transforms read their input on the host: as composite ops, vmap runs them sample by
# sample (ember.func) instead of reading one sample's memory.
for _name in ("fft", "fft2", "fftn", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
              "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2",
              "rfftn"):
    globals()[_name] = composite(f"fft_{_name}")(globals()[_name])
