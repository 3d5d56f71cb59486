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
from ember.core.shape_rules import _wrap

_more = _T.table_functions()          # the table-made functions: atan2, cosh, sinh, ...

# unary ops whose complex result is real: abs (the modulus)
_REAL_RESULT = frozenset(["abs"])


# PyTorch's kernel names where they are not the op's
_KERNELS = {"floor_divide": "div_floor", "amax": "max_values", "amin": "min_values"}
# ops that refuse a complex input up front, in PyTorch's words
_NO_COMPLEX_INPUT = frozenset(["argmax", "argmin"])
# ops whose complex refusal is a RuntimeError of its own wording (no order on complex)
_UNORDERED = frozenset(["maximum", "minimum", "fmax", "fmin"])


def _unsupported(op, dtype):
    if op in _UNORDERED:
        return RuntimeError(f"{op} not implemented for complex tensors.")
    if op in _NO_COMPLEX_INPUT:
        return RuntimeError(f"{op}(): does not support complex input")
    return NotImplementedError(f'"{_KERNELS.get(op, op)}_cpu" not implemented for '
                               f"'{_T._st_name(dtype)}'")


def _nonzero(x):
    """The truth of each element of an operand (a complex one: either part nonzero)."""
    if not isinstance(x, TensorBase):
        return bool(x)
    if x.dtype.is_complex:
        return _T.logical_or(_T.ne(_T._real(x), 0), _T.ne(_T._imag(x), 0))
    return _T.ne(x, 0)


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
    """(ar + i ai) / (br + i bi) by Smith's algorithm (no overflow from |b|^2); a zero
    divisor gives ar / |0| + i ai / |0| (inf or NaN parts), as c10::complex does."""
    if bi is None:
        return ar / br, (None if ai is None else ai / br)
    ai = 0.0 if ai is None else ai
    if not isinstance(br, TensorBase) and not isinstance(bi, TensorBase):
        if br == 0 and bi == 0:
            return ar / abs(br), ai / abs(bi)
        return _smith(ar, ai, br, bi, abs(br) >= abs(bi))      # a scalar divisor
    # both branches elementwise, each taken where it is the safe one
    abs_r, abs_i = _T._abs(_tensor_like(br, bi)), _T._abs(_tensor_like(bi, br))
    wide = abs_r >= abs_i
    (re1, im1), (re2, im2) = _smith(ar, ai, br, bi, True), _smith(ar, ai, br, bi, False)
    zero = (abs_r == 0) & (abs_i == 0)
    return (_T.where(zero, ar / abs_r, _T.where(wide, re1, re2)),
            _T.where(zero, ai / abs_i, _T.where(wide, im1, im2)))


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
    elif op == "div" and not isinstance(a, TensorBase):
        # torch divides a number by a tensor as tensor.reciprocal() * number: a complex
        # product, whose NaN parts (1 / 0j is inf + nanj) carry through
        rr, ri = _div_parts(1.0, None, br, bi)
        re, im = _mul_parts(rr, 0.0 if ri is None else ri, ar, 0.0 if ai is None else ai)
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
        return res if out is None else _T._result_out(res, out, op)
    elif op in ("logical_and", "logical_or", "logical_xor"):
        res = getattr(_T, op)(_nonzero(a), _nonzero(b))
        return res if out is None else _T._result_out(res, out, op)
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
        return res if out is None else _T._result_out(res, out, op)
    parts = _unary_parts(op, re, im)
    if parts is None:
        raise _unsupported(op, ct)
    return _T._complex_out(parts[0], parts[1], ct, out, op)


def reduce(op, a, dim, keepdim, dtype, out):
    """sum, mean and prod of a complex tensor: sum and mean part by part, prod by halving
    products.  A real ``dtype`` reduces the real parts (PyTorch casts first)."""
    ct = a.dtype if dtype is None else dtype
    if op not in ("sum", "mean", "prod"):
        raise _unsupported(op, a.dtype)
    kw = {} if dim is None else {"dim": dim}
    if not getattr(ct, "is_complex", False):
        return getattr(_T, op)(a.to(ct), keepdim=keepdim, out=out, **kw)
    if ct is not a.dtype:
        a = a.to(ct)
    if op == "prod":
        re, im = _prod_parts(a, dim, keepdim)
    else:
        f = _T.sum if op == "sum" else _T.mean
        re = f(_T._real(a), keepdim=keepdim, **kw)
        im = f(_T._imag(a), keepdim=keepdim, **kw)
    return _T._complex_out(re, im, ct, out, op)


def _prod_parts(a, dim, keepdim):
    """(re, im) of the product of the complex ``a`` over ``dim`` (an int, a sequence, or
    None for all): the reduced dims flattened last, then halved by pairwise complex
    products, log2(n) steps of the float kernels."""
    nd = a.dim()
    every = dim is None or isinstance(dim, (tuple, list)) and not dim
    dims = set(range(nd)) if every else {
        _wrap(d, max(nd, 1), "prod") for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    dims &= set(range(nd))                       # a 0-d input has no dim to reduce
    kept = [d for d in range(nd) if d not in dims]
    n = math.prod(a.shape[d] for d in dims)
    x = a.permute(kept + sorted(dims)).reshape([a.shape[d] for d in kept] + [n])
    re, im = _T._real(x), _T._imag(x)
    if n == 0:                                   # the empty product
        re, im = _T.ones_like(re.sum(-1, keepdim=True)), None
    while re.shape[-1] > 1:
        h, odd = re.shape[-1] // 2, re.shape[-1] % 2
        pr, pi = _mul_parts(re.narrow(-1, 0, h), im.narrow(-1, 0, h) if im is not None else None,
                            re.narrow(-1, h, h), im.narrow(-1, h, h) if im is not None else None)
        if odd:                                  # the unpaired last factor carries over
            pr = _T._cat([pr, re.narrow(-1, 2 * h, 1)], -1, None)
            pi = _T._cat([pi, im.narrow(-1, 2 * h, 1)], -1, None)
        re, im = pr, pi
    shape = [1 if d in dims else a.shape[d] for d in range(nd)] if keepdim else \
        [a.shape[d] for d in kept]
    return re.reshape(shape), (None if im is None else im.reshape(shape))


def scan(op, a, dim, dtype):
    """cumsum (part by part) and cumprod (a doubling scan of complex products) of a complex
    tensor; a real ``dtype`` scans the real parts.  cummax, cummin: unsupported."""
    if op not in ("cumsum", "cumprod"):
        raise _unsupported(op, a.dtype)
    if dtype is not None and dtype is not a.dtype:
        a = a.to(dtype)
        if not a.dtype.is_complex:
            return getattr(_T, op)(a, dim)
    if op == "cumsum":
        return _T._complex_out(_T.cumsum(_T._real(a), dim), _T.cumsum(_T._imag(a), dim),
                               a.dtype, None, op)
    d = _wrap(dim, max(a.dim(), 1), op)
    x = a if a.dim() else a.reshape(1)
    re, im, n, k = _T._real(x), _T._imag(x), x.shape[d], 1
    while k < n:            # each position takes the product of the k before it
        pr, pi = _mul_parts(re.narrow(d, k, n - k), im.narrow(d, k, n - k),
                            re.narrow(d, 0, n - k), im.narrow(d, 0, n - k))
        re = _T._cat([re.narrow(d, 0, k), pr], d, None)
        im = _T._cat([im.narrow(d, 0, k), pi], d, None)
        k *= 2
    return _T._complex_out(re.reshape(a.shape), im.reshape(a.shape), a.dtype, None, op)


def matmul(a, b, out):
    """Complex matmul from four real ones (BLAS on the float parts)."""
    ar, ai, br, bi = _T._real(a), _T._imag(a), _T._real(b), _T._imag(b)
    re = _T.matmul(ar, br) - _T.matmul(ai, bi)
    im = _T.matmul(ar, bi) + _T.matmul(ai, br)
    return _T._complex_out(re, im, a.dtype, out, "matmul")


def logaddexp(a, b):
    """log(exp(a) + exp(b)) of complex tensors as PyTorch computes it (and its logcumsumexp
    scan): the operand with the larger real part plus log1p(exp(other - it)).  When the
    real parts tie at -inf the result is the operand taken as smaller; NaN anywhere gives
    NaN+NaNj."""
    from ember.core.complex_functions import complex as parts
    from ember.core.elementwise import isinf, isnan
    b_wins = b.real >= a.real
    hi, lo = _T.where(b_wins, b, a), _T.where(b_wins, a, b)
    diff = lo - hi
    w = _T.where(isinf(diff.real) & (diff.real < 0), 0.0, _T.exp(diff))
    u, v = w.real, w.imag
    # log1p(u + iv) = log|1 + w| + i arg(1 + w), with |1 + w|^2 - 1 formed without cancelling
    r = hi + parts(0.5 * (u * (2 + u) + v * v).log1p(), _more["atan2"](v, 1 + u))
    tie = isinf(lo.real) & (lo.real == hi.real)
    r = _T.where(tie & (lo.real < 0), lo, r)
    r = _T.where(tie & (lo.real > 0), _T.log(_T.exp(lo) + _T.exp(hi)), r)
    return _T.where(isnan(a) | isnan(b), complex(math.nan, math.nan), r)
