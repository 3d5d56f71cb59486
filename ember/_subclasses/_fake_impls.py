"""The Python-key kernels of FakeTensor: symbolic output shapes for each op family.

Each kernel first runs the op on the hint meta tensors (the eager argument checks and error
messages, and the result's dtype, exactly as eager), then computes the symbolic shape with
``ember.core.shape_rules``.  Kernels receive the arguments each op's call site in the core
passes to a dispatch-key kernel.
"""
import ember
from ember._subclasses._fake_nn import NN_RULES, static_fallback
from ember._subclasses.fake_tensor import FakeTensor, contiguous_strides, hint
from ember._sym import SymInt
from ember.core import _tensor as _core
from ember.core import shape_rules as rules
from ember.core._dispatch import DispatchKey, all_ops, set_fallthrough
from ember.core.tensor import Tensor

FAMILY_VIEW, FAMILY_UNARY, FAMILY_BINARY, FAMILY_REDUCE = 0, 1, 2, 3
FAMILY_WHERE, FAMILY_SCAN, FAMILY_SOFTMAX = 8, 9, 12


def _unwrap(x):
    """Fake tensors as their hint meta tensors, real tensors moved to meta, SymInts as
    hints (through tuples and lists)."""
    if isinstance(x, FakeTensor):
        return x._meta
    if isinstance(x, Tensor):
        return x.to("meta")
    if isinstance(x, (tuple, list)):
        return type(x)(_unwrap(v) for v in x) if type(x) in (tuple, list) else \
            tuple(map(_unwrap, x))
    return hint(x)


def _sizes(x):
    if isinstance(x, FakeTensor):
        return x._fake_sizes
    return tuple(x.shape) if isinstance(x, Tensor) else ()


def _first_fake(*args):
    return next(a for a in args if isinstance(a, FakeTensor))


def _fake(ref, sizes, like, strides=None):
    """The FakeTensor for the hint result ``ref`` with symbolic ``sizes``."""
    sizes = tuple(sizes)
    if len(sizes) != ref.dim():
        raise RuntimeError(f"fake tensor: the symbolic rule gave {len(sizes)} dims, the hint "
                           f"result has {ref.dim()}")
    return FakeTensor._make(ref, sizes, contiguous_strides(sizes) if strides is None
                            else strides, like.fake_device, like.fake_mode)


def _into(name, out, result):
    """``result``, or the fake ``out=`` tensor it is written to (same sizes only)."""
    if out is None:
        return result
    if not isinstance(out, FakeTensor) or out.dim() != result.dim() or \
            any(a is not b and a != b for a, b in zip(out._fake_sizes, result._fake_sizes)):
        raise NotImplementedError(f"{name}: out= of another shape is not supported with "
                                  f"FakeTensor inputs")
    return out


def _fn(name):
    return getattr(ember, name, None) or getattr(_core, name)


# ---- elementwise ----------------------------------------------------------------------

def _binary(name):
    def kernel(a, b, alpha=1, out=None):
        extra = {} if alpha == 1 else {"alpha": alpha}
        ref = _fn(name)(_unwrap(a), _unwrap(b), **extra)
        return _into(name, out, _fake(ref, rules.elementwise(_sizes(a), _sizes(b)),
                                      _first_fake(a, b)))
    return kernel


def _unary(name):
    def kernel(a, out=None):
        return _into(name, out, _fake(_fn(name)(_unwrap(a)), a._fake_sizes, a))
    return kernel


def _where(cond, a, b, out=None, dtype=None):
    ref = ember.where(_unwrap(cond), _unwrap(a), _unwrap(b))
    if dtype is not None and ref.dtype != dtype:        # the caller's promoted result type
        ref = ref.to(dtype)
    return _into("where", out, _fake(ref, rules.elementwise(_sizes(cond), _sizes(a), _sizes(b)),
                                     _first_fake(cond, a, b)))


# ---- reductions, scans, softmax -------------------------------------------------------

def _dims(dim, ndim, name):
    if dim is None or isinstance(dim, (tuple, list)) and len(dim) == 0:
        return ()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(_core._wrap_dim(d, ndim, name) for d in dims)


def _reduce(name):
    def kernel(a, dim, keepdim, dtype=None, out=None):
        if out is not None:
            raise NotImplementedError(f"{name}: out= is not supported with FakeTensor inputs")
        args = (_unwrap(a),) if dim is None and not keepdim else (_unwrap(a), dim, keepdim)
        ref = _fn(name)(*args, **({} if dtype is None else {"dtype": dtype}))
        sizes = rules.reduction(a._fake_sizes, _dims(dim, a.dim(), name), keepdim)
        if isinstance(ref, tuple):
            return type(ref)(_fake(r, sizes, a) for r in ref)
        return _fake(ref, sizes, a)
    return kernel


def _scan(name):
    def kernel(a, dim, dtype=None):
        ref = _fn(name)(_unwrap(a), dim, **({} if dtype is None else {"dtype": dtype}))
        if isinstance(ref, tuple):
            return type(ref)(_fake(r, a._fake_sizes, a) for r in ref)
        return _fake(ref, a._fake_sizes, a)
    return kernel


def _softmax(name):
    def kernel(a, dim, dtype=None):
        return _fake(_fn(name)(_unwrap(a), dim, dtype=dtype), a._fake_sizes, a)
    return kernel


# ---- matmul and convolution -----------------------------------------------------------

def _matmul(a, b, out=None):
    ref = ember.matmul(_unwrap(a), _unwrap(b))
    return _into("matmul", out, _fake(ref, rules.matmul(_sizes(a), _sizes(b)),
                                      _first_fake(a, b)))


def _convolution(x, w, bias, stride, padding, dilation, groups):
    # the composites (conv1d/conv2d) have checked the shapes; the meta backend has no
    # convolution, so the hint result is made directly
    xs, ws = _sizes(x), _sizes(w)
    spatial = tuple((size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, s, p, d in
                    zip(xs[2:], ws[2:], stride, padding, dilation))
    sizes = (xs[0], ws[0]) + spatial
    ref = ember.empty(hint(sizes), dtype=ember.promote_types(x.dtype, w.dtype), device="meta")
    return _fake(ref, sizes, _first_fake(x, w, bias))


# ---- copies and fills -----------------------------------------------------------------

def _copy_(dst, src):
    _unwrap(dst).copy_(_unwrap(src))            # eager's checks on the hints
    if rules.broadcast_shapes(_sizes(dst), _sizes(src)) != tuple(_sizes(dst)):
        raise RuntimeError(f"copy_(): the source of shape {list(_sizes(src))} does not "
                           f"broadcast to the destination shape {list(_sizes(dst))}")
    return dst


def _fill_(dst, value):
    _unwrap(dst).fill_(_unwrap(value))
    return dst


def _clone(t):
    return _fake(_unwrap(t).clone(), t._fake_sizes, t)


def _to_copy(t, device, dtype):
    ref = _unwrap(t).to(dtype=dtype) if dtype is not None else _unwrap(t).clone()
    r = _fake(ref, t._fake_sizes, t)
    if device is not None:
        r.fake_device = ember.device(device)
    return r


# ---- views ----------------------------------------------------------------------------

def _shape_arg(args):
    """A size list given as varargs or as one sequence (as the core's parse_shape)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _view(name):
    def kernel(t, *args):
        shape = _shape_arg(args)
        ref = getattr(_unwrap(t), name)(*_unwrap(shape))
        return _fake(ref, rules.infer_view_shape(shape, t.numel()), t)
    return kernel


def _permute(t, dims):
    ref = _unwrap(t).permute(*_unwrap(tuple(dims)))
    d = [_core._wrap_dim(i, t.dim(), "permute") for i in dims]
    return _fake(ref, [t._fake_sizes[i] for i in d], t, tuple(t._fake_strides[i] for i in d))


def _transpose(t, dim0, dim1):
    ref = _unwrap(t).transpose(dim0, dim1)
    d = list(range(t.dim()))
    if t.dim():
        a, b = (_core._wrap_dim(x, t.dim(), "transpose") for x in (dim0, dim1))
        d[a], d[b] = d[b], d[a]
    return _fake(ref, [t._fake_sizes[i] for i in d], t, tuple(t._fake_strides[i] for i in d))


def _expand(t, *args):
    want = list(_shape_arg(args))
    ref = _unwrap(t).expand(*_unwrap(want))
    lead = len(want) - t.dim()
    strides = [0] * len(want)
    for i in range(lead, len(want)):
        size = t._fake_sizes[i - lead]
        if isinstance(want[i], int) and want[i] == -1:
            want[i] = size
        if size == want[i]:                  # a guard when symbolic
            strides[i] = t._fake_strides[i - lead]
        elif size != 1:
            raise RuntimeError(f"The expanded size of the tensor ({want[i]}) must match the "
                               f"existing size ({size}) at non-singleton dimension {i}")
    return _fake(ref, want, t, tuple(strides))


def _keep(t, ref, keep):
    return _fake(ref, [t._fake_sizes[i] for i in keep], t,
                 tuple(t._fake_strides[i] for i in keep))


def _squeeze(t, dim):
    ref = _unwrap(t).squeeze() if dim is None else _unwrap(t).squeeze(dim)
    dims = range(t.dim()) if dim is None else _dims(dim, t.dim(), "squeeze")
    drop = {d for d in dims if t._fake_sizes[d] == 1}
    return _keep(t, ref, [i for i in range(t.dim()) if i not in drop])


def _unsqueeze(t, dim):
    ref = _unwrap(t).unsqueeze(dim)
    d = _core._wrap_dim(dim, t.dim() + 1, "unsqueeze")
    sizes, strides = list(t._fake_sizes), list(t._fake_strides)
    stride = strides[d] * sizes[d] if d < t.dim() else 1
    sizes.insert(d, 1)
    strides.insert(d, stride)
    return _fake(ref, sizes, t, tuple(strides))


def _narrow(t, dim, start, length, step=1):
    # FakeTensor.narrow and basic indexing get here with SymInt bounds and run the op on
    # the hint meta tensor, which a capture records with plain ints: the bounds are made
    # plain with a guard (int() specialises), so a graph whose slice follows a size is
    # only reused at that size (x[1:] had replayed at the first size's length)
    start, length = _guarded(start), _guarded(length)
    ref = _unwrap(t).narrow(dim, start, length) if step == 1 else \
        _unwrap(t)[(slice(None),) * _core._wrap_dim(dim, t.dim(), "narrow") +
                   (slice(start, start + length, step),)]
    d = _core._wrap_dim(dim, t.dim(), "narrow")
    sizes, strides = list(t._fake_sizes), list(t._fake_strides)
    sizes[d] = length if step == 1 else (length + step - 1) // step
    strides[d] = strides[d] * step
    return _fake(ref, sizes, t, tuple(strides))


def _guarded(v):
    """A plain int for ``v``: a SymInt specialised with a guard (int()), not its hint."""
    return int(v) if isinstance(v, SymInt) else v


def _select(t, dim, index):
    index = _guarded(index)
    ref = _unwrap(t).select(dim, index)
    d = _core._wrap_dim(dim, t.dim(), "select")
    return _keep(t, ref, [i for i in range(t.dim()) if i != d])


def narrow(t, dim, start, length):
    """Tensor.narrow on a FakeTensor: ``start``/``length`` may be SymInts."""
    d = _core._wrap_dim(dim, t.dim(), "narrow")
    if start < 0:
        start = start + t._fake_sizes[d]
    return _narrow(t, d, start, length)


def getitem(t, index):
    """Basic indexing (ints, slices, None, ...) with symbolic sizes; guards where a bound
    must be compared with a symbolic size."""
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(ix, Tensor) and ix.dtype == ember.bool for ix in items):
        raise NotImplementedError("index: a boolean mask gives a shape that depends on tensor "
                                  "data (data-dependent)")
    if any(isinstance(ix, (Tensor, list)) or ix is True or ix is False for ix in items):
        raise NotImplementedError("index: advanced indexing of a FakeTensor is not supported")
    consumed = sum(1 for ix in items if ix is not None and ix is not Ellipsis)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    r, d = t, 0
    for ix in items:
        if ix is Ellipsis:
            d += t.dim() - consumed
        elif ix is None:
            r = _unsqueeze(r, d)
            d += 1
        elif isinstance(ix, slice):
            size = r._fake_sizes[d]
            step = 1 if ix.step is None else ix.step.__index__()
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = _bound(ix.start, 0, size)
            stop = _bound(ix.stop, size, size)
            r = _narrow(r, d, start, 0 if stop < start else stop - start,
                        step)
            d += 1
        elif hasattr(ix, "__index__"):
            size = r._fake_sizes[d]
            i = ix if isinstance(ix, SymInt) else ix.__index__()
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size "
                                 f"{size}")
            r = _select(r, d, i + size if i < 0 else i)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(ix).__name__})")
    return r if r is not t else _view("view")(t, t._fake_sizes)


def _bound(v, default, size):
    """A slice bound clamped to [0, size] (guards when symbolic)."""
    if v is None:
        return default
    v = v if isinstance(v, SymInt) else v.__index__()
    if v < 0:
        v = v + size
        return 0 if v < 0 else v
    return size if v > size else v


# ---- registration ---------------------------------------------------------------------

_VIEWS = {"view": _view("view"), "reshape": _view("reshape"), "permute": _permute,
          "transpose": _transpose, "expand": _expand, "squeeze": _squeeze,
          "unsqueeze": _unsqueeze, "narrow": _narrow, "select": _select}
_OTHER = {"where": _where, "matmul": _matmul, "convolution": _convolution, "copy_": _copy_,
          "fill_": _fill_, "clone": _clone, "_to_copy": _to_copy}
_FAMILIES = {FAMILY_UNARY: _unary, FAMILY_BINARY: _binary, FAMILY_REDUCE: _reduce,
             FAMILY_SCAN: _scan}


def _rule_for(name, op):
    if name in _VIEWS or name in _OTHER:
        return _VIEWS.get(name) or _OTHER[name]
    if name in NN_RULES:
        return NN_RULES[name]
    if name in ("softmax", "log_softmax"):
        return _softmax(name)
    if op.family in _FAMILIES:
        return _FAMILIES[op.family](name)
    return static_fallback(name)


def _kernel_for(name, op):
    """The op's fake kernel; a call without a fake tensor (the Python key switched on
    thread-locally for plain tensors) finds no kernel here."""
    rule = _rule_for(name, op)

    def kernel(*args, **kwargs):
        if not any(isinstance(a, FakeTensor) for a in args):
            raise NotImplementedError(f"{name}: no kernel registered for dispatch key Python "
                                      f"(only fake tensors have one)")
        return rule(*args, **kwargs)
    kernel.__qualname__ = f"fake_{name}"
    return kernel


def install():
    """Register a Python-key kernel on every op; an op defined later refuses fake tensors
    (the Python key no longer falls through).  Only tensors carrying the Python key (fake
    tensors) ever reach these kernels: the eager path does not change."""
    for name, op in all_ops().items():
        op.register(DispatchKey.Python, _kernel_for(name, op))
    set_fallthrough(DispatchKey.Python, False)


install()
