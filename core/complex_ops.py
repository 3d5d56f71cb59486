"""Complex arithmetic over float views: what the primitives' backend paths run for a complex
dtype (see _complex.pxi for why no kernel sees one).

Each op splits its operands into real and imaginary float parts (strided views of the
complex storage, or Python floats for scalars), computes the parts with ember's float ops
and writes them into a complex result.  Ops without a complex formula raise PyTorch's
NotImplementedError ('"lt_cpu" not implemented for 'ComplexFloat'')."""
import cmath
import math

from ember.core import _tensor as _T
from ember.core._tensor import TensorBase

_more = _T.table_functions()          # the table-made functions: atan2, cosh, sinh, ...

# unary ops whose complex result is real: abs (the modulus)
_REAL_RESULT = frozenset(["abs"])


def _unsupported(op, dtype):
    return NotImplementedError(f'"{op}_cpu" not implemented for '
                               f"'{_T._st_name(dtype)}'")


def _parts(x, ct):
    """(re, im) of an operand at the complex dtype ``ct``: float tensors (strided views for
    complex tensors), Python floats for scalars; im is None for a real operand (zero)."""
    real = ct.to_real()
    if isinstance(x, TensorBase):
        if x.dtype.is_complex:
            if x.dtype is not ct:
                x = x.to(ct)
            return _T._real(x), _T._imag(x)
        return (x if x.dtype is real else x.to(real)), None
    z = complex(x)
    return z.real, (z.imag if isinstance(x, complex) else None)


def _mul_parts(ar, ai, br, bi):
    """(ar + i ai) * (br + i bi), None standing for a zero imaginary part."""
    if ai is None and bi is None:
        return ar * br, None
    if bi is None:
        return ar * br, ai * br
    if ai is None:
        return ar * br, ar * bi
    return ar * br - ai * bi, ar * bi + ai * br


def _div_parts(ar, ai, br, bi):
    """(ar + i ai) / (br + i bi) by Smith's algorithm (no overflow from |b|^2)."""
    if bi is None:
        return ar / br, (None if ai is None else ai / br)
    ai = 0.0 if ai is None else ai
    if not isinstance(br, TensorBase) and not isinstance(bi, TensorBase):
        return _smith(ar, ai, br, bi, abs(br) >= abs(bi))      # a scalar divisor
    # both branches elementwise, each taken where it is the safe one
    wide = _T._abs(_tensor_like(br, bi)) >= _T._abs(_tensor_like(bi, br))
    (re1, im1), (re2, im2) = _smith(ar, ai, br, bi, True), _smith(ar, ai, br, bi, False)
    return _T.where(wide, re1, re2), _T.where(wide, im1, im2)


def _smith(ar, ai, br, bi, wide):
    """One branch of Smith's division: ``wide`` when |br| >= |bi|."""
    if wide:
        r = bi / br
        d = br + bi * r
        return (ar + ai * r) / d, (ai - ar * r) / d
    r = br / bi
    d = bi + br * r
    return (ar * r + ai) / d, (ai * r - ar) / d


def _tensor_like(x, ref):
    return x if isinstance(x, TensorBase) else _T.full_like(ref, x)


def _exp_parts(re, im):
    m = _T.exp(re) if isinstance(re, TensorBase) else math.exp(re)
    if im is None:
        return m, None
    # a zero imaginary part stays exactly that: exp(inf + 0j) is inf + 0j, not inf * 0
    return m * _T.cos(im), _T.where(im == 0, im, m * _T.sin(im))


def _log_parts(re, im):
    from ember.core.elementwise import hypot
    if im is None:
        im = _T.zeros_like(re)
    return _T.log(hypot(re, im)), _more["atan2"](im, re)


def binary(op, a, b, alpha, out, ct):
    """The binary op ``op`` (an Op name) at the complex dtype ``ct``."""
    if alpha != 1:
        b = _T.mul(b, alpha) if isinstance(b, TensorBase) else b * alpha
    ar, ai = _parts(a, ct)
    br, bi = _parts(b, ct)
    if op == "add" or op == "sub":
        f = _T.add if op == "add" else _T.sub
        re = f(ar, br)
        if bi is None:
            im = ai
        elif ai is None:
            im = bi if op == "add" else -bi
        else:
            im = f(ai, bi)
    elif op == "mul":
        re, im = _mul_parts(ar, ai, br, bi)
    elif op == "div":
        re, im = _div_parts(ar, ai, br, bi)
    elif op == "pow":
        return _pow(a, b, ar, ai, br, bi, out, ct)
    elif op == "eq" or op == "ne":
        ai, bi = (0.0 if ai is None else ai), (0.0 if bi is None else bi)
        same = _T.eq(ar, br)
        if isinstance(ai, TensorBase) or isinstance(bi, TensorBase):
            same = _T.logical_and(same, _T.eq(bi, ai) if isinstance(bi, TensorBase)
                                  else _T.eq(ai, bi))
        elif ai != bi:
            same = _T.zeros_like(same)
        res = same if op == "eq" else _T.logical_not(same)
        return res if out is None else out.copy_(res)
    else:
        raise _unsupported(op, ct)
    # one operand is a tensor, so re is one too, of the result's shape
    return _T._complex_out(re, im, ct, out, op)


def _pow(a, b, ar, ai, br, bi, out, ct):
    """a ** b = exp(b log a) (0 ** b is 0 for Re b > 0, 1 for b == 0, as PyTorch)."""
    if isinstance(b, (int, float)) and not isinstance(b, bool) and float(b).is_integer() \
            and 0 <= b <= 4:
        # small integer powers exactly, by repeated multiplication
        ref = ar if isinstance(ar, TensorBase) else br
        re, im = _T.ones_like(ref, dtype=ct.to_real()), None
        for _ in range(int(b)):
            re, im = _mul_parts(re, im, ar, ai)
        return _T._complex_out(re, im, ct, out, "pow")
    if isinstance(ar, TensorBase):
        lr, li = _log_parts(ar, ai)
    else:                                   # a scalar base: its logarithm once
        z = complex(ar, ai or 0.0)
        lz = cmath.log(z) if z else complex(-math.inf, 0.0)
        lr, li = lz.real, lz.imag
    re, im = _exp_parts(*_mul_parts(br, bi, lr, li))
    # 0 ** b is 0 where Re b > 0 (exp(b * -inf) would give NaN there)
    zero = _T.logical_and(_T.eq(_tensor_like(ar, re), 0),
                          _T.eq(_tensor_like(0.0 if ai is None else ai, re), 0))
    zero = _T.logical_and(zero, _T.gt(_tensor_like(br, re), 0))
    return _T._complex_out(_T.where(zero, 0.0, re), _T.where(zero, 0.0, im), ct, out, "pow")


def _sqrt_parts(re, im):
    """The principal square root: t = sqrt((|z| + |x|) / 2) is free of cancellation, and
    the other part is |y| / 2t; the imaginary part takes y's sign (-0.0 included)."""
    from ember.core.elementwise import copysign, hypot
    t = _T.sqrt((hypot(re, im) + _T._abs(re)) * 0.5)
    other = _T.where(t == 0, 0.0, _T._abs(im) / (2 * t))
    right = re >= 0
    return _T.where(right, t, other), copysign(_T.where(right, other, t), im)


def _tanh_parts(re, im):
    """tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); past |x| = 20 the result
    is sign(x) (+ 0i) to the last bit, where cosh 2x would overflow to inf / inf."""
    from ember.core.elementwise import copysign
    far = _T._abs(re) > 20
    x = _T.where(far, 0.0, re)
    d = _more["cosh"](2 * x) + _T.cos(2 * im)
    return (_T.where(far, copysign(_T.ones_like(re), re), _more["sinh"](2 * x) / d),
            _T.where(far, 0.0 * im, _T.sin(2 * im) / d))


def _unary_parts(op, re, im):
    """(re, im) of op(re + i im), or None for an op without a complex formula."""
    if op == "neg":
        return -re, -im
    if op in ("exp", "exp2"):
        k = 1.0 if op == "exp" else math.log(2.0)
        return _exp_parts(re * k, im * k)
    if op in ("log", "log2", "log10", "log1p"):
        lr, li = _log_parts(re + 1 if op == "log1p" else re, im)
        k = {"log2": math.log(2.0), "log10": math.log(10.0)}.get(op, 1.0)
        return (lr, li) if k == 1.0 else (lr / k, li / k)
    if op == "expm1":          # e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y / 2): no cancellation
        c = _T.cos(im)
        return _more["expm1"](re) * c - 2 * _T.square(_T.sin(im * 0.5)), _T.exp(re) * _T.sin(im)
    if op in ("sqrt", "rsqrt"):
        r, i = _sqrt_parts(re, im)
        return (r, i) if op == "sqrt" else _div_parts(1.0, None, r, i)
    if op == "reciprocal":
        return _div_parts(1.0, None, re, im)
    if op == "square":
        return _mul_parts(re, im, re, im)
    if op in ("sin", "cos", "sinh", "cosh"):
        # sinh(x + iy) = sinh x cos y + i cosh x sin y; sin(z) = -i sinh(iz), cos(z) = cosh(iz)
        x, y = (re, im) if op in ("sinh", "cosh") else (-im, re)
        ch, sh = _more["cosh"](x), _more["sinh"](x)
        if op in ("sinh", "sin"):
            r, i = sh * _T.cos(y), ch * _T.sin(y)
        else:
            r, i = ch * _T.cos(y), sh * _T.sin(y)
        return (i, -r) if op == "sin" else (r, i)
    if op == "tanh":
        return _tanh_parts(re, im)
    if op == "tan":            # tan(z) = -i tanh(iz)
        r, i = _tanh_parts(-im, re)
        return i, -r
    if op == "sigmoid":        # 1 / (1 + e^-z)
        er, ei = _exp_parts(-re, -im)
        return _div_parts(1.0, None, er + 1, ei)
    return None


def unary(op, a, out):
    """The unary op ``op`` on the complex tensor ``a``."""
    ct = a.dtype
    re, im = _T._real(a), _T._imag(a)
    if op == "abs":
        from ember.core.elementwise import hypot
        res = hypot(re, im)
        return res if out is None else out.copy_(res)
    parts = _unary_parts(op, re, im)
    if parts is None:
        raise _unsupported(op, ct)
    return _T._complex_out(parts[0], parts[1], ct, out, op)


def reduce(op, a, dim, keepdim, dtype, out):
    """sum and mean of a complex tensor, part by part."""
    ct = a.dtype if dtype is None else dtype
    if op not in ("sum", "mean"):
        raise _unsupported(op, a.dtype)
    if not getattr(ct, "is_complex", False):
        raise RuntimeError(f"{op}(): the dtype of a complex input must be complex, got {ct}")
    if ct is not a.dtype:
        a = a.to(ct)
    f = _T.sum if op == "sum" else _T.mean
    kw = {} if dim is None else {"dim": dim}
    re = f(_T._real(a), keepdim=keepdim, **kw)
    im = f(_T._imag(a), keepdim=keepdim, **kw)
    return _T._complex_out(re, im, ct, out, op)


def scan(op, a, dim, dtype):
    """cumsum of a complex tensor, part by part (cumprod, cummax, cummin: unsupported)."""
    if op != "cumsum":
        raise _unsupported(op, a.dtype)
    if dtype is not None and dtype is not a.dtype:
        a = a.to(dtype)
    return _T._complex_out(_T.cumsum(_T._real(a), dim), _T.cumsum(_T._imag(a), dim), a.dtype,
                           None, op)


def matmul(a, b, out):
    """Complex matmul from four real ones (BLAS on the float parts)."""
    ar, ai, br, bi = _T._real(a), _T._imag(a), _T._real(b), _T._imag(b)
    re = _T.matmul(ar, br) - _T.matmul(ai, bi)
    im = _T.matmul(ar, bi) + _T.matmul(ai, br)
    return _T._complex_out(re, im, a.dtype, out, "matmul")
