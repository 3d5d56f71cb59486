"""The inverse hyperbolic functions, frexp/ldexp, gcd/lcm and nextafter, composed of ember
ops.  The inverse hyperbolics run in float64 (accurate to the last bit of float32 and
better than 2 ulp in float64) and carry their exact derivatives."""
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase, where
from ember.core.function import Function, zero_derivative
from ember.core.math_composites import _floating
from ember.core.shape_composites import broadcast_tensors

__all__ = ["acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh", "frexp", "gcd", "lcm",
           "ldexp", "nextafter", "renorm"]

_FLOAT64 = _dtype_by_name["float64"]
_INT32 = _dtype_by_name["int32"]
_LN2 = 0.6931471805599453
_more = _T._more_functions()
_log1p, _log = _more["log1p"], _T.log


def _out(result, out):
    return result if out is None else out.copy_(result)


def _asinh64(x):
    a = x.abs()
    small = _log1p(a + a * a / (1 + (a * a + 1).sqrt()))
    big = _log(a) + _LN2                    # where a * a would overflow
    return where(a > 1e150, big, small) * x.sign()


def _acosh64(x):
    t = x - 1
    small = _log1p(t + (t * (x + 1)).sqrt())
    return where(x > 1e150, _log(x) + _LN2, small)


def _atanh64(x):
    return 0.5 * _log1p(2 * x / (1 - x))


class _InverseHyperbolic(Function):
    """forward in float64, backward d/dx written with ember ops (twice differentiable)."""

    @staticmethod
    def forward(ctx, x, which):
        ctx.save_for_backward(x)
        ctx.which = which
        value = _FORWARD[which](x.to(_FLOAT64))
        return value.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if ctx.which == "asinh":
            return g * (x * x + 1).rsqrt(), None
        if ctx.which == "acosh":
            return g * (x * x - 1).rsqrt(), None
        return g / (1 - x * x), None


_FORWARD = {"asinh": _asinh64, "acosh": _acosh64, "atanh": _atanh64}


def _inverse_hyperbolic(which, input, out):
    x = _tensor_arg(input, which, position=1)
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_floating(x))
    if x.is_complex():
        raise NotImplementedError(f"ember: {which} of complex tensors is not implemented")
    return _out(_InverseHyperbolic.apply(x, which), out)


def asinh(input, *, out=None):
    """The inverse hyperbolic sine, log(x + sqrt(x^2 + 1))."""
    return _inverse_hyperbolic("asinh", input, out)


def acosh(input, *, out=None):
    """The inverse hyperbolic cosine, log(x + sqrt(x^2 - 1)) (NaN below 1)."""
    return _inverse_hyperbolic("acosh", input, out)


def atanh(input, *, out=None):
    """The inverse hyperbolic tangent, log((1 + x) / (1 - x)) / 2 (NaN outside [-1, 1])."""
    return _inverse_hyperbolic("atanh", input, out)


arcsinh, arccosh, arctanh = asinh, acosh, atanh


# -- frexp / ldexp ----------------------------------------------------------------------------

def _scale2(x, e):
    """x * 2**e for an integer tensor e, exact: applied as two factors, so that scales
    beyond the float range (subnormals up to 2**1074) do not overflow on the way."""
    half = e.div(2, rounding_mode="floor")
    two = _T.full((), 2.0, dtype=x.dtype, device=x.device)
    return x * two.pow(half) * two.pow(e - half)


class _Frexp(Function):
    @staticmethod
    def forward(ctx, x):
        x64 = x.to(_FLOAT64)
        a = x64.abs()
        finite = (a > 0) & a.isfinite()
        safe = where(finite, a, 1.0)
        e = _more["floor"](_more["log2"](safe)).long() + 1
        # log2 can be off by one next to powers of two: correct with the exact scale
        m = _scale2(safe, -e)
        e = where(m >= 1, e + 1, where(m < 0.5, e - 1, e))
        e = where(finite, e, 0)
        mantissa = where(finite, _scale2(x64, -e), x64)
        ctx.save_for_backward(e)
        return mantissa.to(x.dtype), e.to(_INT32)

    @staticmethod
    def backward(ctx, g_mantissa, g_exponent):
        e, = ctx.saved_tensors
        return _scale2(g_mantissa, -e)


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    (zero, inf and NaN keep exponent 0); exponent is int32."""
    x = _tensor_arg(input, "frexp", position=1)
    if not x.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    from ember.core.linalg._common import _result
    mantissa, exponent = _Frexp.apply(x)
    result = _result("frexp", ["mantissa", "exponent"], mantissa, exponent)
    if out is not None:
        out[0].copy_(mantissa)
        out[1].copy_(exponent)
        return out
    return result


def ldexp(input, other, *, out=None):
    """input * 2**other."""
    _tensor_arg(input, "ldexp", position=1)
    base = input if input.is_floating_point() else input.to(_floating(input))
    scale = _T.full((), 2.0, dtype=base.dtype, device=base.device).pow(other)
    return _out(base * scale, out)


# -- gcd / lcm ----------------------------------------------------------------------------------

def _integral(op, input, other):
    a = _tensor_arg(input, op, position=1)
    b = other if isinstance(other, TensorBase) else _T.tensor(other, device=a.device)
    dtype = _T.result_type(a, b)
    if dtype.is_floating_point or dtype.is_complex or dtype.name == "bool":
        raise NotImplementedError(f'"{op}_cpu" not implemented for '
                                  f"'{_T._st_name(dtype)}'")
    return a.to(dtype), b.to(dtype)


def _gcd(a, b):
    a, b = (t.abs() for t in broadcast_tensors(a, b))
    while bool((b != 0).any()):                 # Euclid, all elements at once
        nonzero = b != 0
        r = _more["remainder"](a, where(nonzero, b, 1))
        a, b = where(nonzero, b, a), where(nonzero, r, 0)
    return a


def gcd(input, other, *, out=None):
    """The greatest common divisor, elementwise (non-negative; gcd(0, 0) = 0)."""
    a, b = _integral("gcd", input, other)
    return _out(zero_derivative("gcd", _gcd, a, b), out)


def lcm(input, other, *, out=None):
    """The least common multiple, elementwise (non-negative; 0 when either is 0)."""
    a, b = _integral("lcm", input, other)

    def _lcm(a, b):
        g = _gcd(a, b)
        return where(g == 0, 0, (a // where(g == 0, 1, g) * b).abs()).to(a.dtype)
    return _out(zero_derivative("lcm", _lcm, a, b), out)


# -- nextafter ----------------------------------------------------------------------------------

_BITS = {"float64": "int64", "float32": "int32", "float16": "int16", "bfloat16": "int16"}


def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` towards ``other``, elementwise."""
    x = _tensor_arg(input, "nextafter", position=1)
    y = other if isinstance(other, TensorBase) else _T.tensor(other, device=x.device)
    dtype = _T.result_type(x, y)
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for "
                                  f"'{_T._st_name(dtype)}'")

    def _next(x, y):
        x, y = broadcast_tensors(x.to(dtype), y.to(dtype))
        ints = _dtype_by_name[_BITS[dtype.name]]
        bits = x.contiguous().view(ints)
        # away from zero in magnitude: +1 on the bit pattern; towards zero: -1
        up = (y > x) == (x >= 0)
        stepped = where(up, bits + 1, bits - 1).view(dtype)
        tiny = _T.tensor(1, dtype=ints, device=x.device).view(dtype)      # smallest subnormal
        from_zero = where(y > 0, tiny, -tiny)
        result = where(x == 0, from_zero, stepped)
        result = where(x == y, y, result)
        return where(x.isnan() | y.isnan(), x + y, result)
    return _out(zero_derivative("nextafter", _next, x, y), out)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice of ``input`` along ``dim`` whose ``p``-norm exceeds ``maxnorm``, rescaled
    to norm ``maxnorm`` (as PyTorch, by maxnorm / (norm + 1e-7))."""
    from ember.core.composites import vector_norm
    x = _tensor_arg(input, "renorm", position=1)
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"renorm: Expected a floating point or complex tensor as input. "
                           f"Got {_T._st_name(x.dtype)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.dim()} "
                           f"dimensions")
    dim = dim % x.dim()
    others = [d for d in range(x.dim()) if d != dim]
    norms = vector_norm(x, p, others, keepdim=True)
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).to(x.dtype)
    return _out(x * factor, out)
