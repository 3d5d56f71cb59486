"""Composite ops: written once in terms of primitive ops, so they run on every device and
every backend gets them for free (a plugin may later override a hot one with a fused
kernel; autograd will differentiate them through their primitives).

Names follow torch; a name shadowing a builtin (min, max, all) is not defined here.
"""
import functools
import math

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import promote_types
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.function import Function, zero_derivative
from ember.core.grad_mode import is_grad_enabled
from ember.core.typeinfo import finfo

__all__ = ["addcdiv", "addcmul", "allclose", "bmm", "cat", "clamp", "clip", "concat",
           "concatenate", "count_nonzero", "diag", "dot", "eye", "hstack", "isclose",
           "isfinite", "isinf", "isnan", "lerp", "linspace", "logspace", "logsumexp", "mm",
           "mv", "nan_to_num", "outer", "roll", "rsub", "sign", "stack", "std", "std_mean",
           "tile", "trace", "tril", "triu", "var", "var_mean", "vector_norm", "vstack"]


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
    r = input
    if min is not None:
        r = _T._maximum_scalar(r, min)
    if max is not None:
        r = _T._minimum_scalar(r, max)
    return r if out is None else out.copy_(r)


clip = clamp


def sign(input):
    """-1, 0 or 1 by the sign of each element (bool stays bool)."""
    _tensor_arg(input, "sign")
    if input.dtype.name == "bool":
        return input.clone()
    return zero_derivative("sign", _sign, input)


def _sign(x):
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


def _common_dtype(*tensors):
    """PyTorch's promotion over several tensors: dimensioned ones rank above 0-d ones."""
    dims = [t.dtype for t in tensors if t.dim()]
    zero = [t.dtype for t in tensors if not t.dim()]
    if not dims or not zero:
        return functools.reduce(promote_types, dims or zero)
    return _T.result_type(_T.empty(0, dtype=functools.reduce(promote_types, dims)),
                          _T.empty((), dtype=functools.reduce(promote_types, zero)))


def _ternary_operands(op, kernel, input, tensor1, tensor2, value):
    """The three tensors in their common dtype, and value as that dtype's kind of number."""
    for x, arg in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(x, op, arg)
    rt = _common_dtype(input, tensor1, tensor2)
    if rt.name == "bool":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    value = value if rt.is_floating_point else int(value)
    return input.to(rt), tensor1.to(rt), tensor2.to(rt), value


_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16"}


def lerp(input, end, weight):
    """input + weight * (end - input); ``end`` (and a tensor ``weight``) must have input's
    floating dtype."""
    _tensor_arg(input, "lerp")
    _tensor_arg(end, "lerp", "end")
    kernel = "lerp_kernel_tensor" if isinstance(weight, TensorBase) else "lerp_kernel_scalar"
    for x, arg in ((end, "end"), (weight, "weight")):
        # a 0-d weight is PyTorch's wrapped number: any dtype, and it joins the promotion
        if isinstance(x, TensorBase) and x.dtype != input.dtype and \
                (arg == "end" or x.dim()):
            got = _C10_NAMES.get(x.dtype.name, x.dtype.name)
            raise RuntimeError(f"expected dtype {_C10_NAMES.get(input.dtype.name)} for "
                               f"`{arg}` but got dtype {got}")
    rt = _common_dtype(input, end, weight) if isinstance(weight, TensorBase) else input.dtype
    if not rt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_T._st_name(rt)}\'')
    if rt != input.dtype or (isinstance(weight, TensorBase) and weight.dtype != rt):
        input, end = input.to(rt), end.to(rt)
        weight = weight.to(rt) if isinstance(weight, TensorBase) else weight
    return input + weight * (end - input)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, in the three tensors' promoted dtype."""
    input, tensor1, tensor2, value = _ternary_operands("addcmul", "addcmul_cpu_out", input,
                                                       tensor1, tensor2, value)
    return input + value * (tensor1 * tensor2)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (true division)."""
    for x, arg in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(x, "addcdiv", arg)
    if not tensor1.is_floating_point() and not tensor2.is_floating_point():
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    input, tensor1, tensor2, value = _ternary_operands("addcdiv", "addcdiv_cpu_out", input,
                                                       tensor1, tensor2, value)
    return input + value * (tensor1 / tensor2)


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
    """|input - other| <= atol + rtol * |other|, elementwise (inf equal to itself)."""
    _tensor_arg(input, "isclose")
    _tensor_arg(other, "isclose", "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    close = input == other
    if input.is_floating_point() or input.dtype.is_complex:
        close = close | (_T._abs(input - other) <= atol + rtol * _T._abs(other))
        if equal_nan:
            close = close | (isnan(input) & isnan(other))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element of ``input`` is close to ``other`` (see isclose)."""
    return bool(_T._all(isclose(input, other, rtol, atol, equal_nan)).item())


def _var(input, dim, correction, keepdim, op):
    x = _tensor_arg(input, op)
    if not x.is_floating_point():
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {_scalar_name(x)}")
    mean = x.mean(dim, keepdim=True)
    n = x.numel() // max(1, mean.numel())
    if n - correction <= 0:
        import warnings
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    var = _T.square(x - mean).sum(dim, keepdim=keepdim) / max(0, n - correction)
    return var, (mean if keepdim else mean.squeeze(dim) if dim is not None else mean.view(()))


def var(input, dim=None, *, correction=1, keepdim=False, unbiased=None, axis=None,
        keepdims=None):
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("var", dim, keepdim, axis, keepdims)
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return _var(input, dim, correction, keepdim, "var")[0]


def std(input, dim=None, *, correction=1, keepdim=False, unbiased=None, axis=None,
        keepdims=None):
    """Standard deviation over ``dim`` with Bessel's ``correction``."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("std", dim, keepdim, axis, keepdims)
    return _T.sqrt(var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased))


def var_mean(input, dim=None, *, correction=1, keepdim=False, axis=None, keepdims=None):
    """(var, mean) over ``dim``."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("var_mean", dim, keepdim, axis, keepdims)
    return _var(input, dim, correction, keepdim, "var_mean")


def std_mean(input, dim=None, *, correction=1, keepdim=False, axis=None, keepdims=None):
    """(std, mean) over ``dim``."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("std_mean", dim, keepdim, axis, keepdims)
    v, m = _var(input, dim, correction, keepdim, "std_mean")
    return _T.sqrt(v), m


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """linalg.vector_norm: the ``ord``-norm of ``x`` over ``dim`` (all dims by default)."""
    _tensor_arg(x, "vector_norm", "x")
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_scalar_name(x)}")
    red = () if dim is None else dim
    if ord == math.inf:
        return _T.amax(_T._abs(x), red, keepdim)
    if ord == -math.inf:
        return _T.amin(_T._abs(x), red, keepdim)
    if ord == 0:
        return (x != 0).to(x.dtype).sum(dim, keepdim=keepdim)
    if ord == 1:
        return _T._abs(x).sum(dim, keepdim=keepdim)
    return _PNorm.apply(x, float(ord), dim, keepdim)


class _PNorm(Function):
    """(sum |x|^p)^(1/p) over ``dim`` with PyTorch's derivative x |x|^(p-2) / norm^(p-1),
    zero where the norm is zero (differentiating the composite gives 0/0 there)."""

    _node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, p, dim, keepdim):
        if p == 2:                                     # two passes: no |x| needed
            norm = _T.sqrt(_T.square(x).sum(dim, keepdim=True))
        else:
            norm = (_T._abs(x) ** p).sum(dim, keepdim=True) ** (1.0 / p)
        ctx.save_for_backward(x, norm)
        ctx.p, ctx.dim, ctx.keepdim = p, dim, keepdim
        return norm if keepdim else _unkeep(norm, dim)

    @staticmethod
    def backward(ctx, g):
        x, norm = ctx.saved_tensors
        p = ctx.p
        if is_grad_enabled():             # create_graph: the norm as a function of x again
            norm = _PNorm.apply(x, p, ctx.dim, True)
        if not ctx.keepdim:
            g = g.reshape(norm.shape)
        scale = x if p == 2 else x * _T._abs(x) ** (p - 2)
        d = g / (norm if p == 2 else norm ** (p - 1))
        return scale * _T.where(norm == 0, 0.0, d).to(d.dtype), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """The norm's tangent: sum(x |x|^(p-2) t) / norm^(p-1), zero where the norm is."""
        x, norm = ctx.saved_tensors
        p = ctx.p
        scale = x if p == 2 else x * _T._abs(x) ** (p - 2)
        d = (scale * t).sum(ctx.dim, keepdim=True) / (norm if p == 2 else norm ** (p - 1))
        d = _T.where(norm == 0, 0.0, d).to(d.dtype)
        return d if ctx.keepdim else _unkeep(d, ctx.dim)


def _unkeep(t, dim):
    """``t`` (reduced over ``dim`` with keepdim) without the reduced dims."""
    if dim is None or dim == () or dim == []:
        return t.reshape(())
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return t.squeeze(tuple(d % t.dim() for d in dims)) if t.dim() else t


def count_nonzero(input, dim=None, *, axis=None):
    """How many elements of ``input`` (over ``dim``) are nonzero, as int64."""
    if axis is not None:
        dim, _ = _T._numpy_names("count_nonzero", dim, False, axis, None)
    _T._refuse_limited("count_nonzero", _tensor_arg(input, "count_nonzero").dtype)
    return (input != 0).sum(dim)


def outer(input, vec2):
    """The outer product of two 1-D tensors."""
    _tensor_arg(input, "outer")
    _tensor_arg(vec2, "outer", "vec2")
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: expected 1D tensors, got {input.dim()}D and {vec2.dim()}D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def _dims(op, *pairs):
    for t, n, arg in pairs:
        _tensor_arg(t, op, arg)
        if t.dim() != n:
            raise RuntimeError(f"{arg} must be a {n}D tensor" if op != "dot" else
                               f"1D tensors expected, but got {t.dim()}D and {n}D tensors")


def dot(input, tensor):
    """The inner product of two 1-D tensors of the same size."""
    _dims("dot", (input, 1, "input"), (tensor, 1, "tensor"))
    return _T.matmul(input, tensor)


@composite("mm")
def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors."""
    _dims("mm", (input, 2, "self"), (mat2, 2, "mat2"))
    return _T.matmul(input, mat2, out=out)


@composite("bmm")
def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors with the same batch size."""
    _dims("bmm", (input, 3, "batch1"), (mat2, 3, "batch2"))
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: "
                           f"[{mat2.shape[0]}, {mat2.shape[1]}].")
    return _T.matmul(input, mat2, out=out)


def mv(input, vec):
    """Matrix-vector product."""
    _dims("mv", (input, 2, "self"), (vec, 1, "vec"))
    return _T.matmul(input, vec)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default: the dtype's max), -inf -> ``neginf``
    (default: its lowest value)."""
    _tensor_arg(input, "nan_to_num")
    if not input.is_floating_point():
        return input.clone() if out is None else out.copy_(input)
    info = finfo(input.dtype)
    r = _T.where(isnan(input), nan, input)
    r = _T.where(r == math.inf, info.max if posinf is None else posinf, r)
    r = _T.where(r == -math.inf, info.min if neginf is None else neginf, r)
    return r.to(input.dtype) if out is None else out.copy_(r)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, stable for large values and infinities."""
    x = _tensor_arg(input, "logsumexp")
    if not x.is_floating_point():
        x = x.to(_T._state_default_dtype())
    m = _T.amax(x, dim, True) if x.numel() else _T.zeros_like(x.sum(dim, keepdim=True))
    m = _T.where(isinf(m), 0.0, m).to(x.dtype)       # all -inf (or +inf) rows stay exact
    r = _T.log(_T.exp(x - m).sum(dim, keepdim=True)) + m
    return r if keepdim else r.squeeze(dim)


# --- joining, repeating and triangular ops: views + copy_ / where, so every device has them

def _wrap(dim, ndim, op):
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def cat(tensors, dim=0, *, out=None, axis=None):
    """Concatenate ``tensors`` along ``dim`` (1-D empty tensors are skipped, as PyTorch).
    One autograd node whose backward hands each input a view of the gradient."""
    if axis is not None:
        dim, _ = _T._numpy_names("cat", dim, False, axis, None, 0)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):          # the message only when it is needed
            _tensor_arg(t, "cat", f"tensors[{i}]")
    return _T._cat(tensors, dim, out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None, axis=None):
    """Stack same-shaped ``tensors`` along a new dim ``dim``."""
    if axis is not None:
        dim, _ = _T._numpy_names("stack", dim, False, axis, None, 0)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if _tensor_arg(t, "stack", f"tensors[{i}]").shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = _wrap(dim, tensors[0].dim() + 1, "stack")
    return cat([t.unsqueeze(d) for t in tensors], d, out=out)


def hstack(tensors):
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    tensors = [t if t.dim() else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    """Concatenate along dim 0, treating 1-D tensors as rows."""
    return cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


def _repeat(input, repeats):
    repeats = tuple(repeats[0]) if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)) \
        else tuple(repeats)
    if len(repeats) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(repeats) - input.dim()) + tuple(input.shape)
    x = input.reshape(shape)
    # interleave a broadcast dim before every dim, then fold: [r0, s0, r1, s1, ...]
    expanded = x.reshape(sum(((1, s) for s in shape), ())).expand(
        sum(((r, s) for r, s in zip(repeats, shape)), ()))
    return expanded.contiguous().reshape(tuple(r * s for r, s in zip(repeats, shape)))


def repeat(input, *repeats):
    """``input`` tiled ``repeats`` times along each dim (Tensor.repeat)."""
    return _repeat(_tensor_arg(input, "repeat"), repeats)


def tile(input, dims):
    """Like repeat, but with fewer ``dims`` than dimensions the leading ones repeat once."""
    _tensor_arg(input, "tile")
    dims = tuple(dims)
    return _repeat(input, (1,) * (input.dim() - len(dims)) + dims)


def roll(input, shifts, dims=None):
    """Elements shifted by ``shifts`` along ``dims`` (flattened when dims is None)."""
    _tensor_arg(input, "roll")
    if dims is None:
        return roll(input.flatten(), shifts, 0).view(input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    r = input
    for s, d in zip(shifts, dims):
        n = r.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            r = cat([r.narrow(d, n - s, s), r.narrow(d, 0, n - s)], d)
    return r if r is not input else input.clone()


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
        requires_grad=False):
    """An n x m matrix with ones on the diagonal."""
    result = _T.zeros(n, n if m is None else m, dtype=dtype, device=device)
    _T._refuse_limited("eye", result.dtype)
    result.diagonal().fill_(1)              # before requires_grad: a leaf is not written
    if out is not None:
        return out.copy_(result) if tuple(out.shape) == tuple(result.shape) else \
            out.resize_(result.shape).copy_(result)
    return result.requires_grad_(requires_grad)


def _triangle(input, diagonal, upper, op):
    _T._refuse_limited(op, _tensor_arg(input, op).dtype)
    if input.dim() < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    rows, cols = input.shape[-2], input.shape[-1]
    offset = _T.arange(cols, device=input.device) - _T.arange(rows, device=input.device).view(
        rows, 1)                                       # col - row, broadcast [rows, cols]
    keep = offset >= diagonal if upper else offset <= diagonal
    return _T.where(keep, input, _T.zeros((), dtype=input.dtype, device=input.device))


def tril(input, diagonal=0):
    """The lower triangle (on and below ``diagonal``) of the last two dims; zeros above."""
    return _triangle(input, diagonal, False, "tril")


def triu(input, diagonal=0):
    """The upper triangle (on and above ``diagonal``) of the last two dims; zeros below."""
    return _triangle(input, diagonal, True, "triu")


def diag(input, diagonal=0):
    """1-D input: a matrix with it on ``diagonal``; 2-D input: that diagonal, as 1-D."""
    _tensor_arg(input, "diag")
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    if input.dim() != 1:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.dim()}D")
    n = input.shape[0] + abs(diagonal)
    out = _T.zeros(n, n, dtype=input.dtype, device=input.device)
    out.diagonal(diagonal).copy_(input)
    return out


@composite("trace")
def trace(input):
    """Sum of the main diagonal of a 2-D tensor."""
    if _tensor_arg(input, "trace").dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    if dtype is not None:
        _T._refuse_limited("linspace", _T._dtypes.as_dtype(dtype, "linspace", "dtype"))
    i = _T.arange(steps, dtype=_T._dtypes._dtype_by_name["float64"], device=device)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    # from both ends, as PyTorch does, so the last value is exactly `end`
    half = steps // 2
    values = _T.where(i < half, start + step * i, end - step * (steps - 1 - i))
    return values.to(_T._state_default_dtype() if dtype is None else dtype)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base`` ** linspace(start, end, steps)."""
    exps = linspace(start, end, steps, dtype=_T._dtypes._dtype_by_name["float64"], device=device)
    return (base ** exps).to(_T._state_default_dtype() if dtype is None else dtype)
