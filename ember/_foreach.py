"""``torch._foreach_*``: PyTorch's multi-tensor ops, which optimizers and gradient clipping
call on lists of tensors.  ember has no fused multi-tensor kernels, so each one is a loop of
the per-tensor op; the forms exist so that code written against them runs and agrees with
PyTorch.

Everything is generated from one table, ``_OPS``: each family names its argument kind (how
the arguments after the tensor list are read and spread over the list) and, where it is not
simply ``ember.<family>`` / ``Tensor.<family>_``, the per-tensor function.  Each family
gives ``_foreach_<family>`` (returns a tuple of new tensors, differentiable) and, unless
marked out-of-place only, ``_foreach_<family>_`` (modifies the tensors and returns the list
it was given, as PyTorch 2.13 does).  Loaded on first use through the façade's
``__getattr__``."""
import numbers

import ember
from ember.core._errors import _check, _check_type
from ember.core.tensor import Tensor

# -- how the arguments after the tensor list are spread over it ------------------------------

_EMPTY = "Tensor list must have at least one tensor."


def _tensor_list(fname, value, arg="self", position=1):
    _check_type(isinstance(value, (list, tuple)), lambda: (
        f"{fname}(): argument '{arg}' (position {position}) must be tuple of Tensors, "
        f"not {type(value).__name__}"))
    for i, t in enumerate(value):
        _check_type(isinstance(t, Tensor), lambda: (
            f"expected Tensor as element {i} in argument {position - 1}, "
            f"but got {type(t).__name__}"))
    return value


def _same_length(tensors, others):
    _check(len(tensors) == len(others), lambda: (
        f"Tensor lists must have the same number of tensors, got {len(tensors)} and "
        f"{len(others)}"))


def _is_number(x):
    return isinstance(x, numbers.Number) or (isinstance(x, Tensor) and x.dim() == 0)


def _number(x):
    return x.item() if isinstance(x, Tensor) else x


def _spread(fname, tensors, other, forms, position=2):
    """``other`` as one value per tensor: a scalar (also a 0-d tensor), a list of scalars,
    a list of tensors, or (``"tensor"`` in ``forms``) one 0-d tensor for every tensor."""
    n = len(tensors)
    if isinstance(other, (list, tuple)):
        if other and isinstance(other[0], Tensor) and "list" in forms:
            _tensor_list(fname, other, position=position)
            _same_length(tensors, other)
            return list(other), "list"
        _check_type("scalars" in forms, lambda: f"{fname}(): a list of scalars is not accepted")
        for i, s in enumerate(other):
            _check_type(isinstance(s, numbers.Number), lambda: (
                f"{fname}(): expected a number as element {i} of the scalar list, "
                f"got {type(s).__name__}"))
        _check(len(other) == n, "Tensor list must have same number of elements as scalar list.")
        return list(other), "scalars"
    if isinstance(other, Tensor) and "tensor" in forms:
        _check(other.dim() == 0, lambda: (
            f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
            f"{other.numel()} elements."))
        return [other] * n, "tensor"
    _check_type("scalar" in forms and _is_number(other), lambda: (
        f"{fname}(): expected {' or '.join(forms)} as argument {position}, "
        f"got {type(other).__name__}"))
    return [_number(other)] * n, "scalar"


# -- the argument kinds: each reads the call's arguments into per-tensor argument tuples -----
# (a kind is a function (fname, tensors, *args, **kwargs) -> ([args per tensor], kwargs))

def _unary(fname, tensors):
    return [() for _ in tensors], {}


def _binary_kind(forms, takes_alpha=False):
    def read(fname, tensors, other=None, *, alpha=None, **names):
        other = _named(fname, other, names, ("other", "scalar", "scalars", "exponent"))
        values, form = _spread(fname, tensors, other, forms)
        kwargs = {}
        if alpha is not None:
            _check_type(takes_alpha and form in ("list", "tensor"), lambda: (
                f"{fname}(): 'alpha' is accepted only with a tensor or a list of tensors"))
            kwargs["alpha"] = _number(alpha)
        return [(v,) for v in values], kwargs
    return read


def _named(fname, value, names, accepted):
    """The second argument, given positionally or by one of PyTorch's names for it."""
    extra = set(names) - set(accepted)
    _check_type(not extra, lambda: f"{fname}() got an unexpected keyword argument "
                                   f"'{sorted(extra)[0]}'")
    given = [names[k] for k in accepted if k in names]
    _check_type(len(given) + (value is not None) == 1, lambda: (
        f"{fname}() takes one argument after the tensor list ({' / '.join(accepted)})"))
    return value if value is not None else given[0]


def _pointwise(fname, tensors, tensor1, tensor2, value=None, *, scalars=None):
    """addcmul/addcdiv: two tensor lists, then ``value`` (a scalar), a list of scalars, or
    a 1-d tensor of one scalar per tensor."""
    for pos, lst in ((2, tensor1), (3, tensor2)):
        _tensor_list(fname, lst, "tensor" + str(pos - 1), pos)
        _same_length(tensors, lst)
    if value is None:
        value = 1 if scalars is None else scalars
    if isinstance(value, Tensor) and value.dim() != 0:
        _check(value.dim() == 1, lambda: (
            f"Expected packed scalar Tensor to be of dimension 1. Got {value.dim()} instead."))
        _check(value.numel() == len(tensors), lambda: (
            f"Expected length of scalars to match input of length {len(tensors)} but got "
            f"{value.numel()} instead."))
        value = value.tolist()
    values, _ = _spread(fname, tensors, value, ("scalar", "scalars"), position=4)
    return [(a, b) for a, b in zip(tensor1, tensor2)], [{"value": v} for v in values]


def _lerp(fname, tensors, tensors1, weight=None, **names):
    _tensor_list(fname, tensors1, "tensors1", 2)
    _same_length(tensors, tensors1)
    weight = _named(fname, weight, names, ("weight", "weights"))
    values, _ = _spread(fname, tensors, weight, ("scalar", "scalars", "list"), position=3)
    return [(e, w) for e, w in zip(tensors1, values)], {}


def _norm_kind(fname, tensors, ord=2, dtype=None):
    return [(_number(ord),) for _ in tensors], {"dtype": dtype}


def _tensor_list_kind(arg):
    def read(fname, tensors, other=None, **names):
        other = _named(fname, other, names, (arg,))
        _tensor_list(fname, other, arg, 2)
        _same_length(tensors, other)
        return [(o,) for o in other], {}
    return read


def _clone_kind(fname, tensors, *, memory_format=None):
    return [() for _ in tensors], {"memory_format": memory_format}


def _copy_kind(fname, tensors, src, non_blocking=False):
    _tensor_list(fname, src, "src", 2)
    _same_length(tensors, src)
    return [(s,) for s in src], {"non_blocking": non_blocking}


# -- per-tensor functions that are not ember.<family> / Tensor.<family>_ ---------------------

def _maximum(t, other):
    return ember.maximum(t, other) if isinstance(other, Tensor) else ember.clamp_min(t, other)


def _minimum(t, other):
    return ember.minimum(t, other) if isinstance(other, Tensor) else ember.clamp_max(t, other)


def _norm(t, ord, dtype=None):
    return ember.linalg.vector_norm(t, ord, dtype=dtype)


def _powsum(t, ord, dtype=None):
    """sum(|t| ** ord): the norm before its root (ord = 0 counts every element)."""
    x = t if dtype is None else t.to(dtype)
    return (x.abs() ** ord).sum()


def _max(t):
    _check(t.numel() > 0, "_foreach_max cannot compute the maximum of an empty tensor; "
                          "max over zero elements is undefined.")
    return ember.amax(t)


def _zero(t):
    return t.zero_()


def _copy(t, src, non_blocking=False):
    return t.copy_(src, non_blocking=non_blocking)


def _clone(t, memory_format=None):
    return ember.clone(t, memory_format=memory_format)


def _mm(t, mat2):
    return ember.mm(t, mat2)


# -- the table ----------------------------------------------------------------------------
# family: (argument kind, out-of-place function or None for ember.<family>,
#          "both" / "out" (no in-place form) / "in" (in-place form only))

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp",
          "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg",
          "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan",
          "tanh", "trunc")
_ALL = ("scalar", "scalars", "list", "tensor")
_NO_TENSOR = ("scalar", "scalars", "list")

_OPS = {name: (_unary, None, "both") for name in _UNARY}
_OPS.update({
    "add": (_binary_kind(_ALL, takes_alpha=True), None, "both"),
    "sub": (_binary_kind(_NO_TENSOR, takes_alpha=True), None, "both"),
    "mul": (_binary_kind(_ALL), None, "both"),
    "div": (_binary_kind(_ALL), None, "both"),
    "pow": (_binary_kind(_NO_TENSOR), None, "both"),
    "clamp_max": (_binary_kind(_NO_TENSOR), None, "both"),
    "clamp_min": (_binary_kind(_NO_TENSOR), None, "both"),
    "maximum": (_binary_kind(_NO_TENSOR), _maximum, "both"),
    "minimum": (_binary_kind(_NO_TENSOR), _minimum, "both"),
    "addcmul": (_pointwise, None, "both"),
    "addcdiv": (_pointwise, None, "both"),
    "lerp": (_lerp, None, "both"),
    "norm": (_norm_kind, _norm, "out"),
    "powsum": (_norm_kind, _powsum, "out"),
    "max": (_unary, _max, "out"),
    "mm": (_tensor_list_kind("mat2"), _mm, "out"),
    "clone": (_clone_kind, _clone, "out"),
    "copy": (_copy_kind, _copy, "in"),
    "zero": (_unary, _zero, "in"),
})


def _kwargs_per_tensor(kwargs, n):
    return kwargs if isinstance(kwargs, list) else [kwargs] * n


def _out_of_place(family, kind, fn):
    name = f"_foreach_{family}"
    fn = fn or getattr(ember, family)

    def op(self, *args, **kwargs):
        if family == "pow" and _is_number(self) and not isinstance(self, Tensor):
            return _scalar_base_pow(name, self, *args, **kwargs)
        tensors = _tensor_list(name, self)
        _check(len(tensors) > 0, _EMPTY)
        per_args, per_kwargs = kind(name, tensors, *args, **kwargs)
        per_kwargs = _kwargs_per_tensor(per_kwargs, len(tensors))
        return tuple(fn(t, *a, **k) for t, a, k in zip(tensors, per_args, per_kwargs))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``ember.{family}`` of each tensor of a list (PyTorch's {name}): a tuple."
    return op


def _scalar_base_pow(name, base, exponent=None, **names):
    """``_foreach_pow(scalar, tensors)``: the scalar raised to each tensor."""
    exponent = _named(name, exponent, names, ("exponent",))
    _tensor_list(name, exponent, "exponent", 2)
    _check(len(exponent) > 0, _EMPTY)
    return tuple(ember.pow(base, e) for e in exponent)


def _in_place(family, kind, fn):
    name = f"_foreach_{family}_"
    method = None if fn in (_maximum, _minimum) else (fn or f"{family}_")

    def op(self, *args, **kwargs):
        tensors = _tensor_list(name, self)
        _check(len(tensors) > 0, _EMPTY)
        per_args, per_kwargs = kind(name, tensors, *args, **kwargs)
        per_kwargs = _kwargs_per_tensor(per_kwargs, len(tensors))
        for t, a, k in zip(tensors, per_args, per_kwargs):
            if method is None:                  # no Tensor method: compute, write back
                t.copy_(fn(t, *a, **k))
            elif callable(method):
                method(t, *a, **k)
            else:
                getattr(t, method)(*a, **k)
        return self

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``Tensor.{family}_`` on each tensor of a list (PyTorch's {name}); "
                  "returns the list it was given.")
    return op


def _build():
    ops = {}
    for family, (kind, fn, forms) in _OPS.items():
        if forms in ("both", "out"):
            ops[f"_foreach_{family}"] = _out_of_place(family, kind, fn)
        if forms in ("both", "in"):
            ops[f"_foreach_{family}_"] = _in_place(family, kind, fn)
    return ops


_FUNCTIONS = _build()
globals().update(_FUNCTIONS)
__all__ = sorted(_FUNCTIONS)
