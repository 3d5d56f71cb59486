"""The machinery ember.special's composites share: argument checks and dtype promotion as
PyTorch's special_* ops, evaluation in float64 (a float32/float16 input is rounded once, at
the end), piecewise evaluation over masks, Gauss-Legendre quadrature, and the graph node
that carries a function's derivative formula (or PyTorch's "not implemented" error).

The composites run with recording off: autograd never differentiates a series or a
quadrature term by term; each public function states its derivative as a formula."""
import math

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _arg_type_message, _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.function import Function
from ember.core.grad_mode import no_grad
from ember.core.shapes import broadcast_tensors, cat

__all__ = []

F64 = _dtype_by_name["float64"]
EULER = 0.57721566490153286061        # Euler-Mascheroni constant


def not_implemented_dtype(op, x, dtype=None):
    d = x.dtype if dtype is None else dtype
    return NotImplementedError(f'"{op}_{x.device.type}" not implemented for '
                               f"'{_T._st_name(d)}'")


_HALF = (_dtype_by_name["float16"], _dtype_by_name["bfloat16"])


def float_input(input, op, kernel, half=True):
    """``input`` checked to be a real Tensor, integers and bool as the default dtype;
    ``half=False``: float16/bfloat16 refused, as PyTorch's CPU kernels of op do."""
    x = _tensor_arg(input, f"special_{op}" if kernel else op, "input", 1)
    if x.dtype.is_complex or (not half and x.dtype in _HALF):
        raise not_implemented_dtype(kernel or op, x)
    return x if x.is_floating_point() else x.to(_T._state_default_dtype())


def float_pair(input, other, op, kernel, integers=True, half=True):
    """``(input, other)`` as tensors of their promoted floating dtype, broadcast together;
    either may be a Python number (not both), as PyTorch's Tensor/Scalar overloads.
    ``integers=False``: an integral result type is refused as PyTorch's igamma does;
    ``half=False``: float16/bfloat16 too."""
    if not isinstance(input, TensorBase) and not isinstance(other, TensorBase):
        raise TypeError(f"special_{op}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one "
                        "of: (Tensor input, Tensor other), (Number self, Tensor other), "
                        "(Tensor input, Number other)")
    for v, name in ((input, "input"), (other, "other")):
        if not isinstance(v, (TensorBase, int, float, bool)):
            raise TypeError(_arg_type_message(v, f"special_{op}", name,
                                              expected="Tensor or Number"))
    dt = _T.result_type(input, other)
    ref = input if isinstance(input, TensorBase) else other
    if dt.is_complex or (not half and dt in _HALF):
        raise not_implemented_dtype(kernel, ref, dt)
    if not dt.is_floating_point:
        if not integers:
            raise not_implemented_dtype(kernel, ref, dt)
        dt = _T._state_default_dtype()
    a, b = (v.to(dt) if isinstance(v, TensorBase) else _T.full((), v, dtype=dt,
                                                                device=ref.device)
            for v in (input, other))
    if a.shape != b.shape:
        a, b = broadcast_tensors(a, b)
    return a, b


def out_(r, out, op="special"):
    """``r``, or ``out`` (checked and resized as PyTorch's out= does) holding it."""
    return r if out is None else _T._result_out(r, out, op)


def in_float64(fn, *xs):
    """``fn`` of the inputs as float64 with recording off, rounded back to their dtype."""
    dt = xs[0].dtype
    with no_grad():
        r = fn(*(x.detach().to(F64) for x in xs))
    return r if dt == F64 else r.to(dt)


def piecewise(x, pieces, fill=math.nan):
    """A tensor like ``x`` whose elements under each ``(mask, fn)`` are ``fn(x[mask])``
    (computed only where the mask holds; later pieces win) and ``fill`` elsewhere.  The
    masks are tensors, or callables of ``x``; ``fn`` takes and returns 1-d tensors."""
    r = _T.full_like(x, fill)
    for mask, fn in pieces:
        m = mask(x) if callable(mask) else mask
        if bool(m.any()):
            r[m] = fn(x[m])
    return r


def piecewise_args(xs, pieces, fill=math.nan):
    """``piecewise`` over several same-shaped tensors: ``fn(*(x[mask] for x in xs))``."""
    r = _T.full_like(xs[0], fill)
    for m, fn in pieces:
        if bool(m.any()):
            r[m] = fn(*(x[m] for x in xs))
    return r


_MORE = _T.table_functions()
sinh, cosh, erf, erfc, expm1, log1p, acos, remainder = (
    _MORE[n] for n in ("sinh", "cosh", "erf", "erfc", "expm1", "log1p", "acos", "remainder"))

_GL = {}
_CHUNK = 1 << 14          # rows of the (n, nodes) quadrature matrix evaluated at once


def _legendre_nodes(m, device):
    key = (m, str(device))
    if key not in _GL:
        from numpy.polynomial.legendre import leggauss
        t, w = leggauss(m)
        _GL[key] = (_T.tensor(((t + 1) / 2).tolist(), dtype=F64, device=device),
                    _T.tensor((w / 2).tolist(), dtype=F64, device=device))
    return _GL[key]


def quad(integrand, lo, hi, m, *args):
    """The integrals over [lo, hi] (1-d float64 tensors, one interval per element) of
    ``integrand(t, *cols)`` by ``m``-point Gauss-Legendre: ``t`` is an (n, m) matrix of
    nodes and ``cols`` the per-element ``args`` as (n, 1) columns."""
    t01, w = _legendre_nodes(m, lo.device)
    n = lo.shape[0]
    parts = []
    for s in range(0, max(n, 1), _CHUNK):
        a, b = lo[s:s + _CHUNK, None], hi[s:s + _CHUNK, None]
        cols = [c[s:s + _CHUNK, None] for c in args]
        t = a + (b - a) * t01
        parts.append((integrand(t, *cols) @ w) * (b - a)[:, 0])
    return parts[0] if len(parts) == 1 else cat(parts)


_FIXED = {}


def fixed_nodes(hi, m, device):
    """(t, w): ``m`` Gauss-Legendre nodes and weights on [0, hi] as float64 tensors."""
    key = (hi, m, str(device))
    if key not in _FIXED:
        t01, w = _legendre_nodes(m, device)
        _FIXED[key] = (t01 * hi, w * hi)
    return _FIXED[key]


def trig_quad(x, s, pairs):
    """For each (a, b) of ``pairs``: sum_j a_j cos(x s_j) + b_j sin(x s_j) for every
    element of the 1-d float64 tensor ``x`` (``s``, ``a``, ``b``: constant node vectors,
    ``b`` may be None): a fixed-interval quadrature of a trigonometric integrand, whose
    per-node factors are constants, so each node costs one cos (and sin) of x s_j."""
    out = [[] for _ in pairs]
    need_sin = any(b is not None for _, b in pairs)
    for start in range(0, max(x.shape[0], 1), _CHUNK):
        phase = x[start:start + _CHUNK, None] * s
        c = _T.cos(phase)
        sn = _T.sin(phase) if need_sin else None
        for k, (a, b) in enumerate(pairs):
            r = c @ a
            out[k].append(r if b is None else r + sn @ b)
    return [o[0] if len(o) == 1 else cat(o) for o in out]


def acosh(y):
    """acosh for y >= 1 (not in the core's unary table)."""
    return _T.log(y + _T.sqrt((y - 1) * (y + 1)))


def asinh(y):
    """asinh for y >= 0."""
    return _T.log(y + _T.sqrt(y * y + 1))


def power_series(x, first, ratio, terms):
    """sum_k t_k with t_0 = ``first`` and t_k = t_(k-1) * ``ratio(k)``: a fixed number of
    terms (the callers bound x so ``terms`` reach double precision)."""
    t = first
    s = first
    for k in range(1, terms):
        t = t * ratio(k)
        s = s + t
    return s


# --- graph nodes --------------------------------------------------------------------------

_NODES = {}


def _node_class(title, derivatives, missing):
    key = (title, derivatives, missing)
    cls = _NODES.get(key)
    if cls is None:
        def forward(ctx, fn, *xs):
            r = fn(*xs)
            ctx.save_for_backward(*xs, r)
            return r

        def backward(ctx, g):
            *xs, r = ctx.saved_tensors
            grads = [None]
            for i, d in enumerate(derivatives):
                if not ctx.needs_input_grad[i + 1]:
                    grads.append(None)
                elif d is None:
                    raise NotImplementedError(f"the derivative for '{missing[i]}' is not "
                                              "implemented.")
                else:
                    grads.append(g * d(*xs, r))
            return tuple(grads)

        cls = _NODES[key] = type(title, (Function,), {
            "forward": staticmethod(forward), "backward": staticmethod(backward),
            "_node_name": f"{title}Backward0"})
    return cls


def with_derivative(title, fn, xs, derivatives, missing=()):
    """``fn(*xs)`` recorded as node ``title`` when an input requires grad: its gradient for
    input i is ``g * derivatives[i](*xs, result)`` (ember ops, so it differentiates again);
    a None derivative raises PyTorch's NotImplementedError naming ``missing[i]``."""
    if not _ag.is_grad_enabled() or not any(x.requires_grad for x in xs):
        return fn(*xs)
    return _node_class(title, tuple(derivatives), tuple(missing)).apply(fn, *xs)
