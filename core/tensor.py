"""ember.Tensor: the Python-level tensor class (the Cython TensorBase does the work)."""
from ember.core import _tensor as _ops
from ember.core import activations, composites, minmax, norms, products, random_ops, sorting
from ember.core._tensor import TensorBase, _cast_methods, _math_methods, _set_tensor_class

__all__ = ["Tensor"]


class Tensor(TensorBase):
    """A multi-dimensional array on a device; PyTorch's ``torch.Tensor``.

    Subclass it from Python (``Parameter`` does); ops return plain ``Tensor``s."""

    __slots__ = ()
    __module__ = "ember"
    # NumPy defers to our reflected operators: `ndarray + tensor` gives a tensor
    __array_priority__ = 1000


# methods generated from the op tables: t.abs(), t.abs_(), t.eq(), t.float(), ...
for _name, _method in {**_math_methods(), **_cast_methods()}.items():
    setattr(Tensor, _name, _method)
# composites as methods: t.clamp(0, 1), t.softmax(-1), t.var(0), ...
for _name in ("addcdiv", "addcmul", "allclose", "bmm", "clamp", "clip", "count_nonzero",
              "dot", "isclose", "isfinite", "isinf", "isnan", "lerp", "logsumexp", "mm",
              "mv", "nan_to_num", "outer", "repeat", "roll", "sign", "std", "tile", "trace",
              "tril", "triu", "var"):
    setattr(Tensor, _name, getattr(composites, _name))
Tensor.diag = composites.diag
Tensor.max, Tensor.min = minmax.max, minmax.min
for _name in ("argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"):
    setattr(Tensor, _name, getattr(_ops, _name))
for _name in ("argsort", "kthvalue", "median", "mode", "sort", "topk", "unique",
              "unique_consecutive"):
    setattr(Tensor, _name, getattr(sorting, _name))
for _module, _names in ((norms, ("nanmean", "nansum", "norm")), (activations, ("logit",)),
                        (products, ("addbmm", "addmm", "addmv", "baddbmm", "cross",
                                    "diag_embed"))):
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
Tensor.bernoulli = random_ops.bernoulli
_set_tensor_class(Tensor)
