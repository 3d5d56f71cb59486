"""Dynamic shapes for ``ember.export`` (``torch.export.dynamic_shapes``).

A ``Dim`` names a dimension that may vary between calls, within ``[min, max]``; the same
Dim on two inputs says their sizes are equal, and ``2 * dim`` or ``dim + 1`` (a derived
dim) ties a size to another.  ``Dim.AUTO`` lets the export decide (dynamic unless the code
needs a fixed value), ``Dim.STATIC`` fixes the size, ``Dim.DYNAMIC`` demands a dynamic size.
``resolve`` turns the ``dynamic_shapes`` argument of ``export`` into a spec per input tensor.
"""
import enum
import inspect

__all__ = ["Dim", "ShapesCollection", "dims"]

_INF = float("inf")


class _DimHint(enum.Enum):
    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"

    def __repr__(self):
        return f"DimHint({self.value})"


class Dim:
    """A named dynamic dimension, ranging over ``[min, max]`` (``torch.export.Dim``).

    Args:
        name: the name shown in errors and constraints.
        min: the smallest size (default 0; sizes 0 and 1 are specialised by the export, so
            a program is valid from 2 on).
        max: the largest size (default: unbounded).
    """

    AUTO = _DimHint.AUTO
    STATIC = _DimHint.STATIC
    DYNAMIC = _DimHint.DYNAMIC

    def __init__(self, name, *, min=None, max=None):
        lo = 0 if min is None else min
        hi = _INF if max is None else max
        if not lo <= hi:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise ValueError(f"Dim name must be a valid identifier, got {name}")
        self.__name__ = name
        self.min, self.max = lo, hi

    def _derive(self, a, b):
        return _DerivedDim(self, a, b)

    def __add__(self, other):
        _check_int(other, "+")
        return self._derive(1, other)

    __radd__ = __add__

    def __sub__(self, other):
        _check_int(other, "-")
        return self._derive(1, -other)

    def __mul__(self, other):
        _check_int(other, "*")
        if other <= 0:
            raise NotImplementedError(f"Attempted to multiply {other} with {self.__name__}, "
                                      f"where a positive integer was expected. (Support for "
                                      f"negative multipliers is not implemented.)")
        return self._derive(other, 0)

    __rmul__ = __mul__

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min != 2:
            parts.append(f"min={self.min}")
        if self.max != _INF:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"


def _check_int(other, op):
    if isinstance(other, bool) or not isinstance(other, int):
        raise NotImplementedError(f"Attempted to apply {op} with a non-integer "
                                  f"{type(other).__name__}; derived dims take ints")


class _DerivedDim(Dim):
    """``a * root + b`` for a root Dim: a size tied to another input's."""

    def __init__(self, root, a, b):
        self.root, self.a, self.b = root, a, b
        self.__name__ = _expr(root.__name__, a, b)
        self.min = a * root.min + b
        self.max = root.max if root.max == _INF else a * root.max + b

    def _derive(self, a, b):
        return _DerivedDim(self.root, self.a * a, self.b * a + b)

    def __repr__(self):
        return self.__name__


def _expr(name, a, b):
    s = name if a == 1 else f"{a}*{name}"
    return s if b == 0 else f"{s} + {b}" if b > 0 else f"{s} - {-b}"


def dims(*names, min=None, max=None):
    """One ``Dim`` per name, each with the same ``min`` and ``max``."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class ShapesCollection:
    """Dynamic shapes keyed by the example tensors themselves: ``sc[x] = {0: batch}``;
    ``dynamic_shapes(m, args, kwargs)`` gives the ``dynamic_shapes`` argument ``export``
    takes for those inputs."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, t, shape):
        self._shapes[id(t)] = (t, shape)

    def __getitem__(self, t):
        return self._shapes[id(t)][1]

    def __len__(self):
        return len(self._shapes)

    def dynamic_shapes(self, m, args, kwargs=None):
        from ember.core._tensor import TensorBase

        def spec(v):
            if isinstance(v, TensorBase):
                return self._shapes.get(id(v), (None, None))[1]
            if isinstance(v, (tuple, list)):
                return type(v)(spec(x) for x in v)
            if isinstance(v, dict):
                return {k: spec(x) for k, x in v.items()}
            return None
        named = _named_inputs(m, args, kwargs or {})
        return {name: spec(v) for name, v in named.items()}


# ---- resolving export's dynamic_shapes ----------------------------------------------------

def _user_error(msg):
    from ember._dynamo.exc import UserError, UserErrorType
    return UserError(UserErrorType.INVALID_INPUT, msg)


def _named_inputs(mod, args, kwargs):
    """The inputs by the names of ``mod.forward``'s parameters (positional ones first)."""
    forward = getattr(mod, "forward", mod)
    try:
        bound = inspect.signature(forward).bind(*args, **kwargs)
    except (TypeError, ValueError):
        names = [f"arg{i}" for i in range(len(args))] + list(kwargs)
        return dict(zip(names, list(args) + list(kwargs.values())))
    out = {}
    for name, value in bound.arguments.items():
        kind = inspect.signature(forward).parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            out.update({f"{name}_{i}": v for i, v in enumerate(value)})
        elif kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


def resolve(mod, args, kwargs, dynamic_shapes):
    """{id(tensor): (path, {dim: Dim | _DimHint | int})} for the input tensors that have a
    spec; raises UserError for a spec that does not match the inputs."""
    out = {}
    if dynamic_shapes is None:
        return out
    named = _named_inputs(mod, args, kwargs)
    if isinstance(dynamic_shapes, dict):
        if set(dynamic_shapes) - set(named) or not set(dynamic_shapes):
            raise _user_error(
                f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {list(named)} of `inputs`, but here they are "
                f"{list(dynamic_shapes)}. Alternatively, you could also ignore arg names "
                f"entirely and specify `dynamic_shapes` as a list/tuple matching `inputs`.")
        pairs = [(f"{k}", named[k], dynamic_shapes[k]) for k in dynamic_shapes]
    elif isinstance(dynamic_shapes, (tuple, list)):
        values = list(named.values())
        if len(values) != len(dynamic_shapes):
            raise _user_error(f"Detected mismatch between the structure of `inputs` and "
                              f"`dynamic_shapes`: `inputs` has {len(values)} elements, but "
                              f"`dynamic_shapes` has {len(dynamic_shapes)} elements")
        pairs = [(k, v, s) for k, v, s in zip(named, values, dynamic_shapes)]
    else:
        raise _user_error(f"dynamic_shapes must be a dict, tuple or list, got "
                          f"{type(dynamic_shapes).__name__}")
    for path, value, spec in pairs:
        _walk(path, value, spec, out)
    return out


def _walk(path, value, spec, out):
    from ember.core._tensor import TensorBase
    if spec is None:
        return
    if isinstance(value, TensorBase):
        out[id(value)] = (path, _tensor_spec(path, value, spec))
        return
    if isinstance(value, (tuple, list)) and isinstance(spec, (tuple, list)) \
            and len(value) == len(spec):
        for i, (v, s) in enumerate(zip(value, spec)):
            _walk(f"{path}[{i}]", v, s, out)
    elif isinstance(value, dict) and isinstance(spec, dict) and set(spec) <= set(value):
        for k, s in spec.items():
            _walk(f"{path}[{k!r}]", value[k], s, out)
    else:
        raise _user_error(f"Detected mismatch between the structure of `inputs` and "
                          f"`dynamic_shapes`: `inputs{path}` is a {type(value).__name__}, but "
                          f"`dynamic_shapes{path}` is {spec!r}")


def _tensor_spec(path, t, spec):
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (tuple, list)):
        if len(spec) != t.dim():
            raise _user_error(f"Expected dynamic shape spec {spec!r} at `inputs{path}` to "
                              f"have one entry per dimension of the tensor ({t.dim()})")
        items = enumerate(spec)
    else:
        raise _user_error(f"Unexpected dynamic shape spec {spec!r} at `inputs{path}`: expected "
                          f"a dict or a list of Dims per dimension")
    dims_ = {}
    for d, s in items:
        if not isinstance(d, int) or not -t.dim() <= d < t.dim():
            raise _user_error(f"Dynamic shape spec at `inputs{path}` names dimension {d!r} of "
                              f"a tensor with {t.dim()} dimensions")
        if s is None or s is _DimHint.STATIC:
            continue
        if not isinstance(s, (Dim, _DimHint, int)) or isinstance(s, bool):
            raise _user_error(f"Unexpected dimension mapped to index {d} in `inputs{path}`: "
                              f"{s!r} (expected a Dim, Dim.AUTO/DYNAMIC/STATIC, an int or None)")
        dims_[d % t.dim()] = s
    return dims_
