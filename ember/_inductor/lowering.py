"""Lowering rules: ember ops as lazy values (see ``values``).

Each rule takes the node, its arguments (graph values become Values, constants stay) and
returns a Value, a tuple of Values, or None when it does not apply (the scheduler then runs
the op itself, an *extern*: matmul, convolution, indexing, random draws, in-place writes,
unsupported dtypes...).  Softmax, log_softmax, their backward and layer norm are written
as reductions and pointwise ops here, so the scheduler fuses each into one loop over rows.
"""
import math

import ember
from ember._inductor.ir import index_add, index_div, index_mod, index_mul
from ember._inductor.kernel import dtype_name, expr_dtype
from ember._inductor.values import Buffer, Pointwise, Reduction, Value, View, contiguous_strides

__all__ = ["LOWERINGS", "unflatten_index"]

_KERNEL_DTYPES = {"float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"}
_FLOAT = {"float32", "float64"}

LOWERINGS = {}


def register(*names):
    def wrap(fn):
        for n in names:
            LOWERINGS[n] = fn
        return fn
    return wrap


def unflatten_index(flat, shape):
    """The multi-index of flat position ``flat`` in a contiguous tensor of ``shape``."""
    out = []
    for size, stride in zip(shape, contiguous_strides(shape)):
        out.append(0 if size == 1 else index_mod(index_div(flat, stride), size))
    return out


def _flatten_index(idx, shape):
    flat = 0
    for i, stride, size in zip(idx, contiguous_strides(shape), shape):
        if size != 1:
            flat = index_add(flat, index_mul(i, stride))
    return flat


def meta(node):
    v = node.meta.get("val")
    return tuple(v.shape), v.dtype


def meta_strides(node):
    """The strides of ``node``'s value (a tensor's ``stride()``, or a recorded tuple)."""
    stride = node.meta["val"].stride
    return tuple(stride() if callable(stride) else stride)


def ok_dtype(*dts):
    return all(dtype_name(d) in _KERNEL_DTYPES for d in dts)


def cast(e, dt):
    name = dtype_name(dt)
    return e if expr_dtype(e) == name else ("cast", name, e)


def const(v, dt):
    return ("const", v, dtype_name(dt))


def broadcast_load(kb, value, idx, out_shape):
    lead = len(out_shape) - len(value.shape)
    vidx = [0 if value.shape[d] == 1 else idx[lead + d] for d in range(len(value.shape))]
    return kb.load(value, vidx)


def operand(kb, x, idx, out_shape, ct):
    if isinstance(x, Value):
        return cast(broadcast_load(kb, x, idx, out_shape), ct)
    return const(x, ct)


def _is_operand(x):
    return isinstance(x, Value) and ok_dtype(x.dtype) or \
        isinstance(x, (bool, int, float)) and not isinstance(x, complex)


def _values(*xs):
    return [x for x in xs if isinstance(x, Value)]


def _meta_of(x):
    return ember.empty(x.shape, dtype=x.dtype, device="meta") if isinstance(x, Value) else x


# ---- elementwise ------------------------------------------------------------------------------

_UNARY = {n: n for n in ("neg exp log sin cos tan tanh sigmoid relu sqrt rsqrt abs reciprocal "
                         "square floor ceil trunc round exp2 expm1 log2 log10 log1p erf erfc "
                         "asin acos atan sinh cosh sign").split()}
_UNARY["_gelu"] = "gelu"
_BINARY = {n: n for n in ("add sub mul div pow maximum minimum fmax fmin atan2 eq ne lt le gt "
                          "ge logical_and logical_or logical_xor").split()}
_BINARY["_gelu_backward"] = "gelu_backward"
_PREDICATE = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}


def _unary(node, a, out=None):
    shape, dt = meta(node)
    if out is not None or not isinstance(a, Value) or not ok_dtype(a.dtype, dt):
        return None
    name = _UNARY[node.target.__name__]
    if dtype_name(dt) not in _FLOAT and name not in ("neg", "abs", "relu", "square", "sign"):
        return None
    ct = dt if dtype_name(dt) in _FLOAT else ember.int64

    def fn(kb, idx):
        return cast(("op", name, dtype_name(ct), cast(kb.load(a, idx), ct)), dt)
    return Pointwise(shape, dt, fn, [a])


for _n in _UNARY:
    register(_n)(_unary)


def _binary(node, a, b, alpha=1, out=None):
    shape, dt = meta(node)
    if out is not None or not (_is_operand(a) and _is_operand(b)) or not ok_dtype(dt) \
            or not _values(a, b):
        return None
    name = _BINARY[node.target.__name__]
    if name in _PREDICATE:
        ct = ember.result_type(_meta_of(a), _meta_of(b))
        if not ok_dtype(ct):
            return None
    else:
        ct = dt
    if dtype_name(ct) not in _FLOAT:
        if name in ("div", "pow", "atan2", "fmax", "fmin", "gelu_backward"):
            return None
        ct = ember.int64 if name not in _PREDICATE or dtype_name(ct) != "bool" else ct
    if isinstance(alpha, float) and dtype_name(ct) not in _FLOAT:
        return None

    def fn(kb, idx):
        x = operand(kb, a, idx, shape, ct)
        y = operand(kb, b, idx, shape, ct)
        if alpha != 1:
            y = ("op", "mul", dtype_name(ct), y, const(alpha, ct))
        return cast(("op", name, dtype_name(ct), x, y), dt)
    return Pointwise(shape, dt, fn, _values(a, b))


for _n in _BINARY:
    register(_n)(_binary)


@register("where")
def _where(node, cond, a, b, out=None, dtype=None):
    shape, dt = meta(node)
    if out is not None or not isinstance(cond, Value) or not ok_dtype(dt, cond.dtype) \
            or not (_is_operand(a) and _is_operand(b)):
        return None

    def fn(kb, idx):
        c = cast(broadcast_load(kb, cond, idx, shape), ember.bool)
        return ("op", "where", dtype_name(dt), c, operand(kb, a, idx, shape, dt),
                operand(kb, b, idx, shape, dt))
    return Pointwise(shape, dt, fn, _values(cond, a, b))


@register("_to_copy")
def _to_copy(node, t, device=None, dtype=None):
    shape, dt = meta(node)
    v = node.meta["val"]
    if not isinstance(t, Value) or not ok_dtype(t.dtype, dt) or device is not None and \
            ember.device(device) != ember.device(v.device) or \
            meta_strides(node) != contiguous_strides(shape):
        return None
    return Pointwise(shape, dt, lambda kb, idx: cast(kb.load(t, idx), dt), [t], ops=0)


@register("clone")
def _clone(node, t, memory_format=None):
    shape, dt = meta(node)
    if not isinstance(t, Value) or not ok_dtype(dt) or \
            meta_strides(node) != contiguous_strides(shape):
        return None
    return Pointwise(shape, dt, lambda kb, idx: kb.load(t, idx), [t], ops=0)


# ---- views ------------------------------------------------------------------------------------

def _view_strides(shape, strides, new_shape):
    """Strides viewing a tensor of ``shape``/``strides`` as ``new_shape`` without copying,
    or None when that needs a copy (PyTorch's view rule: each run of old dims that are
    contiguous with one another may be split or merged freely)."""
    if math.prod(shape) == 0 or not shape:
        return contiguous_strides(new_shape)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base = strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(new) if view_d == -1 else None


def _strided(node, base, offset_delta=0):
    """The view made by ``node`` of Buffer ``base``, as a Buffer with the view's strides."""
    shape, dt = meta(node)
    return Buffer(base.name, shape, dt, meta_strides(node), base.offset + offset_delta,
                  view_of=(base, node.target, node))


def _index_view(node, t, index_map):
    shape, dt = meta(node)
    return View(t, shape, dt, index_map, node)


@register("view", "reshape")
def _reshape(node, t, *args):
    shape, dt = meta(node)
    if not isinstance(t, Value):
        return None
    if isinstance(t, Buffer):
        strides = _view_strides(t.shape, t.strides, shape)
        if strides is not None:
            return Buffer(t.name, shape, dt, strides, t.offset, view_of=(t, node.target, node))
        if node.target.__name__ == "view":
            return None
    src = t.shape
    return _index_view(node, t, lambda idx: unflatten_index(_flatten_index(idx, shape), src))


@register("permute")
def _permute(node, t, dims):
    if not isinstance(t, Value):
        return None
    nd = len(t.shape)
    perm = [d % nd for d in dims] if nd else []
    if isinstance(t, Buffer):
        return _strided(node, t)

    def index_map(idx):
        out = [0] * nd
        for o, d in enumerate(perm):
            out[d] = idx[o]
        return out
    return _index_view(node, t, index_map)


@register("transpose")
def _transpose(node, t, dim0, dim1):
    if not isinstance(t, Value):
        return None
    if isinstance(t, Buffer):
        return _strided(node, t)
    nd = len(t.shape)
    a, b = (dim0 % nd, dim1 % nd) if nd else (0, 0)

    def index_map(idx):
        idx = list(idx)
        if nd:
            idx[a], idx[b] = idx[b], idx[a]
        return idx
    return _index_view(node, t, index_map)


@register("expand")
def _expand(node, t, *args):
    if not isinstance(t, Value):
        return None
    if isinstance(t, Buffer):
        return _strided(node, t)
    shape, _ = meta(node)
    return _index_view(node, t, lambda idx: [
        0 if t.shape[d] == 1 else idx[len(shape) - len(t.shape) + d]
        for d in range(len(t.shape))])


@register("unsqueeze")
def _unsqueeze(node, t, dim):
    if not isinstance(t, Value):
        return None
    if isinstance(t, Buffer):
        return _strided(node, t)
    d = dim % (len(t.shape) + 1)
    return _index_view(node, t, lambda idx: idx[:d] + idx[d + 1:])


@register("squeeze")
def _squeeze(node, t, dim=None):
    if not isinstance(t, Value):
        return None
    if isinstance(t, Buffer):
        return _strided(node, t)
    shape, _ = meta(node)
    keep = _squeezed_dims(t.shape, shape)
    if keep is None:
        return None

    def index_map(idx):
        out, it = [], iter(idx)
        for d in range(len(t.shape)):
            out.append(next(it) if d in keep else 0)
        return out
    return _index_view(node, t, index_map)


def _squeezed_dims(old, new):
    keep, j = set(), 0
    for d, s in enumerate(old):
        if j < len(new) and new[j] == s:
            keep.add(d)
            j += 1
        elif s != 1:
            return None
    return keep if j == len(new) else None


@register("narrow")
def _narrow(node, t, dim, start, length, step=1):
    if not isinstance(t, Buffer) or not isinstance(start, int):
        return None
    d = dim % len(t.shape)
    return _strided(node, t, start * t.strides[d])


@register("select")
def _select(node, t, dim, index):
    if not isinstance(t, Buffer) or not isinstance(index, int):
        return None
    d = dim % len(t.shape)
    index = index + t.shape[d] if index < 0 else index
    return _strided(node, t, index * t.strides[d])


# ---- reductions ---------------------------------------------------------------------------------

def _suffix_dims(dim, nd):
    if dim is None or dim == () or dim == []:
        return nd
    dims = sorted({d % nd for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}) \
        if nd else []
    k = len(dims)
    return k if dims == list(range(nd - k, nd)) else None


# float32 sums over rows longer than this accumulate in float64 (shorter rows keep float32
# partial sums, which vectorise: what the eager row kernels do)
_F32_ROW_SUM = 4096


def _acc(dt, kind, n):
    name = dtype_name(dt)
    if kind == "sum":
        if name == "float32" and n <= _F32_ROW_SUM:
            return dt
        return ember.float64 if name in _FLOAT else ember.int64
    return dt


@register("sum", "mean", "amax", "amin")
def _reduce(node, a, dim=None, keepdim=False, dtype=None, out=None):
    shape, dt = meta(node)
    if out is not None or not isinstance(a, Value) or not ok_dtype(a.dtype, dt):
        return None
    k = _suffix_dims(dim, len(a.shape))
    name = node.target.__name__
    if k is None or math.prod(a.shape[len(a.shape) - k:]) == 0:
        return None
    src = a
    if dtype is not None and dtype_name(dtype) != dtype_name(a.dtype):
        src = Pointwise(a.shape, dtype, lambda kb, idx: cast(kb.load(a, idx), dtype), [a], 0)
    kind = {"sum": "sum", "mean": "sum", "amax": "max", "amin": "min"}[name]
    if kind != "sum" and dtype_name(a.dtype) == "bool":
        return None
    scale = 1.0 / math.prod(a.shape[len(a.shape) - k:]) if name == "mean" else None
    n = math.prod(a.shape[len(a.shape) - k:])
    return Reduction(src, k, kind, shape, dt, _acc(dt if kind == "sum" else src.dtype, kind, n),
                     scale)


def _rows(x, n_inner, kind, keep_shape):
    return Reduction(x, n_inner, kind, keep_shape, x.dtype,
                     _acc(x.dtype, kind, math.prod(x.shape[len(x.shape) - n_inner:])))


def _pw(shape, dt, inputs, fn, ops=1):
    return Pointwise(shape, dt, fn, inputs, ops)


def _op(name, dt, *args):
    return ("op", name, dtype_name(dt), *args)


def _keep(shape, k):
    return tuple(shape[:len(shape) - k]) + (1,) * k


def _standalone(*xs):
    """Inputs already in memory: the device's fused row kernel (an extern) beats the
    decomposition unless some computation before it can fuse in."""
    return all(isinstance(x, Buffer) or x is None for x in xs)


def _softmax_parts(node, a, dim, dtype):
    shape, dt = meta(node)
    if not isinstance(a, Value) or _standalone(a) or not ok_dtype(a.dtype) or \
            dtype_name(dt) not in _FLOAT \
            or not shape or dim % len(shape) != len(shape) - 1 or shape[-1] == 0:
        return None
    x = a if dtype_name(a.dtype) == dtype_name(dt) else \
        _pw(shape, dt, [a], lambda kb, idx: cast(kb.load(a, idx), dt), 0)
    m = _rows(x, 1, "max", _keep(shape, 1))
    shifted = _pw(shape, dt, [x, m], lambda kb, idx: _op(
        "sub", dt, kb.load(x, idx), cast(broadcast_load(kb, m, idx, shape), dt)))
    return shape, dt, shifted


@register("softmax")
def _softmax(node, a, dim, dtype=None):
    parts = _softmax_parts(node, a, dim, dtype)
    if parts is None:
        return None
    shape, dt, shifted = parts
    e = _pw(shape, dt, [shifted], lambda kb, idx: _op("exp", dt, kb.load(shifted, idx)))
    s = _rows(e, 1, "sum", _keep(shape, 1))
    return _pw(shape, dt, [e, s], lambda kb, idx: _op(
        "div", dt, kb.load(e, idx), cast(broadcast_load(kb, s, idx, shape), dt)))


@register("log_softmax")
def _log_softmax(node, a, dim, dtype=None):
    parts = _softmax_parts(node, a, dim, dtype)
    if parts is None:
        return None
    shape, dt, shifted = parts
    e = _pw(shape, dt, [shifted], lambda kb, idx: _op("exp", dt, kb.load(shifted, idx)))
    s = _rows(e, 1, "sum", _keep(shape, 1))
    return _pw(shape, dt, [shifted, s], lambda kb, idx: _op(
        "sub", dt, kb.load(shifted, idx),
        _op("log", dt, cast(broadcast_load(kb, s, idx, shape), dt))))


@register("_softmax_backward_data", "_log_softmax_backward_data")
def _softmax_backward(node, g, out, dim, input_dtype):
    shape, dt = meta(node)
    if not (isinstance(g, Value) and isinstance(out, Value)) or _standalone(g, out) or \
            not shape or \
            dtype_name(dt) not in _FLOAT or g.shape != shape or out.shape != shape or \
            dim % len(shape) != len(shape) - 1 or \
            dtype_name(g.dtype) != dtype_name(dt) or dtype_name(out.dtype) != dtype_name(dt):
        return None
    if node.target.__name__ == "_softmax_backward_data":
        go = _pw(shape, dt, [g, out], lambda kb, idx: _op("mul", dt, kb.load(g, idx),
                                                          kb.load(out, idx)))
        s = _rows(go, 1, "sum", _keep(shape, 1))
        return _pw(shape, dt, [g, out, s], lambda kb, idx: _op(
            "mul", dt, kb.load(out, idx), _op("sub", dt, kb.load(g, idx), cast(
                broadcast_load(kb, s, idx, shape), dt))))
    s = _rows(g, 1, "sum", _keep(shape, 1))
    return _pw(shape, dt, [g, out, s], lambda kb, idx: _op(
        "sub", dt, kb.load(g, idx), _op("mul", dt, _op("exp", dt, kb.load(out, idx)), cast(
            broadcast_load(kb, s, idx, shape), dt))))


@register("native_layer_norm")
def _layer_norm(node, x, normalized_shape, weight, bias, eps):
    v = node.meta["val"]
    shapes = [tuple(t.shape) for t in v]
    dt = v[0].dtype
    if not isinstance(x, Value) or _standalone(x) or dtype_name(dt) not in _FLOAT or \
            dtype_name(x.dtype) != dtype_name(dt) or \
            any(w is not None and (not isinstance(w, Value) or w.dtype != dt)
                for w in (weight, bias)):
        return None
    shape, k = x.shape, len(normalized_shape)
    n = math.prod(shape[len(shape) - k:])
    if n == 0:
        return None
    stat_dt = v[1].dtype
    mean = Reduction(x, k, "sum", shapes[1], stat_dt, ember.float64, 1.0 / n)
    centered = _pw(shape, dt, [x, mean], lambda kb, idx: _op(
        "sub", dt, kb.load(x, idx), cast(broadcast_load(kb, mean, idx, shape), dt)))
    sq = _pw(shape, ember.float64, [centered], lambda kb, idx: _op(
        "square", ember.float64, cast(kb.load(centered, idx), ember.float64)))
    var = Reduction(sq, k, "sum", shapes[2], ember.float64, ember.float64, 1.0 / n)
    rstd = _pw(shapes[2], stat_dt, [var], lambda kb, idx: cast(_op(
        "rsqrt", ember.float64, _op("add", ember.float64, kb.load(var, idx),
                                    const(float(eps), ember.float64))), stat_dt))

    def fn(kb, idx):
        y = _op("mul", dt, kb.load(centered, idx),
                cast(broadcast_load(kb, rstd, idx, shape), dt))
        if weight is not None:
            y = _op("mul", dt, y, kb.load(weight, idx[len(shape) - k:]))
        if bias is not None:
            y = _op("add", dt, y, kb.load(bias, idx[len(shape) - k:]))
        return y
    return (_pw(shape, dt, _values(centered, rstd, weight, bias), fn), mean, rstd)
