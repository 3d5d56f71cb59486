"""PyTorch's complex-number functions: complex, polar, real/imag, view_as_real/_complex,
conj, angle, isreal.

ember's conjugation is eager: conj() returns a new tensor holding the conjugate (PyTorch's
conj() is a lazy view with a conj bit); so is_conj() is always False and resolve_conj()
returns its input.  Values agree with PyTorch's; only aliasing differs (writing into
conj(x) does not change x)."""
import math

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase, view_as_complex, view_as_real
from ember.core.function import Function

__all__ = ["angle", "complex", "conj", "conj_physical", "imag", "is_complex", "is_conj", "is_neg",
           "polar", "real", "resolve_conj", "resolve_neg", "view_as_complex", "view_as_real"]


class _Parts(Function):
    """re + i im on the autograd path: the real part of the gradient goes to re, its
    imaginary part to im (PyTorch's derivative of complex())."""

    @staticmethod
    def forward(ctx, re, im, dtype):
        ctx.dtype = dtype
        return _T._complex_out(re, im, dtype, None, "complex")

    @staticmethod
    def backward(ctx, g):
        return _T._real(g), _T._imag(g), None

    @staticmethod
    def jvp(ctx, t_re, t_im, _):
        return _parts(t_re if t_re is not None else _T.zeros_like(t_im),
                      0.0 if t_im is None else t_im, ctx.dtype, None, "complex")


def _parts(re, im, dtype, out, op):
    """re + i im as ``dtype`` (im a tensor or a number), recorded where a part requires
    grad (``out=`` refuses that, as PyTorch's out= does)."""
    from ember.core._autograd import _tracked
    if out is None and any(isinstance(p, TensorBase) and _tracked(p) for p in (re, im)):
        if not isinstance(im, TensorBase):
            im = _T.full_like(re, float(im))
        return _Parts.apply(re, im, dtype)
    return _T._complex_out(re, im, dtype, out, op)


def _from_parts(re, im, op):
    """A complex tensor from float tensors re and im of one dtype (broadcast)."""
    if re.dtype is not im.dtype:
        raise RuntimeError(f"Expected object of scalar type {_T._st_name(re.dtype)} but got "
                           f"scalar type {_T._st_name(im.dtype)} for second argument")
    if re.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_T._st_name(re.dtype)} and {_T._st_name(im.dtype)}")
    return _parts(re, im, re.dtype.to_complex(), None, op)


@composite("complex")
def complex(real, imag, *, out=None):
    """real + i * imag, from two float tensors of one dtype (float32 -> complex64)."""
    _tensor_arg(real, "complex", "real", 1)
    _tensor_arg(imag, "complex", "imag", 1)
    r = _from_parts(real, imag, "complex")
    return r if out is None else _T._result_out(r, out, "complex")


@composite("polar")
def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle)), from two float tensors of one dtype."""
    _tensor_arg(abs, "polar", "abs", 1)
    _tensor_arg(angle, "polar", "angle", 1)
    r = _from_parts(abs * _T.cos(angle), abs * _T.sin(angle), "polar")
    return r if out is None else _T._result_out(r, out, "polar")


def real(input):
    """The real parts of ``input`` as a view (``input`` itself when it is real)."""
    return _T._real(_tensor_arg(input, "real", position=1))


def imag(input):
    """The imaginary parts of the complex ``input`` as a view."""
    return _T._imag(_tensor_arg(input, "imag", position=1))


def conj_physical(input, *, out=None):
    """The complex conjugate as a new tensor (``input`` itself for real tensors)."""
    x = _tensor_arg(input, "conj_physical", position=1)
    if not x.dtype.is_complex:
        return x if out is None else _T._result_out(x, out, "conj_physical")
    return _parts(_T._real(x), -_T._imag(x), x.dtype, out, "conj_physical")


def conj(input):
    """The complex conjugate (materialised: see the module's note)."""
    return conj_physical(_tensor_arg(input, "conj", position=1))


def resolve_conj(input):
    """``input``: ember never defers a conjugation."""
    return _tensor_arg(input, "resolve_conj", position=1)


def resolve_neg(input):
    """``input``: ember never defers a negation."""
    return _tensor_arg(input, "resolve_neg", position=1)


def is_complex(input):
    """True if ``input``'s dtype is complex64 or complex128."""
    return _tensor_arg(input, "is_complex", position=1).dtype.is_complex


def is_conj(input):
    """False: ember's conj() materialises."""
    _tensor_arg(input, "is_conj", position=1)
    return False


def is_neg(input):
    """False: ember has no lazy negation bit."""
    _tensor_arg(input, "is_neg", position=1)
    return False


def angle(input, *, out=None):
    """The argument of each element, atan2(imag, real); for real inputs 0 where >= 0, pi
    where negative (NaN stays NaN); integers give the default float dtype."""
    from ember.core.elementwise import _atan2
    x = _tensor_arg(input, "angle", position=1)
    if x.dtype.is_complex:
        r = _atan2(_T._imag(x), _T._real(x))
    else:
        if not x.is_floating_point():
            from ember.core._state import get_default_dtype
            x = x.to(get_default_dtype())
        r = _T.where(x < 0, math.pi, 0.0).to(x.dtype)
        r = _T.where(x != x, x, r)
    return r if out is None else _T._result_out(r, out, "angle")


class _ViewAsComplex(Function):
    """view_as_complex on the autograd path: the gradient is the view_as_real of the
    output's (PyTorch's derivative)."""

    @staticmethod
    def forward(ctx, x):
        return view_as_complex(x)

    @staticmethod
    def backward(ctx, g):
        return view_as_real(g.contiguous() if not g.is_contiguous() else g)

    @staticmethod
    def jvp(ctx, t):
        return view_as_complex(t.contiguous())


class _ViewAsReal(Function):
    """view_as_real on the autograd path: the gradient is the view_as_complex of the
    output's."""

    @staticmethod
    def forward(ctx, z):
        return view_as_real(z)

    @staticmethod
    def backward(ctx, g):
        return view_as_complex(g.contiguous())

    @staticmethod
    def jvp(ctx, t):
        return view_as_real(t)


def _set_real(self, value):
    """t.real = value: copies into the real view."""
    _T._real(self).copy_(value if isinstance(value, TensorBase) else
                         _T.full_like(_T._real(self), value))


def _set_imag(self, value):
    _T._imag(self).copy_(value if isinstance(value, TensorBase) else
                         _T.full_like(_T._imag(self), value))

