"""ember.Tensor: the Python-level tensor class (the Cython TensorBase does the work)."""
from ember.core import _autograd as _ag
from ember.core import _tensor as _ops
from ember.core import (
    activations,
    complex_functions,
    composites,
    index_ops,
    minmax,
    norms,
    products,
    random_ops,
    sorting,
)
from ember.core._tensor import TensorBase, _cast_methods, _math_methods, _set_tensor_class
from ember.core.linalg import legacy as _linalg_legacy

__all__ = ["Tensor"]


class Tensor(TensorBase):
    """A multi-dimensional array on a device; PyTorch's ``torch.Tensor``.

    Subclass it from Python (``Parameter`` does); ops return plain ``Tensor``s."""

    __slots__ = ()
    __module__ = "ember"
    # NumPy defers to our reflected operators: `ndarray + tensor` gives a tensor
    __array_priority__ = 1000

    requires_grad = property(_ag._get_requires_grad, _ag._set_requires_grad)
    grad = property(_ag._get_grad, _ag._set_grad)
    grad_fn = property(_ag._get_grad_fn)
    is_leaf = property(_ag._is_leaf)
    is_inference = _ag.is_inference
    output_nr = property(_ag._output_nr)
    data = property(_ag._get_data, _ag._set_data)
    retains_grad = property(_ag._retains_grad)
    requires_grad_ = _ag.requires_grad_
    detach = _ag.detach
    detach_ = _ag.detach_
    retain_grad = _ag.retain_grad
    register_hook = _ag.register_hook
    register_post_accumulate_grad_hook = _ag.register_post_accumulate_grad_hook

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the .grad of the leaves (or of
        ``inputs``) of its graph; see ember.autograd.backward."""
        from ember.core.gradients import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)


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
for _name in ("argsort", "kthvalue", "median", "mode", "msort", "sort", "topk", "unique",
              "unique_consecutive"):
    setattr(Tensor, _name, getattr(sorting, _name))
for _module, _names in ((norms, ("nanmean", "nansum", "norm")), (activations, ("logit",)),
                        (products, ("addbmm", "addmm", "addmv", "baddbmm", "cross",
                                    "diag_embed"))):
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
Tensor.bernoulli = random_ops.bernoulli
# t.det(), t.inverse(), t.svd(), t.qr(), t.cholesky(), t.pinverse(), ...
for _name, _method in _linalg_legacy.TENSOR_METHODS.items():
    setattr(Tensor, _name, _method)
# the index family: t.gather(...), t.scatter_(...), t.index_add_(...), t.flip(...), ...
for _name in ("gather", "scatter", "scatter_add", "scatter_reduce", "index_select",
              "index_add", "index_copy", "index_fill", "index_put", "take", "put",
              "searchsorted", "multinomial"):
    setattr(Tensor, _name, getattr(_ops, _name))
for _name in ("scatter_", "scatter_add_", "scatter_reduce_", "index_add_", "index_copy_",
              "index_fill_", "index_put_", "put_"):
    setattr(Tensor, _name, getattr(_ops, "_" + _name))
for _name in ("bincount", "flip", "fliplr", "flipud", "histc", "masked_scatter",
              "masked_select", "repeat_interleave"):
    setattr(Tensor, _name, getattr(index_ops, _name))
Tensor.masked_scatter_ = index_ops._masked_scatter_
# catalogue gaps: NumPy-style math, shape helpers, statistics, special functions, the
# in-place forms of composites and the distribution fills
from ember.core import (  # noqa: E402
    inplace_ops,
    math_composites,
    shape_composites,
    special,
    statistics,
)

for _module, _names in (
        (math_composites, ("absolute", "addr", "arctan2", "clamp_max", "clamp_min", "copysign",
                           "deg2rad", "diff", "dist", "float_power", "ger", "heaviside",
                           "hypot", "inner", "isneginf", "isposinf", "isreal", "kron",
                           "logaddexp", "logaddexp2", "logcumsumexp", "multiply", "positive",
                           "rad2deg", "sgn", "signbit", "sinc", "subtract", "vdot", "xlogy")),
        (shape_composites, ("argwhere", "broadcast_to", "diagflat", "dsplit", "hsplit",
                            "msort", "ravel", "rot90", "take_along_dim", "tensor_split",
                            "unfold", "vsplit")),
        (statistics, ("aminmax", "corrcoef", "cov", "nanmedian", "nanquantile", "quantile")),
        (special, ("mvlgamma",))):
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
for _name, _method in {**_ops._special_methods(), **inplace_ops.INPLACE_METHODS,
                       **inplace_ops.VIEW_METHODS, **inplace_ops.RANDOM_METHODS}.items():
    setattr(Tensor, _name, _method)
Tensor.polygamma = lambda self, n: special.polygamma(n, self)
Tensor.swapaxes = Tensor.swapdims = Tensor.transpose
Tensor.type_as = lambda self, other: self.to(other.dtype)
Tensor.mH = property(lambda self: _matrix_adjoint(self, "mH"))
Tensor.H = property(lambda self: _matrix_adjoint(self, "H"))


def _matrix_adjoint(t, name):
    """t.mH (batches of matrices) and t.H (matrices only): the transpose, no complex dtypes
    to conjugate."""
    if name == "H" and t.dim() != 2 or t.dim() < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices "
                           f"{'(2-D tensors)' if name == 'H' else 'or batches of matrices'}. "
                           f"Got {t.dim()}-D tensor.")
    return t.transpose(-2, -1)


# complex numbers: t.real / t.imag are views (assignable), t.conj(), t.angle(), ...
Tensor.real = property(_ops._real, complex_functions._set_real)
Tensor.imag = property(_ops._imag, complex_functions._set_imag)
for _name in ("angle", "conj", "conj_physical", "is_conj", "is_neg", "resolve_conj",
              "resolve_neg"):
    setattr(Tensor, _name, getattr(complex_functions, _name))

# PyTorch's other spellings: aliases, in-place forms, predicates and legacy methods
from ember.core import method_forms  # noqa: E402

method_forms.install(Tensor)
# storages: t.untyped_storage(), t.storage(), t.set_(...), t.resize_(...), ...
from ember.core import legacy_types, storages  # noqa: E402

for _name, _method in storages.TENSOR_METHODS.items():
    setattr(Tensor, _name, _method)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name ('ember.FloatTensor'), or the tensor converted to ``dtype`` (a
    dtype, a legacy type or its name)."""
    if dtype is None:
        return legacy_types.type_name(self)
    if isinstance(dtype, (str, legacy_types._LegacyTensorType)):
        cls = legacy_types.resolve(dtype)
        return self.to(device=cls._device_type if cls.is_cuda != self.is_cuda else None,
                       dtype=cls.dtype)
    return TensorBase.type(self, dtype, non_blocking)


Tensor.type = _type

_set_tensor_class(Tensor)
_ag.install()
