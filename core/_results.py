"""The named result tuples of ops (``torch.return_types.max``, ``.sort``, ``.linalg_svd``, ...):
one class per op name, made on first use and kept here, where ember.return_types finds it."""
from collections import namedtuple

from ember.core import _autograd as _ag
from ember.core import _tensor as _T

_result_types = {}


def _repr(self):
    # PyTorch's structseq layout: one field per line, the type named with its module
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"{type(self).__module__}.{type(self).__name__}(\n{fields})"


def result_type(name, fields):
    """The named tuple class ``ember.return_types.<name>`` with ``fields``."""
    cls = _result_types.get(name)
    if cls is None:
        cls = namedtuple(name, fields, module="ember.return_types")
        cls.__repr__ = _repr
        _result_types[name] = cls
    return cls


def named_result(name, fields, *values):
    """``values`` as an instance of ``result_type(name, fields)``."""
    return result_type(name, fields)(*values)


def values_indices(name, values, indices):
    """The (values, indices) result of ``name`` (max, sort, topk, mode, ...)."""
    return result_type(name, ("values", "indices"))(values, indices)


def _refuse_recorded(name, inputs):
    """PyTorch's refusal of an out= call whose inputs (tensors, or lists of them) autograd
    records."""
    if _ag.is_grad_enabled() and any(
            t.requires_grad for x in inputs for t in (x if isinstance(x, (list, tuple)) else (x,))
            if isinstance(t, _T.TensorBase)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad.")


def check_out_dtype(out, dtype):
    """PyTorch's error for an ``out`` that must have exactly ``dtype`` (indices: int64)."""
    if out.dtype != dtype:
        from ember.core.conv import _C_NAMES
        raise RuntimeError(f"Expected out tensor to have dtype "
                           f"{_C_NAMES.get(dtype.name, dtype.name)}, but got "
                           f"{_C_NAMES.get(out.dtype.name, out.dtype.name)} instead")


def into_out(name, result, out, *inputs):
    """``result``, or ``out`` (checked and resized, as PyTorch's ``<name>.out``) holding it;
    as in PyTorch, an out= call refuses inputs autograd records."""
    if out is None:
        return result
    _refuse_recorded(name, inputs)
    return _T._result_out(result, out, name)


def values_indices_out(name, input, result, out, fields=("values", "indices")):
    """``result`` (values, indices), or with ``out`` (a pair of tensors) the pair written into
    it, as PyTorch's ``<name>_out``: each must have its result's dtype (it is resized to its
    shape), and autograd does not run through it.  ``fields`` names the pair's members."""
    if out is None:
        return result
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != 2:
        raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
    _refuse_recorded(name, (input,))
    for o, r in zip(out, result):
        check_out_dtype(o, r.dtype)
        _T._result_out(r, o, name)
    return result_type(f"{name}_out", fields)(*out)
