"""Tensor methods and torch.* functions that are other spellings of existing ops: PyTorch's
aliases (arccos, divide, greater, ...), the in-place ``*_`` forms of out-of-place methods,
the ``torch.<name>_`` function forms of in-place methods, and small predicates and legacy
methods (is_nonzero, dim_order, new, apply_, sum_to_size, ...).

``LegacyMethods`` and ``method_forms(...)`` are bases of ember.Tensor; the module's
``__all__`` holds the torch.* functions."""
import warnings

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core import elementwise, norms, optable, view_copies
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core.inplace_ops import _inplace
from ember.core.method_table import method_table

# alias -> the op it spells (both as Tensor methods and as torch.* functions): the op
# table's (core/optable.py) and the composites'
ALIASES = {**{a: d.name for f in (optable.UNARY, optable.BINARY) for d in f.ops
              for a in d.aliases},
           "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "divide": "div",
           "moveaxis": "movedim"}

# out-of-place methods whose in-place form computes out of place and writes back: the op
# table's binary rows with an in-place form, and these
_INPLACE_OF = tuple(d.name for d in optable.BINARY.ops if "inplace" in d.forms) + (
    "acosh", "asinh", "atanh", "addbmm", "addmv", "addr", "cumprod", "cumsum", "frac", "round",
    "logical_not", "logit", "renorm", "gcd", "lcm", "ldexp", "nextafter", "conj_physical",
    "true_divide", "multiply", "negative", "subtract", "index_reduce")

# ... of which these compute in the operands' promoted dtype (not bool, as the comparisons)
_PROMOTED = frozenset(d.name for d in optable.BINARY.ops if "inplace" in d.forms) - {
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}

# in-place methods that PyTorch also spells torch.<name>(input, ...): the op table's unary
# rows with that form (and their aliases), and these
_FUNCTION_OF_METHOD = tuple(f"{n}_" for d in optable.UNARY.ops if "inplace_function" in d.forms
                            for n in (d.name,) + d.aliases) + (
    "acosh_", "addmv_", "arccosh_", "arcsinh_", "arctanh_", "asinh_", "atanh_",
    "conj_physical_", "exp_", "fill_", "frac_", "gcd_", "lcm_", "ldexp_", "logit_", "neg_",
    "negative_", "relu_", "round_", "zero_", "index_put_", "resize_as_", "detach", "detach_",
    "as_strided_")

__all__ = sorted(set(ALIASES) | set(_FUNCTION_OF_METHOD)) + [
    "adjoint", "fill", "get_device", "is_inference", "is_nonzero", "is_same_size",
    "is_signed", "nonzero_static", "index_reduce"]

_BOOL = _dtype_by_name["bool"]


def _function_of(name):
    def function(input, *args, **kwargs):
        return getattr(_tensor_arg(input, name, position=1), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``: the function form of Tensor.{name}."
    return function


def _alias_function(alias, target):
    def function(*args, **kwargs):
        return _target_function(target)(*args, **kwargs)
    function.__name__ = function.__qualname__ = alias
    function.__doc__ = f"Alias of torch.{target}."
    return function


def _target_function(name):
    """The core function an alias spells (the façade re-exports the same objects)."""
    found = getattr(_T, name, None) or _T.table_functions().get(name)
    return found if found is not None else getattr(elementwise, name)


for _alias, _target in ALIASES.items():
    globals()[_alias] = _alias_function(_alias, _target)
for _name in _FUNCTION_OF_METHOD:
    globals()[_name] = _function_of(_name)


# -- small predicates and legacy methods ------------------------------------------------------

def adjoint(input):
    """The conjugate transpose of the last two dims (a view for real tensors)."""
    x = _tensor_arg(input, "adjoint", position=1)
    if x.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    t = x.transpose(-2, -1)
    return t.conj() if t.is_complex() else t


def fill(input, value):
    """A tensor of ``input``'s shape, dtype and device filled with ``value``."""
    return _T.empty_like(_tensor_arg(input, "fill", position=1)).fill_(value)


def get_device(input):
    """The device index of a tensor: -1 on the CPU."""
    d = _tensor_arg(input, "get_device", position=1).device
    return -1 if d.type == "cpu" else (d.index or 0)


def is_inference(input):
    """Whether ``input`` was made under inference_mode."""
    return _tensor_arg(input, "is_inference", position=1).is_inference()


def is_nonzero(input):
    """The truth of a one-element tensor (an error for any other size)."""
    x = _tensor_arg(input, "is_nonzero", position=1)
    if x.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(x.item())


def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return tuple(_tensor_arg(input, "is_same_size", position=1).shape) == tuple(other.shape)


def is_signed(input):
    """Whether the dtype of ``input`` is signed."""
    return _tensor_arg(input, "is_signed", position=1).dtype.is_signed


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero() padded with ``fill_value`` rows (or truncated) to exactly ``size`` rows."""
    x = _tensor_arg(input, "nonzero_static", position=1)
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"size: {size}")
    idx = x.nonzero()
    rows = idx.shape[0]
    if rows >= size:
        return idx[:size].clone()
    pad = _T.full((size - rows, x.dim()), fill_value, dtype=idx.dtype, device=idx.device)
    return _T._cat([idx, pad], 0)


_REDUCE = {"prod": "prod", "mean": "mean", "amax": "amax", "amin": "amin"}


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` reduced ('prod', 'mean', 'amax', 'amin') into
    the positions ``index`` names along ``dim``."""
    x = _tensor_arg(input, "index_reduce", position=1)
    if reduce not in _REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    dim = dim % max(x.dim(), 1)
    shape = [1] * source.dim()
    shape[dim] = -1
    expanded = index.reshape(shape).expand(source.shape)
    return x.scatter_reduce(dim, expanded, source, _REDUCE[reduce], include_self=include_self)


def _sum_to_size(self, *size):
    """Sum ``self`` over the broadcast dims so that its shape is ``size`` (which ``self``
    must be expandable from)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size)


def _dim_order(self, *, ambiguity_check=False):
    """The dims ordered from outermost (largest stride) to innermost."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: (-strides[d], d)))


def _apply_(self, callable):
    """Apply the Python ``callable`` to every element, in place (CPU only, slow)."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = [callable(v) for v in self.reshape(-1).tolist()]
    return self.copy_(_T.tensor(values, dtype=self.dtype).reshape(self.shape))


def _map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]) for every element (``tensor`` broadcast)."""
    if self.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    other = tensor.expand_as(self).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    return self.copy_(_T.tensor(values, dtype=self.dtype).reshape(self.shape))


def _map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]) for every element (x, y broadcast)."""
    if self.device.type != "cpu":
        raise TypeError("map2_ is only implemented on CPU tensors")
    xs = x.expand_as(self).reshape(-1).tolist()
    ys = y.expand_as(self).reshape(-1).tolist()
    values = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), xs, ys)]
    return self.copy_(_T.tensor(values, dtype=self.dtype).reshape(self.shape))


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (of a 2-d tensor, or the all-equal indices of a cube) with
    ``fill_value``; ``wrap`` restarts it every n + 1 rows of a tall matrix."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = self.shape[0], self.shape[1]
    n = min(rows, cols) if self.dim() == 2 else rows
    step = sum(self.stride())
    flat_len = n
    if wrap and self.dim() == 2 and rows > cols + 1:
        flat_len = -(-(rows * cols) // (cols + 1))
    if self.dim() == 2 and wrap and rows > cols + 1:
        positions = [k * (cols + 1) for k in range(flat_len) if k * (cols + 1) < rows * cols]
        flat = self.reshape(-1) if self.is_contiguous() else None
        if flat is None:
            raise RuntimeError("fill_diagonal_ with wrap=True needs a contiguous tensor")
        idx = _T.tensor(positions, device=self.device)
        return self.copy_(flat.index_fill(0, idx, fill_value).reshape(self.shape))
    self.as_strided((n,), (step,), self.storage_offset()).fill_(fill_value)
    return self


def _bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a tensor)."""
    from ember.core._tensor import TensorBase
    prob = p if isinstance(p, TensorBase) else _T.full(tuple(self.shape), float(p),
                                                        device=self.device)
    if not isinstance(p, TensorBase) and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    u = _T.empty(tuple(self.shape), device=self.device).uniform_(generator=generator)
    return self.copy_((u < prob.expand(self.shape)).to(self.dtype))


def _as_subclass(self, cls):
    """This tensor as an instance of the Tensor subclass ``cls``, sharing its data and
    staying attached to the autograd graph."""
    from ember.core.tensor import Tensor
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a Tensor subclass, not {cls!r}")
    alias = self.view_as(self)
    try:
        alias.__class__ = cls
        return alias
    except TypeError:
        return Tensor._make_subclass(cls, self, self.requires_grad)


def _new(self, *args, **kwargs):
    """The legacy constructor: ``t.new(sizes...)`` an uninitialised tensor of ``t``'s dtype
    and device, ``t.new(data)`` a copy of ``data``, ``t.new()`` an empty one."""
    device = kwargs.pop("device", self.device)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not args:
        return _T.empty(0, dtype=self.dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], int):
        return _T.tensor(args[0], dtype=self.dtype, device=device)
    return _T.empty(*args, dtype=self.dtype, device=device)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       pin_memory=False, requires_grad=False):
    """An uninitialised tensor with ``size`` and ``stride`` (dtype and device default to
    this tensor's)."""
    from ember.core.factories import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def _resize_deprecated(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_(*sizes)


def _resize_as_deprecated(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_as_(tensor)


def _reinforce(self, reward):
    raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead.\nSee "
                       "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
                       "probs = policy_network(state)\naction = probs.multinomial()\n"
                       "next_state, reward = env.step(action)\naction.reinforce(reward)\n"
                       "action.backward()\n\nUse:\n\nprobs = policy_network(state)\n"
                       "# NOTE: categorical is equivalent to what used to be called "
                       "multinomial\nm = torch.distributions.Categorical(probs)\naction = "
                       "m.sample()\nnext_state, reward = env.step(action)\nloss = "
                       "-m.log_prob(action) * reward\nloss.backward()")


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _record_stream(self, stream):
    raise RuntimeError("unknown parameter type" if stream is None else
                       "record_stream is only supported for CUDA tensors")


def _false(self):
    return False


class LegacyMethods:
    """Tensor's small predicates, legacy methods and spellings of composites (a base of
    ember.Tensor): t.is_nonzero(), t.new(...), t.apply_(fn), t.renorm(...), t.gcd(...), ..."""
    __slots__ = ()
    __module__ = "ember.core.tensor"
    acosh, asinh, atanh = elementwise.acosh, elementwise.asinh, elementwise.atanh
    frexp, gcd, lcm = elementwise.frexp, elementwise.gcd, elementwise.lcm
    ldexp, nextafter = elementwise.ldexp, elementwise.nextafter
    renorm = norms.renorm
    diagonal_scatter = view_copies.diagonal_scatter
    select_scatter = view_copies.select_scatter
    slice_scatter = view_copies.slice_scatter
    as_strided_scatter = view_copies.as_strided_scatter
    narrow_copy = view_copies.narrow_copy
    unsafe_chunk = view_copies.unsafe_chunk
    unsafe_split = view_copies.unsafe_split
    unsafe_split_with_sizes = view_copies.unsafe_split_with_sizes
    slice_inverse = view_copies.slice_inverse
    index_reduce = index_reduce
    adjoint = adjoint
    is_nonzero = is_nonzero
    is_same_size = is_same_size
    nonzero_static = nonzero_static
    sum_to_size = _sum_to_size
    dim_order = _dim_order
    apply_, map_, map2_ = _apply_, _map_, _map2_
    fill_diagonal_ = _fill_diagonal_
    bernoulli_ = _bernoulli_
    as_subclass = _as_subclass
    new = _new
    new_empty_strided = _new_empty_strided
    resize, resize_as = _resize_deprecated, _resize_as_deprecated
    reinforce = _reinforce
    volatile = property(_volatile)
    pin_memory, record_stream = _pin_memory, _record_stream
    const_data_ptr = _T.TensorBase.data_ptr

    def to_dense(self, dtype=None, *, masked_grad=None):
        """self (a strided tensor is dense), converted to ``dtype`` if given."""
        return self if dtype is None else self.to(dtype)

    def is_pinned(self, device=None):
        """False: ember does not pin host memory."""
        return False

    def xpu(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on an XPU device."""
        return self.to("xpu" if device is None else device)

    is_sparse = is_sparse_csr = is_nested = is_xla = is_ipu = is_maia = is_mtia = \
        is_quantized = property(_false)
    is_mps = property(lambda self: self.device.type == "mps")
    is_xpu = property(lambda self: self.device.type == "xpu")
    layout = property(lambda self: _strided())
    name = property(lambda self: None)
    grad_dtype = property(lambda self: self.dtype)


def _round_in_place(general):
    """round_(): the round kernel writing into self where nothing records the write (an
    out-of-place round and a copy back took four times PyTorch's time)."""
    def round_(self, decimals=0):
        if decimals == 0 and isinstance(self, _T.TensorBase):
            if self.dtype.name in ("int64", "bool"):     # PyTorch's quirk: int32 passes
                raise NotImplementedError(f'"round_vml_cpu" not implemented for '
                                          f"'{_T._st_name(self.dtype)}'")
            if self.dtype.is_floating_point and not _ag._tracked(self):
                return _T._round(self, out=self)
        return general(self, decimals=decimals)
    round_.__name__ = round_.__qualname__ = "round_"
    round_.__doc__ = general.__doc__
    return round_


def method_forms(*bases):
    """The mixin of PyTorch's other spellings of the methods that ``bases`` (a class's bases,
    in order) define: the aliases (t.arccos), the in-place forms that compute out of place
    and write back (t.hypot_), and the aliases' in-place forms (t.arccos_)."""
    probe = type("Probe", bases, {"__slots__": ()})
    forms = {}

    def method(name):
        return forms[name] if name in forms else getattr(probe, name, None)
    for alias, target in ALIASES.items():
        if alias != "moveaxis" or method("moveaxis") is None:
            forms[alias] = method(target)
    for name in _INPLACE_OF:
        if method(name + "_") is None:
            forms[name + "_"] = _inplace(method(name), name + "_", name in _PROMOTED)
    if "round_" in forms:
        forms["round_"] = _round_in_place(forms["round_"])
    for alias, target in ALIASES.items():
        if method(target + "_") is not None and alias != "moveaxis":
            forms[alias + "_"] = method(target + "_")
    return method_table("MethodForms", forms, "Tensor's aliases and in-place forms of its "
                        "methods: t.arccos(), t.hypot_(...), t.arccos_(), ...")


def _strided():
    from ember.core.layout import strided
    return strided
