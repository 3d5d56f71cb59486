"""One validation vocabulary: each helper maps to one exception type.

``message`` is a callable returning the message (built only on failure), or a string.
Conditions may be plain bools or ``ember.SymBool``: a symbolic condition is decided by its
hint and records a guard on its ShapeEnv (``bool(cond)`` does both), unless it is static.

An argument of the wrong type gets PyTorch's message from one place, ``_arg_type_message``;
``_tensor_arg`` is the check every op makes of its tensor arguments.
"""
import operator

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._tensor import TensorBase

_BOOL = _dtype_by_name["bool"]


def _msg(message, default):
    if message is None:
        return default
    return message() if callable(message) else str(message)


def _check_with(error_type, cond, message=None):
    """Raise ``error_type(message())`` unless ``cond``."""
    if cond is True:                    # the common case: no symbolic work, no validation
        return
    if not isinstance(error_type, type) or not issubclass(error_type, Exception):
        raise TypeError(f"_check_with(): error_type must be an Exception type, got {error_type!r}")
    if not bool(cond):
        raise error_type(_msg(message, f"Expected cond to be True, but got {cond}"))


def _check(cond, message=None):
    """RuntimeError unless ``cond``."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None):
    """IndexError unless ``cond``."""
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    """ValueError unless ``cond``."""
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    """TypeError unless ``cond``."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    """NotImplementedError unless ``cond``."""
    _check_with(NotImplementedError, cond, message)


def _arg_type_message(x, op, arg="input", position=None, expected="Tensor"):
    """PyTorch's text for an argument of the wrong type:
    ``{op}(): argument '{arg}' (position {position}) must be {expected}, not {type}``, the
    position part only when ``position`` is given."""
    at = "" if position is None else f" (position {position})"
    return f"{op}(): argument '{arg}'{at} must be {expected}, not {_type_name(x)}"


def _type_name(x):
    """The name PyTorch's messages give ``x``'s type (CPython's tp_name): a class defined in
    Python by its name, a C type with its module (``numpy.ndarray``; builtins bare)."""
    t = type(x)
    if t.__flags__ & (1 << 9) or t.__module__ == "builtins":    # Py_TPFLAGS_HEAPTYPE
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _transform_arg_message(x):
    """PyTorch's text for a non-tensor input differentiated by a function transform."""
    return f"Thing passed to transform API must be Tensor, got {type(x)}"


def _tensor_arg(x, op, arg="input", position=None):
    """``x``, checked to be a Tensor: else TypeError with ``_arg_type_message``."""
    if not isinstance(x, TensorBase):
        raise TypeError(_arg_type_message(x, op, arg, position))
    return x


def _scalar_name(t):
    """PyTorch's scalar-type name of t's dtype ("Float", "Long"), as its messages use it:
    ``t.type()`` ("ember.FloatTensor", "ember.cuda.LongTensor") without device or suffix."""
    return t.type().rsplit(".", 1)[1][:-6]


def _physical(t, recurse=True):
    """t without its vmap wrappers: the tensor holding every level's batch (the innermost
    level's only, without ``recurse``)."""
    while (level := _T._batch_level(t)) is not None:
        t = level.value
        if not recurse:
            break
    return t


def _is_all_true(input):
    """Whether every element of the bool tensor ``input`` is True, as a 0-d bool tensor
    (``torch._is_all_true``).  Inside vmap it answers for the whole batch, unbatched, so a
    validity check can branch on it where ``bool(x.all())`` would read batched data."""
    _tensor_arg(input, "_is_all_true")
    _check(input.dtype is _BOOL, "_is_all_true(): expected a bool tensor")
    return _physical(input).all()


def _is_any_true(input):
    """Whether any element of the bool tensor ``input`` is True, as a 0-d bool tensor
    (``torch._is_any_true``); inside vmap, over the whole batch as ``_is_all_true``."""
    _tensor_arg(input, "_is_any_true")
    _check(input.dtype is _BOOL, "_is_any_true(): expected a bool tensor")
    return _physical(input).any()


def _int_like(value):
    """``value`` as an int where PyTorch's int arguments accept it: an int, a NumPy integer,
    a one-element integer tensor (what has ``__index__``); else None.  A bool is no int
    there."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _int_tuple(value, name, op=None):
    """PyTorch's int-list arguments (kernel_size, stride, padding, dilation, sizes): one
    int-like ``value`` as a 1-tuple, a sequence of them as a tuple of ints; TypeError for
    anything else, floats and bools included."""
    single = _int_like(value)
    if single is not None:
        return (single,)
    where = f"{op}(): argument '{name}'" if op else name
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{where} must be tuple of ints, not {_type_name(value)}") from None
    out = []
    for i, v in enumerate(items):
        iv = _int_like(v)
        if iv is None:
            raise TypeError(f"{where} must be tuple of ints, but found element of type "
                            f"{_type_name(v)} at pos {i}")
        out.append(iv)
    return tuple(out)
