"""Elementwise math and small products composed from primitive ops: hypot, logaddexp,
xlogy, copysign, sinc, float_power, diff, kron, inner, tensordot, cdist, logcumsumexp, ...
Also the inverse hyperbolic functions, frexp/ldexp, gcd/lcm, nextafter and renorm.  Written
once in ember ops, so every device has them and autograd differentiates them; the inverse
hyperbolics run in float64 (accurate to the last bit of float32 and better than 2 ulp in
float64) and carry their exact derivatives."""
import math

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase, where
from ember.core.composites import _sign, _wrap, cat, isinf, isnan, outer
from ember.core.function import Function, without_derivative, zero_derivative
from ember.core.products import _scaled_sum
from ember.core.shapes import broadcast_tensors
from ember.core.typeinfo import finfo

__all__ = ["absolute", "addr", "arctan2", "cdist", "clamp_max", "clamp_min", "copysign", "deg2rad",
           "diff", "dist", "float_power", "ger", "heaviside", "hypot", "inner",
           "isneginf", "isposinf", "isreal", "kron", "logaddexp", "logaddexp2",
           "logcumsumexp", "multiply", "positive", "rad2deg", "sgn", "signbit", "sinc",
           "subtract", "tensordot", "vdot", "xlogy", "acosh", "arccosh", "arcsinh",
           "arctanh", "asinh", "atanh", "frexp", "gcd", "lcm", "ldexp", "nextafter",
           "renorm"]


_FLOAT64 = _dtype_by_name["float64"]
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


def arctan2(input, other, *, out=None):
    """atan2(input, other), PyTorch's NumPy-style alias."""
    return _atan2(input, other, out=out)


def positive(input):
    """``input`` itself (an error for bool, as PyTorch)."""
    if _tensor_arg(input, "positive").dtype == _BOOL:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sgn(input, *, out=None):
    """sign for real inputs (PyTorch's complex-aware name)."""
    x = _tensor_arg(input, "sgn")
    return _out(zero_derivative("sgn", _sign, x) if x.dtype.is_floating_point else x.sign(), out)


def clamp_min(input, min):
    """max(input, min): clamp with only a lower bound (a number or a tensor)."""
    return _T._maximum_scalar(_tensor_arg(input, "clamp_min"), min)


def clamp_max(input, max):
    """min(input, max): clamp with only an upper bound (a number or a tensor)."""
    return _T._minimum_scalar(_tensor_arg(input, "clamp_max"), max)


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in float64 (either may be a number)."""
    if not isinstance(exponent, TensorBase):
        _tensor_arg(input, "float_power")           # one of the two must be a Tensor
    if out is not None and out.dtype != _FLOAT64:
        raise RuntimeError(f"the output given to float_power has dtype {out.dtype} but the "
                           "operation's result requires dtype Double")
    return _out(_T._pow(_as_float(input, _FLOAT64), _as_float(exponent, _FLOAT64)), out)


def _binary_float(op, input, other):
    """input and other as their common floating dtype (integers: the default dtype)."""
    _tensor_arg(input, op)
    dt = _floating(input, other)
    return _as_float(input, dt), _as_float(other, dt), dt


def hypot(input, other, *, out=None):
    """sqrt(input^2 + other^2), scaled by the larger magnitude so it does not overflow."""
    dt = _float_kernel_dtype("hypot", input, other)
    a, b = _T._abs(_as_float(input, dt)), _T._abs(_as_float(other, dt))
    hi, lo = _T.maximum(a, b), _T.minimum(a, b)
    safe = _T.where(hi == 0, 1.0, hi)
    r = hi * _T.sqrt(1 + _T.square(lo / safe))
    r = _T.where(isinf(a) | isinf(b), math.inf, r)      # inf beats NaN, as C's hypot
    return _out(r, out)


def _float_kernel_dtype(op, input, other):
    """The promoted dtype of an op PyTorch implements for floating dtypes only."""
    dt = _T.result_type(_tensor_arg(input, op), other)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{_T._st_name(dt)}'")
    return dt


def _logaddexp(op, input, other, exp_fn, log1p_scale):
    dt = _float_kernel_dtype(op, input, other)
    a, b = _as_float(input, dt), _as_float(other, dt)
    hi = _T.maximum(a, b)
    d = _T._abs(a - b)
    r = hi + _log1p(exp_fn(-d)) * log1p_scale
    return _T.where(isinf(hi) & (a == b), hi, r)         # inf + inf: no NaN from inf - inf


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
        r = (x < 0) | ((x == 0) & (_T.reciprocal(x) < 0))
    else:
        r = x < 0
    return _out(r, out)


def copysign(input, other, *, out=None):
    """|input| with the sign of ``other`` (floating result)."""
    a, b, dt = _binary_float("copysign", input, other)
    negative = signbit(b) if isinstance(b, TensorBase) else math.copysign(1.0, b) < 0
    mag = _T._abs(a)
    r = _T.where(negative, -mag, mag) if isinstance(negative, TensorBase) else \
        (-mag if negative else mag)
    return _out(r, out)


def heaviside(input, values, *, out=None):
    """0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    _tensor_arg(input, "heaviside")
    _tensor_arg(values, "heaviside", "values")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    r = without_derivative("heaviside", _heaviside, input, values)
    return _out(r, out)


def _heaviside(x, values):
    return _T.where(x == 0, values, (x > 0).to(x.dtype))


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0 (with a zero gradient there)."""
    x = _tensor_arg(input, "sinc")
    if not x.is_floating_point():
        x = x.to(_T._state_default_dtype())
    zero = x == 0
    px = math.pi * _T.where(zero, 1.0, x)
    return _out(_T.where(zero, 1.0, _T.sin(px) / px), out)


def _scale_float(op, input, factor, out):
    x = _tensor_arg(input, op)
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


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first;
    bool inputs use !=)."""
    x = _tensor_arg(input, "diff")
    if x.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap(dim, x.dim(), "diff")
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        if not isinstance(extra, TensorBase):
            extra = _T.full((), extra, dtype=x.dtype, device=x.device)
        if extra.dim() == 0:
            shape = list(x.shape)
            shape[d] = 1
            extra = extra.expand(shape)
        parts.append(extra)
    if parts:
        parts.insert(1 if prepend is not None else 0, x)
        x = cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = _T.logical_xor(hi, lo) if x.dtype == _BOOL else hi - lo
    return x


def kron(input, other, *, out=None):
    """The Kronecker product: every element of input times a block of other."""
    a, b = _tensor_arg(input, "kron"), _tensor_arg(other, "kron", "other")
    nd = max(a.dim(), b.dim())
    sa = (1,) * (nd - a.dim()) + tuple(a.shape)
    sb = (1,) * (nd - b.dim()) + tuple(b.shape)
    ia = sum(((s, 1) for s in sa), ())                 # a's dims interleaved with ones
    ib = sum(((1, s) for s in sb), ())
    r = a.reshape(ia) * b.reshape(ib)
    return _out(r.reshape(tuple(x * y for x, y in zip(sa, sb))), out)


def tensordot(a, b, dims=2, out=None):
    """Sum over the last ``dims`` dims of a and the first of b, or over the dim lists
    ``dims = (dims_a, dims_b)``."""
    _tensor_arg(a, "tensordot", "a")
    _tensor_arg(b, "tensordot", "b")
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da = [d % max(a.dim(), 1) for d in da]
    db = [d % max(b.dim(), 1) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    left = a.permute(free_a + da).reshape(-1, k)
    right = b.permute(db + free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _out(_T.matmul(left, right).reshape(shape), out)


def inner(input, other, *, out=None):
    """Sum over the last dims of both (a product when either is 0-d)."""
    a, b = _tensor_arg(input, "inner"), _tensor_arg(other, "inner", "other")
    if a.dim() == 0 or b.dim() == 0:
        return _out(a * b, out)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(a.shape)} and {list(b.shape)}")
    return _out(tensordot(a, b, ([a.dim() - 1], [b.dim() - 1])), out)


def vdot(input, other, *, out=None):
    """The dot product of two 1-D tensors (no conjugation needed: no complex dtypes)."""
    a, b = _tensor_arg(input, "vdot"), _tensor_arg(other, "vdot", "other")
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected both vectors to have same dtype, but found "
                           f"{_T._st_name(a.dtype)} and {_T._st_name(b.dtype)}")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return _out(_T.matmul(a, b), out)


ger = outer


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    _tensor_arg(vec1, "addr", "vec1")
    _tensor_arg(vec2, "addr", "vec2")
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
                           if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha, out)


def _pnorm(diff, p, dim):
    """The p-norm over ``dim`` with PyTorch's subgradient 0 where the norm is 0."""
    a = _T._abs(diff)
    if p == 0:
        return (a != 0).to(diff.dtype).sum(dim)
    if p == math.inf:
        return _T.amax(a, dim) if a.shape[dim] else a.sum(dim)
    s = (_T.square(a) if p == 2 else a ** p).sum(dim)
    zero = s == 0
    r = _T.where(zero, 1.0, s) ** (1.0 / p)
    return _T.where(zero, 0.0, r)


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    d = _tensor_arg(input, "dist") - _tensor_arg(other, "dist", "other")
    if not d.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_T._st_name(d.dtype)}")
    return _pnorm(d.reshape(-1), p, 0)


@composite("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 [..., P, M] and of x2 [..., R, M]."""
    _tensor_arg(x1, "cdist", "x1")
    _tensor_arg(x2, "cdist", "x2")
    for t, name in ((x1, "X1"), (x2, "X2")):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.dim()}D")
        if not t.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_T._st_name(t.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)            # [..., P, R, M]
    return _pnorm(d, p, -1)


def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along ``dim``, shifted by the row maximum; rows whose range
    would underflow exp fall back to a running logaddexp."""
    x = _tensor_arg(input, "logcumsumexp")
    if not x.is_floating_point():
        x = x.to(_T._state_default_dtype())
    if x.dim() == 0 or x.numel() == 0:
        return _out(x.clone(), out)
    m = _T.amax(x, dim, True)
    m = _T.where(isinf(m), 0.0, m).to(x.dtype)
    shifted = x - m
    if bool(((shifted < math.log(finfo(x.dtype).tiny) + 2) & isinf(x).logical_not()).any()):
        d = dim % x.dim()
        acc, parts = None, []
        for i in range(x.shape[d]):
            xi = x.narrow(d, i, 1)
            acc = xi if acc is None else logaddexp(acc, xi)
            parts.append(acc)
        return _out(cat(parts, d), out)
    return _out(_T.log(_T.cumsum(_T.exp(shifted), dim)) + m, out)


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
