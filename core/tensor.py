"""ember.Tensor: the Python-level tensor class (the Cython TensorBase does the work)."""
import numbers

from ember.core import _autograd as _ag
from ember.core import _tensor as _ops
from ember.core import (
    activations,
    complex_functions,
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
    ternary,
)
from ember.core._sym import SymBool, SymFloat, SymInt
from ember.core._tensor import TensorBase, _cast_methods, _math_methods, _set_tensor_class
from ember.core.linalg import legacy as _linalg_legacy
from ember.core.method_table import method_table

__all__ = ["ABOVE_CORE", "CompositeMethods", "Tensor"]


# ops built above the core, whose methods Tensor still has: the STFT is written in
# nn.functional's pad and fold, so the façade hands its implementations in at import
ABOVE_CORE = {}

# methods built from tables, each kept beside its ops: t.abs(), t.abs_(), t.eq() (the op
# table, core/optable.py) and t.float(), t.long() (the dtype shorthands)
_MathMethods = method_table("MathMethods", _math_methods(),
                            "Tensor's methods of the op table's rows: t.abs(), t.abs_(), t.eq().")
_CastMethods = method_table("CastMethods", _cast_methods(),
                            "Tensor's dtype shorthands: t.float(), t.long(), t.bool(), ...")


def _split_method(fn):
    """Tensor.hsplit/vsplit/dsplit: ``fn(sections)`` or ``fn(*indices)``, as PyTorch's methods
    take them."""
    def method(self, indices_or_sections, *indices):
        return fn(self, (indices_or_sections,) + indices if indices else indices_or_sections)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


class CompositeMethods(storages.StorageMethods, inplace_ops.InplaceMethods,
                       _linalg_legacy.LinalgMethods, _CastMethods, _MathMethods):
    """Tensor's methods written as composites and the methods built from tables (its bases):
    t.clamp(0, 1), t.var(0), t.sort(), t.gather(...), t.abs(), t.float(), t.det(), ..."""

    __slots__ = ()
    __module__ = "ember.core.tensor"
    # elementwise (core/elementwise.py)
    absolute = elementwise.absolute
    addcdiv = ternary.addcdiv               # (core/ternary.py)
    addcmul = ternary.addcmul
    allclose = elementwise.allclose
    arctan2 = elementwise.arctan2
    clamp = elementwise.clamp
    clamp_max = elementwise.clamp_max
    clamp_min = elementwise.clamp_min
    clip = elementwise.clip
    copysign = elementwise.copysign
    deg2rad = elementwise.deg2rad
    float_power = elementwise.float_power
    heaviside = elementwise.heaviside
    hypot = elementwise.hypot
    isclose = elementwise.isclose
    isfinite = elementwise.isfinite
    isinf = elementwise.isinf
    isnan = elementwise.isnan
    isneginf = elementwise.isneginf
    isposinf = elementwise.isposinf
    isreal = elementwise.isreal
    lerp = ternary.lerp
    logaddexp = elementwise.logaddexp
    logaddexp2 = elementwise.logaddexp2
    multiply = elementwise.multiply
    nan_to_num = elementwise.nan_to_num
    positive = elementwise.positive
    rad2deg = elementwise.rad2deg
    sgn = elementwise.sgn
    sign = elementwise.sign
    signbit = elementwise.signbit
    sinc = elementwise.sinc
    subtract = elementwise.subtract
    xlogy = elementwise.xlogy
    # reductions and statistics (core/statistics.py, core/minmax.py, the Cython core)
    aminmax = statistics.aminmax
    corrcoef = statistics.corrcoef
    count_nonzero = statistics.count_nonzero
    cov = statistics.cov
    logcumsumexp = statistics.logcumsumexp
    logsumexp = statistics.logsumexp
    nanmean = statistics.nanmean
    nanmedian = statistics.nanmedian
    nanquantile = statistics.nanquantile
    nansum = statistics.nansum
    quantile = statistics.quantile
    std = statistics.std
    var = statistics.var
    max = minmax.max
    min = minmax.min
    argmax = _ops.argmax
    argmin = _ops.argmin
    cumsum = _ops.cumsum
    cumprod = _ops.cumprod
    cummax = _ops.cummax
    cummin = _ops.cummin
    # norms and distances (core/norms.py)
    dist = norms.dist
    norm = norms.norm
    # order statistics (core/sorting.py)
    argsort = sorting.argsort
    kthvalue = sorting.kthvalue
    median = sorting.median
    mode = sorting.mode
    msort = sorting.msort
    sort = sorting.sort
    topk = sorting.topk
    unique = sorting.unique
    unique_consecutive = sorting.unique_consecutive
    # products (core/products.py)
    addbmm = products.addbmm
    addmm = products.addmm
    addmv = products.addmv
    addr = products.addr
    baddbmm = products.baddbmm
    bmm = products.bmm
    cross = products.cross
    dot = products.dot
    ger = products.ger
    inner = products.inner
    kron = products.kron
    mm = products.mm
    mv = products.mv
    outer = products.outer
    trace = products.trace
    vdot = products.vdot
    # shape and joining (core/shapes.py)
    def broadcast_to(self, *size, **kwargs):
        """``self`` expanded to ``size`` (ints, one sequence, or the keyword)."""
        return shapes.broadcast_to(self, _int_list("broadcast_to", "size", size, kwargs))

    diag = shapes.diag
    diag_embed = shapes.diag_embed
    diagflat = shapes.diagflat
    diff = shapes.diff
    dsplit = _split_method(shapes.dsplit)
    hsplit = _split_method(shapes.hsplit)
    ravel = shapes.ravel
    repeat = shapes.repeat
    roll = shapes.roll
    rot90 = shapes.rot90
    tensor_split = shapes.tensor_split
    tile = shapes._tile_method
    tril = shapes.tril
    triu = shapes.triu
    unfold = shapes.unfold
    vsplit = _split_method(shapes.vsplit)
    # activations and random sampling
    logit = activations.logit
    hardshrink = activations.hardshrink
    prelu = activations.prelu
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

    def flip(self, *dims, **kwargs):
        """``self`` reversed along ``dims`` (ints, one sequence, or the keyword)."""
        return index_ops.flip(self, _int_list("flip", "dims", dims, kwargs))

    fliplr = index_ops.fliplr
    flipud = index_ops.flipud
    histc = index_ops.histc
    masked_scatter = index_ops.masked_scatter
    masked_select = index_ops.masked_select
    repeat_interleave = index_ops.repeat_interleave
    masked_scatter_ = index_ops._masked_scatter_
    argwhere = index_ops.argwhere
    take_along_dim = index_ops.take_along_dim
    mvlgamma = special.mvlgamma

    def i0(self):
        """ember.special.i0(self): the modified Bessel function of order 0."""
        from ember.core.bessel import i0
        return i0(self)

    def igamma(self, other):
        """ember.igamma(self, other): the regularized lower incomplete gamma function."""
        from ember.core.incomplete_gamma import igamma
        return igamma(self, other)

    def igammac(self, other):
        """ember.igammac(self, other): the regularized upper incomplete gamma function."""
        from ember.core.incomplete_gamma import igammac
        return igammac(self, other)

    i0_ = inplace_ops._inplace(i0, "i0_")
    igamma_ = inplace_ops._inplace(igamma, "igamma_")
    igammac_ = inplace_ops._inplace(igammac, "igammac_")

    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        """ember.histogram(self, ...)."""
        from ember.core.histograms import histogram
        return histogram(self, bins, range=range, weight=weight, density=density)

    def hash_tensor(self, dim=None, *, keepdim=False, mode=0):
        """ember.hash_tensor(self, ...)."""
        from ember.core.hash_tensor import hash_tensor
        return hash_tensor(self, dim, keepdim=keepdim, mode=mode)

    def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
             pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
             align_to_window=None):
        """ember.stft(self, ...)."""
        return ABOVE_CORE["stft"](self, n_fft, hop_length, win_length, window, center,
                                  pad_mode, normalized, onesided, return_complex,
                                  align_to_window)

    def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
              normalized=False, onesided=None, length=None, return_complex=False):
        """ember.istft(self, ...)."""
        return ABOVE_CORE["istft"](self, n_fft, hop_length, win_length, window, center,
                                   normalized, onesided, length, return_complex)

    def is_distributed(self):
        """False: an ember tensor is never a distributed (sharded) tensor."""
        return False

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


# TensorBase comes first: Cython's type checks walk the MRO to it on every op

def _int_list(method, name, args, kwargs):
    """A method's int-list argument ``name`` as PyTorch's parser reads it: varargs ints, one
    sequence, or the keyword."""
    if set(kwargs) - {name} or args and kwargs:
        raise TypeError(f"{method}() got an unexpected keyword argument "
                        f"'{next(iter(set(kwargs) - {name}), name)}'")
    if not args and not kwargs:
        raise TypeError(f'{method}() missing 1 required positional arguments: "{name}"')
    if kwargs:
        return kwargs[name]
    return args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args


def _augmented(op):
    """The in-place operator dunder ``__i<op>__``: ``self.<method>(other)``, which writes
    into self and returns it; an operand the method rejects with TypeError gives
    NotImplemented, so that Python tries the binary operator next (as PyTorch's do)."""
    method, symbol = _AUGMENTED[op]

    def dunder(self, other):
        try:
            return getattr(self, method)(other)
        except TypeError:
            return NotImplemented
    dunder.__name__ = dunder.__qualname__ = f"__i{op}__"
    dunder.__doc__ = f"``self {symbol}= other``: ``self.{method}(other)``."
    return dunder


_AUGMENTED = {"floordiv": ("floor_divide_", "//"), "mod": ("remainder_", "%"),
              "and": ("bitwise_and_", "&"), "or": ("bitwise_or_", "|"),
              "xor": ("bitwise_xor_", "^"), "lshift": ("bitwise_left_shift_", "<<"),
              "rshift": ("bitwise_right_shift_", ">>")}


class Tensor(TensorBase, method_forms.method_forms(TensorBase, method_forms.LegacyMethods,
                                                    CompositeMethods),
             method_forms.LegacyMethods, CompositeMethods):
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

    # the augmented assignments that TensorBase leaves out (`t //= x` must write into t, so
    # that views and autograd see it); PyTorch has no __imatmul__: `a @= b` rebinds a
    __ifloordiv__ = _augmented("floordiv")
    __imod__ = _augmented("mod")
    __iand__ = _augmented("and")
    __ior__ = _augmented("or")
    __ixor__ = _augmented("xor")
    __ilshift__ = _augmented("lshift")
    __irshift__ = _augmented("rshift")

    def __contains__(self, element):
        """``element in self``: whether any element of self equals ``element`` (a tensor,
        broadcast against self, or a number)."""
        if isinstance(element, (TensorBase, numbers.Number, SymInt, SymFloat, SymBool)):
            return bool((element == self).any().item())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                           f"passed in a {type(element)}.")

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy ufunc applied to a tensor (``np.exp(t)``) gives a tensor, sharing the
        result's memory; a bool result comes back as uint8, as PyTorch's does."""
        if array.dtype == bool:
            array = array.astype("uint8")
        return _ops.from_numpy(array)

    def __reversed__(self):
        """self flipped along dim 0 (a 0-d tensor is returned as is)."""
        return self if self.dim() == 0 else self.flip(0)

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


def _matrix_adjoint(t, name):
    """t.mH (batches of matrices) and t.H (matrices only): the conjugate transpose, as
    adjoint() (a 0-D tensor is conjugated, with torch's deprecation warning)."""
    if t.dim() == 0:
        import warnings
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=3)
        return t.conj() if t.is_complex() else t
    if name == "H" and t.dim() != 2 or t.dim() < 2:
        hint = " For batches of matrices, consider using tensor.mH" if t.dim() > 2 else ""
        raise RuntimeError(f"tensor.{name} is only supported on matrices "
                           f"{'(2-D tensors)' if name == 'H' else 'or batches of matrices'}. "
                           f"Got {t.dim()}-D tensor.{hint}")
    r = t.transpose(-2, -1)
    return r.conj() if r.is_complex() else r


_set_tensor_class(Tensor)
_ag.install()
