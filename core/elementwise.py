"""Elementwise ops composed from primitive ops: clamp/clip and clamp_min/clamp_max,
sign/sgn, rsub, nan_to_num (lerp and addcmul/addcdiv are core/ternary.py's); the predicates
isnan, isinf, isfinite, isposinf/isneginf, isreal, signbit, isclose/allclose and isin;
NumPy-style math: hypot, logaddexp/logaddexp2, xlogy, copysign, heaviside, sinc,
float_power, deg2rad/rad2deg, arctan2 and the multiply/subtract/absolute/positive spellings;
the inverse hyperbolic functions, frexp/ldexp, gcd/lcm and nextafter.  Written once in ember
ops, so every device has them and autograd differentiates them; the inverse hyperbolics run
in float64 (accurate to the last bit of float32 and better than 2 ulp in float64) and carry
their exact derivatives.  Names follow torch; a name shadowing a builtin (min, max, all) is
not defined here."""
import math

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core import complex_ops
from ember.core._dtype import _dtype_by_name, promote_types
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase, where
from ember.core.elementwise_nodes import (
    _CLAMP_NODES,
    CopysignNumber,
    CopysignTensor,
    Hypot,
    _clamp_kernels,
    _clamp_pass,
)
from ember.core.function import Function, without_derivative, zero_derivative
from ember.core.shapes import broadcast_tensors
from ember.core.sorting import sort
from ember.core.typeinfo import checked_range, finfo

__all__ = ["absolute", "acosh", "allclose", "arccosh", "arcsinh",
           "arctan2", "arctanh", "asinh", "atanh", "clamp", "clamp_max", "clamp_min", "clip",
           "copysign", "deg2rad", "float_power", "frexp", "gcd", "heaviside", "hypot",
           "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal",
           "lcm", "ldexp", "logaddexp", "logaddexp2", "multiply", "nan_to_num",
           "nextafter", "positive", "rad2deg", "rsub", "sgn", "sign", "signbit", "sinc",
           "subtract", "xlogy"]


_FLOAT64 = _dtype_by_name["float64"]
_COMPLEX128 = _dtype_by_name["complex128"]
_BOOL = _dtype_by_name["bool"]
_more = _T.table_functions()
_atan2, _log1p, _exp2 = _more["atan2"], _more["log1p"], _more["exp2"]
multiply, subtract, absolute = _T.mul, _T.sub, _T._abs


def _out(r, out):
    """``r``, or ``out`` (checked and resized as PyTorch's out= does) holding it."""
    return r if out is None else _T._result_out(r, out, "out")


def _floating(*xs):
    """The common floating dtype of tensors/numbers (integers give the default dtype)."""
    t = _T.result_type(*xs) if len(xs) == 2 else xs[0].dtype
    return t if t.is_floating_point else _T._state_default_dtype()


def _as_float(x, dt):
    return x.to(dt) if isinstance(x, TensorBase) and x.dtype != dt else x


def clamp(input, min=None, max=None, *, out=None):
    """Clamp ``input`` into [min, max]; either bound may be None, a number or a tensor."""
    _tensor_arg(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and input.dtype.name == "bool":
        bounds = [b.dtype.name if isinstance(b, TensorBase) else type(b).__name__
                  for b in (min, max)]
        if all(b == "bool" for b in bounds):       # PyTorch has no bool clamp kernel
            kernel = "clamp_cpu" if isinstance(min, TensorBase) else "clamp_scalar_cpu"
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    r = _clamp(input, min, max, "clamp", out)
    return r if out is None or r is out else _T._result_out(r, out, "clamp")


# c10's names of the dtypes in its "value cannot be converted" message
_C_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                 "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t",
                 "uint64": "uint64_t", "float32": "float", "float64": "double",
                 "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _check_bound(x, bound):
    """torch converts a number bound that does not promote ``x`` to x's dtype with c10's
    checked conversion: out of the dtype's range it raises (the kernel would wrap it)."""
    if bound is None or isinstance(bound, (TensorBase, bool, complex)):
        return
    dt = x.dtype
    if dt.is_complex or dt.name == "bool" or (isinstance(bound, float)
                                               and not dt.is_floating_point):
        return                                      # the bound promotes: no conversion
    if dt.is_floating_point and -65504.0 <= bound <= 65504.0:
        return                                      # float16's range: every float holds it
    lo, hi = checked_range(dt)
    # infinities and NaN convert to any floating dtype
    if not lo <= bound <= hi and not (dt.is_floating_point and (math.isinf(bound) or
                                                               bound != bound)):
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[dt.name]} "
                           "without overflow")


_NO_COMPLEX_CLAMP = "clamp is not supported for complex types"


def _real_bound(x, bound):
    """A complex number bound as torch takes it: a double for a floating ``x`` (so its
    imaginary part must be 0); for an integer ``x`` the result would be complex, which has
    no clamp."""
    if not isinstance(bound, complex):
        return bound
    if not x.is_floating_point():
        raise NotImplementedError(_NO_COMPLEX_CLAMP)
    if bound.imag:
        raise RuntimeError("value cannot be converted to type double without overflow")
    return bound.real


def _clamp(x, lo, hi, kind, out=None):
    """clamp, clamp_min (hi None) and clamp_max (lo None): the maximum/minimum kernels'
    values, with torch's derivative (elementwise_nodes._Clamp) when autograd or forward AD
    tracks an input.  ``out``: written directly where the one-pass kernel applies (the
    result is then ``out``)."""
    if kind == "clamp":
        if x.is_complex():
            raise NotImplementedError(_NO_COMPLEX_CLAMP)
        lo, hi = _real_bound(x, lo), _real_bound(x, hi)
    elif not isinstance(lo if hi is None else hi, TensorBase) and (
            x.is_complex() or isinstance(lo if hi is None else hi, complex)):
        # (a tensor bound goes to the maximum/minimum kernel, which refuses complex itself)
        raise NotImplementedError(_NO_COMPLEX_CLAMP)
    for bound, kernel in ((lo, "maximum"), (hi, "minimum")):
        # a complex tensor bound reaches torch's maximum/minimum kernels, named as such
        if isinstance(bound, TensorBase) and (bound.is_complex() or x.is_complex()):
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                      f"'{_T._st_name(_T.result_type(x, bound))}'")
    _check_bound(x, lo)
    _check_bound(x, hi)
    if not any(_ag._tracked(t) for t in (x, lo, hi) if isinstance(t, TensorBase)):
        return _clamp_kernels(x, lo, hi, out)
    tensor_bounds = isinstance(lo, TensorBase) or isinstance(hi, TensorBase)
    return _CLAMP_NODES[kind, tensor_bounds].apply(x, lo, hi, kind)


clip = clamp


def sign(input, *, out=None):
    """-1, 0 or 1 by the sign of each element (bool stays bool)."""
    _tensor_arg(input, "sign")
    if input.is_complex():
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    if input.dtype.name == "bool":
        return _out(input.clone(), out)
    return _T._sign(input, out)


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return _T.sub(other, _tensor_arg(input, "rsub") * alpha) if alpha != 1 else other - input


def isnan(input):
    """True where ``input`` is NaN."""
    return _tensor_arg(input, "isnan") != input


def isinf(input):
    """True where ``input`` is +inf or -inf."""
    _tensor_arg(input, "isinf")
    if not input.is_floating_point():
        return _T.zeros_like(input, dtype=_T._dtypes.bool)
    return _T._abs(input) == math.inf


def isfinite(input):
    """True where ``input`` is neither NaN nor infinite."""
    _tensor_arg(input, "isfinite")
    if input.dtype.is_complex:
        return isfinite(input.real) & isfinite(input.imag)
    if not input.is_floating_point():
        return _T.ones_like(input, dtype=_T._dtypes.bool)
    return (input == input) & (_T._abs(input) != math.inf)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise; infinities are close only to
    themselves, NaN to NaN only with ``equal_nan``."""
    _tensor_arg(input, "isclose")
    _tensor_arg(other, "isclose", "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_T._st_name(input.dtype)} did not match "
                           f"{_T._st_name(other.dtype)}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    close = input == other
    if equal_nan and (input.is_floating_point() or input.dtype.is_complex):
        close = close | (isnan(input) & isnan(other))
    if not (rtol or atol):
        return close
    if not input.is_floating_point() and not input.dtype.is_complex:
        # integers and bools compare with their tolerances too (in float64: no wrap)
        input, other = input.to(_FLOAT64), other.to(_FLOAT64)
    error = _T._abs(input - other)
    # an infinite error (an infinity against anything but itself) is never within tolerance
    return close | (isfinite(error) & (error <= atol + rtol * _T._abs(other)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element of ``input`` is close to ``other`` (see isclose)."""
    return bool(_T._all(isclose(input, other, rtol, atol, equal_nan)).item())


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a
    number): a binary search in the sorted test elements."""
    if not isinstance(test_elements, TensorBase):
        _tensor_arg(elements, "isin", "elements")   # one of the two must be a Tensor
    ref = elements if isinstance(elements, TensorBase) else test_elements
    e = elements if isinstance(elements, TensorBase) else _T.tensor(elements, device=ref.device)
    s = test_elements if isinstance(test_elements, TensorBase) else \
        _T.tensor(test_elements, device=ref.device)
    dt = promote_types(e.dtype, s.dtype)
    if dt.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {_T._st_name(dt)}")
    _T._refuse_limited("isin", dt)
    e, s = e.to(dt), s.reshape(-1).to(dt)
    if s.numel() == 0:
        found = _T.zeros_like(e, dtype=_BOOL)
    else:
        values = sort(s).values
        pos = _T.searchsorted(values, e.reshape(-1)).clamp(max=values.numel() - 1)
        found = (values[pos] == e.reshape(-1)).reshape(e.shape)
    return found.logical_not() if invert else found


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default: the dtype's max), -inf -> ``neginf``
    (default: its lowest value)."""
    _tensor_arg(input, "nan_to_num")
    if input.is_complex():              # the real and imaginary parts, each on its own
        from ember.core.complex_functions import complex as from_parts
        r = from_parts(*(nan_to_num(p, nan, posinf, neginf) for p in (input.real, input.imag)))
        return _out(r, out)
    if not input.is_floating_point():
        return input.clone() if out is None else _T._result_out(input, out, "nan_to_num")
    if out is None and _ag._tracked(input):
        return _NanToNum.apply(input, nan, posinf, neginf)
    info = finfo(input.dtype)
    r = _nan_to_num_pass(input, nan, posinf, neginf, info, out)
    if r is not None:
        return r
    # a replacement beyond the dtype's range converts to an infinity, as PyTorch's
    posinf = info.max if posinf is None else _saturate(posinf, info)
    neginf = info.min if neginf is None else _saturate(neginf, info)
    r = _T.where(isnan(input), _saturate(nan, info), input)
    r = _T.where(r == math.inf, posinf, r)
    r = _T.where(r == -math.inf, neginf, r)
    return r.to(input.dtype) if out is None else _T._result_out(r, out, "nan_to_num")


class _NanToNum(Function):
    """PyTorch's derivative, both ways: the gradient or tangent times isfinite(input) (a
    NaN tangent at a replaced element stays NaN, as torch's; a where would give 0)."""

    _node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x)
        return nan_to_num(x, nan, posinf, neginf)       # untracked here

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * isfinite(x), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        x, = ctx.saved_tensors
        return t * isfinite(x)


def _nan_to_num_pass(x, nan, posinf, neginf, info, out):
    """nan_to_num with the default infinities (or any beyond the dtype's range) where
    nothing records it: a clamp into [lowest, max] (the activation entry's one pass maps
    -inf and +inf there and keeps NaN), then NaN filled in place; six passes were three
    compares and three wheres.  Written into ``out`` (x itself for nan_to_num_) when it
    can be; None where it does not apply."""
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    if not (_is_real_number(hi) and _is_real_number(lo) and _is_real_number(nan)) or \
            hi < info.max or lo > info.min or _ag._tracked(x):
        return None
    r = _clamp_pass(x, float(lo), float(hi), out)
    if r is None:
        return None
    r.masked_fill_(r != r, nan)
    return r if out is None or r is out else _T._result_out(r, out, "nan_to_num")


def _saturate(v, info):
    if _is_real_number(v) and math.isfinite(v) and abs(v) > info.max:
        return math.copysign(math.inf, v)
    return v


def _is_real_number(v):
    return type(v) is float or type(v) is int


def arctan2(input, other, *, out=None):
    """atan2(input, other), PyTorch's NumPy-style alias."""
    return _atan2(input, other, out=out)


def positive(input):
    """``input`` itself (an error for bool, as PyTorch)."""
    if _tensor_arg(input, "positive").dtype == _BOOL:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sgn(input, *, out=None):
    """sign for real inputs; z / |z| for complex ones (0 where z is 0)."""
    x = _tensor_arg(input, "sgn")
    if x.dtype.is_complex:
        m = x.abs()
        zero = m == 0
        return _out(_T.where(zero, 0.0, x / m.masked_fill(zero, 1.0)), out)
    return _out(zero_derivative("sgn", _T._sign, x) if x.dtype.is_floating_point else x.sign(),
                out)


def clamp_min(input, min, *, out=None):
    """max(input, min): clamp with only a lower bound (a number or a tensor)."""
    return _out(_clamp(_tensor_arg(input, "clamp_min"), min, None, "clamp_min"), out)


def clamp_max(input, max, *, out=None):
    """min(input, max): clamp with only an upper bound (a number or a tensor)."""
    return _out(_clamp(_tensor_arg(input, "clamp_max"), None, max, "clamp_max"), out)


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in double precision: complex128 if either is complex,
    else float64 (either may be a number)."""
    if not isinstance(exponent, TensorBase):
        _tensor_arg(input, "float_power")           # one of the two must be a Tensor
    dt = _float_power_dtype(input, exponent)
    if out is not None and out.dtype != dt:
        raise RuntimeError(f"the output given to float_power has dtype {_T._st_name(out.dtype)}"
                           f" but the operation's result requires dtype {_T._st_name(dt)}")
    return _out(_T._pow(_as_float(input, dt), _as_float(exponent, dt)), out)


def _float_power_dtype(input, exponent):
    """float_power's result dtype (its in-place form checks the base against it)."""
    complex_ = any(x.dtype.is_complex if isinstance(x, TensorBase) else isinstance(x, complex)
                   for x in (input, exponent))
    return _COMPLEX128 if complex_ else _FLOAT64


def _binary_float(op, input, other):
    """input and other as their common floating dtype (integers: the default dtype)."""
    _tensor_arg(input, op)
    if _T.result_type(input, other).is_complex:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for "
                                  f"'{_T._st_name(_T.result_type(input, other))}'")
    dt = _floating(input, other)
    return _as_float(input, dt), _as_float(other, dt), dt


def hypot(input, other, *, out=None):
    """sqrt(input^2 + other^2), scaled by the larger magnitude so it does not overflow."""
    dt = _float_kernel_dtype("hypot", input, other)
    ct = _opmath(dt)
    return _out(Hypot.apply(_as_float(input, ct), _as_float(other, ct)).to(dt), out)


def _opmath(dt):
    """The dtype PyTorch's kernels compute ``dt`` in: float32 for float16 and bfloat16 (one
    rounding at the end, not one per step)."""
    return _dtype_by_name["float32"] if dt.name in ("float16", "bfloat16") else dt


def _float_kernel_dtype(op, input, other):
    """The promoted dtype of an op PyTorch implements for floating dtypes only."""
    dt = _T.result_type(_tensor_arg(input, op), other)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{_T._st_name(dt)}'")
    return dt


def _logaddexp(op, input, other, exp_fn, log1p_scale):
    if op == "logaddexp" and _T.result_type(_tensor_arg(input, op), other).is_complex:
        ct = _T.result_type(input, other)
        return complex_ops.logaddexp(_as_float(input, ct), _as_float(other, ct))
    dt = _float_kernel_dtype(op, input, other)
    a, b = _as_float(input, _opmath(dt)), _as_float(other, _opmath(dt))
    hi = _T.maximum(a, b)
    d = _T._abs(a - b)
    r = hi + _log1p(exp_fn(-d)) * log1p_scale
    return _T.where(isinf(hi) & (a == b), hi, r).to(dt)   # inf + inf: no NaN from inf - inf


def logaddexp(input, other, *, out=None):
    """log(exp(input) + exp(other)), without overflow."""
    return _out(_logaddexp("logaddexp", input, other, _T.exp, 1.0), out)


def logaddexp2(input, other, *, out=None):
    """log2(2^input + 2^other), without overflow."""
    return _out(_logaddexp("logaddexp2", input, other, _exp2, 1 / math.log(2)), out)


def xlogy(input, other, *, out=None):
    """input * log(other), 0 where input is 0 (unless other is NaN); either may be a
    number."""
    if not isinstance(input, TensorBase):
        _tensor_arg(other, "xlogy", "other")        # one of the two must be a Tensor
        input = _T.full((), input, dtype=_floating(other, input), device=other.device)
    x, y, dt = _binary_float("xlogy", input, other)
    if not isinstance(y, TensorBase):
        y = _T.full((), y, dtype=dt, device=x.device)
    zero = (x == 0) & isnan(y).logical_not()
    log_y = _T.log(y)
    # at x == 0 the value is 0 and y gets no gradient, but x still gets log(y) (PyTorch)
    frozen = _T.where(log_y.isfinite(), log_y, 0.0).detach()
    return _out(x * _T.where(zero, frozen, log_y), out)


def signbit(input, *, out=None):
    """True where the sign bit is set (negative numbers and -0.0)."""
    x = _tensor_arg(input, "signbit")
    if x.dtype == _BOOL:
        r = _T.zeros_like(x, dtype=_BOOL)
    elif x.is_floating_point():
        # the sign bit itself, -0.0's and a NaN's too: the bits read as a signed integer
        bits = _dtype_by_name[_BITS[x.dtype.name]]
        r = x.detach().contiguous().view(bits) < 0
    else:
        r = x < 0
    return _out(r, out)


def copysign(input, other, *, out=None):
    """|input| with the sign of ``other`` (floating result)."""
    a, b, dt = _binary_float("copysign", input, other)
    node = CopysignTensor if isinstance(b, TensorBase) else CopysignNumber
    return _out(node.apply(a, b), out)


def heaviside(input, values, *, out=None):
    """0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    _tensor_arg(input, "heaviside")
    _tensor_arg(values, "heaviside", "values")
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    r = without_derivative("heaviside", _heaviside, input, values)
    return _out(r, out)


def _heaviside(x, values):
    return _T.where(x == 0, values, (x > 0).to(x.dtype))


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0 (with a zero gradient there)."""
    x = _tensor_arg(input, "sinc")
    if not x.is_floating_point() and not x.is_complex():
        x = x.to(_T._state_default_dtype())
    dt = x.dtype
    x = _as_float(x, _opmath(dt))
    zero = x == 0
    px = math.pi * _T.where(zero, 1.0, x)
    return _out(_T.where(zero, 1.0, _T.sin(px) / px).to(dt), out)


def _scale_float(op, input, factor, out):
    x = _tensor_arg(input, op)
    if x.is_complex():
        raise RuntimeError(f"{op} is not supported for complex tensors.")
    if not x.is_floating_point():
        x = x.to(_T._state_default_dtype())
    return _out(x * factor, out)


def deg2rad(input, *, out=None):
    """Degrees to radians."""
    return _scale_float("deg2rad", input, math.pi / 180, out)


def rad2deg(input, *, out=None):
    """Radians to degrees."""
    return _scale_float("rad2deg", input, 180 / math.pi, out)


def _inf_test(op, input, value):
    x = _tensor_arg(input, op)
    return x == value if x.is_floating_point() else _T.zeros_like(x, dtype=_BOOL)


def isposinf(input, *, out=None):
    """True where ``input`` is +inf."""
    return _out(_inf_test("isposinf", input, math.inf), out)


def isneginf(input, *, out=None):
    """True where ``input`` is -inf."""
    return _out(_inf_test("isneginf", input, -math.inf), out)


def isreal(input):
    """True where the imaginary part is zero (everywhere for real dtypes)."""
    x = _tensor_arg(input, "isreal")
    if x.dtype.is_complex:
        return _T.eq(_T._imag(x), 0)
    return _T.ones_like(x, dtype=_BOOL)


# -- inverse hyperbolics, frexp/ldexp, gcd/lcm, nextafter ------------------------------------

_INT32 = _dtype_by_name["int32"]
_LN2 = 0.6931471805599453
_log = _T.log


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
    """input * 2**other: for a floating ``input`` and an integer ``other`` in input's dtype,
    otherwise in the dtype of ``input * pow(2.0, other)``."""
    x = _tensor_arg(input, "ldexp", position=1)
    integral = not isinstance(other, (float, complex)) and not (
        isinstance(other, TensorBase) and (other.is_floating_point() or other.is_complex()))
    if x.is_floating_point() and integral:
        # an integer exponent scales exactly (torch's kernel: C's ldexp), so 1e-30 * 2**200
        # does not overflow on the way
        if isinstance(other, TensorBase) and other.dtype == _BOOL:
            raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
        e = other if isinstance(other, TensorBase) else _T.tensor(other, device=x.device)
        return _out(_exact_ldexp(x, e).to(x.dtype), out)
    return _out(x * (2.0 ** other), out)


def _exact_ldexp(x, e):
    """x * 2**e for a floating x and an integer tensor e, rounded once: float64 holds every
    scaled float32/16/bfloat16 exactly; float64 itself scales in three normal factors
    (past +-2200 every finite nonzero float64 overflows or underflows anyway)."""
    two = _T.full((), 2.0, dtype=_FLOAT64, device=x.device)
    if x.dtype != _FLOAT64:
        # |e| > 400 overflows (or flushes) every float32 as surely as 400 does
        return x.to(_FLOAT64) * two.pow(clamp(e.long(), -400, 400))
    e = clamp(e.long(), -2200, 2200)
    third = e.div(3, rounding_mode="trunc")
    return x * two.pow(third) * two.pow(third) * two.pow(e - 2 * third)


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
