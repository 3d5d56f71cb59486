"""ember.Tensor: the Python-level tensor class (the Cython TensorBase does the work)."""
from ember.core import _autograd as _ag
from ember.core import _tensor as _ops
from ember.core import (
    activations,
    complex_functions,
    composites,
    elementwise,
    index_ops,
    inplace_ops,
    legacy_types,
    method_forms,
    minmax,
    norms,
    products,
    random_ops,
    shapes,
    sorting,
    special,
    statistics,
    storages,
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

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The legacy type name ('ember.FloatTensor'), or the tensor converted to ``dtype``
        (a dtype, a legacy type or its name)."""
        if dtype is None:
            return legacy_types.type_name(self)
        if isinstance(dtype, (str, legacy_types._LegacyTensorType)):
            cls = legacy_types.resolve(dtype)
            return self.to(device=cls._device_type if cls.is_cuda != self.is_cuda else None,
                           dtype=cls.dtype)
        return TensorBase.type(self, dtype, non_blocking)

    # composites as methods: t.clamp(0, 1), t.var(0), t.sort(), t.gather(...), ...
    addcdiv = composites.addcdiv
    addcmul = composites.addcmul
    allclose = composites.allclose
    bmm = composites.bmm
    clamp = composites.clamp
    clip = composites.clip
    count_nonzero = composites.count_nonzero
    diag = composites.diag
    dot = composites.dot
    isclose = composites.isclose
    isfinite = composites.isfinite
    isinf = composites.isinf
    isnan = composites.isnan
    lerp = composites.lerp
    logsumexp = composites.logsumexp
    mm = composites.mm
    mv = composites.mv
    nan_to_num = composites.nan_to_num
    outer = composites.outer
    repeat = composites.repeat
    roll = composites.roll
    sign = composites.sign
    std = composites.std
    tile = composites.tile
    trace = composites.trace
    tril = composites.tril
    triu = composites.triu
    var = composites.var
    max = minmax.max
    min = minmax.min
    argmax = _ops.argmax
    argmin = _ops.argmin
    cumsum = _ops.cumsum
    cumprod = _ops.cumprod
    cummax = _ops.cummax
    cummin = _ops.cummin
    argsort = sorting.argsort
    kthvalue = sorting.kthvalue
    median = sorting.median
    mode = sorting.mode
    sort = sorting.sort
    topk = sorting.topk
    unique = sorting.unique
    unique_consecutive = sorting.unique_consecutive
    nanmean = norms.nanmean
    nansum = norms.nansum
    norm = norms.norm
    logit = activations.logit
    addbmm = products.addbmm
    addmm = products.addmm
    addmv = products.addmv
    baddbmm = products.baddbmm
    cross = products.cross
    diag_embed = products.diag_embed
    bernoulli = random_ops.bernoulli
    # the index family
    gather = _ops.gather
    scatter = _ops.scatter
    scatter_add = _ops.scatter_add
    scatter_reduce = _ops.scatter_reduce
    index_select = _ops.index_select
    index_add = _ops.index_add
    index_copy = _ops.index_copy
    index_fill = _ops.index_fill
    index_put = _ops.index_put
    take = _ops.take
    put = _ops.put
    searchsorted = _ops.searchsorted
    multinomial = _ops.multinomial
    scatter_ = _ops._scatter_
    scatter_add_ = _ops._scatter_add_
    scatter_reduce_ = _ops._scatter_reduce_
    index_add_ = _ops._index_add_
    index_copy_ = _ops._index_copy_
    index_fill_ = _ops._index_fill_
    index_put_ = _ops._index_put_
    put_ = _ops._put_
    bincount = index_ops.bincount
    flip = index_ops.flip
    fliplr = index_ops.fliplr
    flipud = index_ops.flipud
    histc = index_ops.histc
    masked_scatter = index_ops.masked_scatter
    masked_select = index_ops.masked_select
    repeat_interleave = index_ops.repeat_interleave
    masked_scatter_ = index_ops._masked_scatter_
    # NumPy-style math, shape helpers, statistics, special functions
    absolute = elementwise.absolute
    addr = elementwise.addr
    arctan2 = elementwise.arctan2
    clamp_max = elementwise.clamp_max
    clamp_min = elementwise.clamp_min
    copysign = elementwise.copysign
    deg2rad = elementwise.deg2rad
    diff = elementwise.diff
    dist = elementwise.dist
    float_power = elementwise.float_power
    ger = elementwise.ger
    heaviside = elementwise.heaviside
    hypot = elementwise.hypot
    inner = elementwise.inner
    isneginf = elementwise.isneginf
    isposinf = elementwise.isposinf
    isreal = elementwise.isreal
    kron = elementwise.kron
    logaddexp = elementwise.logaddexp
    logaddexp2 = elementwise.logaddexp2
    logcumsumexp = elementwise.logcumsumexp
    multiply = elementwise.multiply
    positive = elementwise.positive
    rad2deg = elementwise.rad2deg
    sgn = elementwise.sgn
    signbit = elementwise.signbit
    sinc = elementwise.sinc
    subtract = elementwise.subtract
    vdot = elementwise.vdot
    xlogy = elementwise.xlogy
    argwhere = shapes.argwhere
    broadcast_to = shapes.broadcast_to
    diagflat = shapes.diagflat
    dsplit = shapes.dsplit
    hsplit = shapes.hsplit
    msort = shapes.msort
    ravel = shapes.ravel
    rot90 = shapes.rot90
    take_along_dim = shapes.take_along_dim
    tensor_split = shapes.tensor_split
    unfold = shapes.unfold
    vsplit = shapes.vsplit
    aminmax = statistics.aminmax
    corrcoef = statistics.corrcoef
    cov = statistics.cov
    nanmedian = statistics.nanmedian
    nanquantile = statistics.nanquantile
    quantile = statistics.quantile
    mvlgamma = special.mvlgamma

    def polygamma(self, n):
        """The n-th derivative of the digamma function of this tensor."""
        return special.polygamma(n, self)

    def type_as(self, other):
        """This tensor converted to ``other``'s dtype."""
        return self.to(other.dtype)

    swapaxes = swapdims = TensorBase.transpose
    mH = property(lambda self: _matrix_adjoint(self, "mH"))
    H = property(lambda self: _matrix_adjoint(self, "H"))
    # complex numbers: t.real / t.imag are views (assignable), t.conj(), t.angle(), ...
    real = property(_ops._real, complex_functions._set_real)
    imag = property(_ops._imag, complex_functions._set_imag)
    angle = complex_functions.angle
    conj = complex_functions.conj
    conj_physical = complex_functions.conj_physical
    is_conj = complex_functions.is_conj
    is_neg = complex_functions.is_neg
    resolve_conj = complex_functions.resolve_conj
    resolve_neg = complex_functions.resolve_neg


def _matrix_adjoint(t, name):
    """t.mH (batches of matrices) and t.H (matrices only): the transpose, no complex dtypes
    to conjugate."""
    if name == "H" and t.dim() != 2 or t.dim() < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices "
                           f"{'(2-D tensors)' if name == 'H' else 'or batches of matrices'}. "
                           f"Got {t.dim()}-D tensor.")
    return t.transpose(-2, -1)


# methods built from tables: t.abs(), t.abs_(), t.eq(), t.erf() (the op table,
# core/optable.py), t.float(), t.det(), the in-place forms of composites and the
# distribution fills
for _name, _method in {**_math_methods(), **_cast_methods(), **_linalg_legacy.TENSOR_METHODS,
                       **inplace_ops.INPLACE_METHODS,
                       **inplace_ops.VIEW_METHODS, **inplace_ops.RANDOM_METHODS}.items():
    setattr(Tensor, _name, _method)

# PyTorch's other spellings: aliases, in-place forms, predicates and legacy methods
method_forms.install(Tensor)
# storages: t.untyped_storage(), t.storage(), t.set_(...), t.resize_(...), ...
for _name, _method in storages.TENSOR_METHODS.items():
    setattr(Tensor, _name, _method)



_set_tensor_class(Tensor)
_ag.install()
