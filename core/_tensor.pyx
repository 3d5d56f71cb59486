"""The Tensor data model and its ops.

The hot path lives in this extension module, split by concern into the .pxi files included
at the bottom, so that the per-op path is direct C calls: dunder -> op -> dispatch ->
backend kernel.  Op families that nothing here calls at the C level live in their own
extension modules (core/_conv_pool.pyx, _norm_loss.pyx, _fused.pyx, _joining.pyx,
_random.pyx), which cimport what they need through _tensor.pxd, so they compile in
parallel with this one and an edit to one of them recompiles only it; their public names
are re-exported at the end.
"""
include "_core_cimports.pxi"

import operator
import sys

cdef type _tensor_cls = TensorBase


def _set_tensor_class(cls):
    """The Python-level class (ember.Tensor) that ops return."""
    global _tensor_cls
    if not issubclass(cls, TensorBase):
        raise TypeError("the tensor class must subclass TensorBase")
    _tensor_cls = cls


include "_capture_hooks.pxi"
include "_storage.pxi"
include "_tensor_alloc.pxi"


cdef TensorBase python_number_of(TensorBase t):
    """``t`` once it holds one element: what int(t), float(t) and complex(t) read."""
    if t.numel_c() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return t


cdef class TensorBase:
    """The core tensor type; ``ember.Tensor`` subclasses it in Python."""

    def __init__(self, *args, device=None):
        """PyTorch's legacy constructor: Tensor() (empty), Tensor(*sizes) (uninitialised),
        Tensor(data) (a copy, default dtype), Tensor(tensor) (an alias)."""
        if self._storage is not None:      # already built (ops, _make_subclass, __new__)
            return
        cdef TensorBase src
        if len(args) == 1 and isinstance(args[0], TensorBase):
            src = <TensorBase>args[0]
        elif all(type(a) is int for a in args):        # a Size is data, as in PyTorch
            src = new_empty(args if args else (0,), None, device, "Tensor")
        else:
            if len(args) != 1:
                raise TypeError("Tensor(): expected sizes (ints) or one data argument")
            src = tensor(args[0], dtype=_state.default_dtype(), device=device)
        adopt(self, src)

    def _add_dispatch_keys(self, uint64_t keys):
        """Add ``keys`` (a mask) to this tensor's key set: how a Python-level tensor type
        (ember._subclasses.FakeTensor) puts itself on the Python key."""
        self._keys |= keys

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """An instance of ``cls`` (a Python subclass) aliasing ``data``'s storage and
        metadata: how ``Parameter(t)`` is built."""
        if not isinstance(cls, type) or not issubclass(cls, TensorBase):
            raise TypeError(f"_make_subclass(): cls must be a Tensor subclass, not {cls!r}")
        cdef TensorBase t = TensorBase.__new__(cls)
        adopt(t, as_tensor_arg(data, "_make_subclass", "data"))
        return t

    # metadata --------------------------------------------------------------------------
    cdef int64_t numel_c(self) noexcept:
        cdef int64_t n = 1
        cdef int i
        for i in range(self._ndim):
            n *= self._sizes[i]
        return n

    cdef bint contiguous_c(self) noexcept:
        cdef int64_t expected = 1
        cdef int i
        for i in range(self._ndim - 1, -1, -1):
            if self._sizes[i] != 1:
                if self._strides[i] != expected:
                    return False
                expected *= self._sizes[i]
        return True

    cdef int view_c(self, ember_view* v) except -1:
        # a vmap wrapper looks like its first sample: a kernel handed one would read or
        # write sample 0 only (only batching rules, on the physical tensor, may run kernels)
        if self._bt is not None:
            refuse_batched(self, False)
        v.data = self._storage.data + self._offset * self._dtype.itemsize \
            if self._storage.data is not NULL else NULL
        v.ndim = self._ndim
        v.dtype = self._dtype.code
        v.flags = v.reserved = 0
        if self._ndim:
            memcpy(v.sizes, self._sizes, self._ndim * sizeof(int64_t))
            memcpy(v.strides, self._strides, self._ndim * sizeof(int64_t))
        return 0

    cdef VersionCounter version(self):
        if self._version is None:
            self._version = VersionCounter.__new__(VersionCounter)
        return self._version

    cdef int bump(self) except -1:
        if self._inference or self._level < ember_tls_func_level:
            refuse_write(self)
            end_out_grant(self)
        if self._version is not None:
            self._version.value += 1
        return 0

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def shape(self):
        return shape_c(self)

    def size(self, dim=None):
        """Size of the tensor, or of dimension ``dim``."""
        if dim is None:
            return shape_c(self)
        return self._sizes[wrap_dim(dim, self._ndim, "size")]

    def stride(self, dim=None):
        """Strides in elements, or the stride of dimension ``dim``."""
        if dim is None:
            return tuple([self._strides[i] for i in range(self._ndim)])
        return self._strides[wrap_dim(dim, self._ndim, "stride")]

    def dim(self):
        return self._ndim

    def ndimension(self):
        return self._ndim

    @property
    def ndim(self):
        return self._ndim

    def numel(self):
        return self.numel_c()

    def nelement(self):
        return self.numel_c()

    def storage_offset(self):
        return self._offset

    def is_contiguous(self, memory_format=None):
        if memory_format is None:       # PyTorch: an empty tensor is contiguous
            return self.contiguous_c() or self.numel_c() == 0
        from ember.core import memory_format as _mf
        return _mf.is_contiguous_as(self, memory_format)

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self.numel_c() * self._dtype.itemsize

    def data_ptr(self):
        if self._storage.data is NULL:
            return 0
        return <size_t>(self._storage.data + self._offset * self._dtype.itemsize)

    @property
    def _base(self):
        return self._base_ref

    @property
    def _version(self):
        return self.version().value       # observed from now on: later writes must bump

    @property
    def _keys(self):
        """This tensor's dispatch key set as a 64-bit mask."""
        return self._keys

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_meta(self):
        return self._backend.is_meta

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return self._dtype.is_complex

    def is_signed(self):
        return self._dtype.is_signed

    def get_device(self):
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def __len__(self):
        if self._ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._sizes[0]

    def __iter__(self):
        if self._ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter([select_c(self, 0, i) for i in range(self._sizes[0])])

    def __hash__(self):
        return id(self)

    # Python number protocol on one-element tensors (_interop.pxi)
    def __bool__(self):
        if self._bt is not None:
            refuse_batched(self, False)
        if self.numel_c() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if self.numel_c() == 0 else 'more than one value'} is ambiguous")
        return bool(item_c(self))

    # int(t), float(t), complex(t) refuse other sizes with ValueError, t.item() with
    # RuntimeError (one_element), as PyTorch's
    def __int__(self):
        return int(real_number(item_c(python_number_of(self)), "int64_t"))

    def __float__(self):
        return float(real_number(item_c(python_number_of(self)), "double"))

    def __index__(self):
        if self._dtype.is_floating_point or self._dtype.is_complex or self.numel_c() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(item_c(self))

    def __complex__(self):
        return complex(item_c(python_number_of(self)))

    def __format__(self, spec):
        if self._ndim == 0 or (self.numel_c() == 1 and spec):
            return format(item_c(self), spec)
        return object.__format__(self, spec)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        return item_c(one_element(self, "item"))

    # arithmetic (_elementwise.pxi) -----------------------------------------------------
    def __add__(self, other):
        return binary_dunder(op_add, self, other, False)

    def __radd__(self, other):
        return binary_dunder(op_add, self, other, True)

    def __iadd__(self, other):
        return inplace_dunder(op_add, self, other)

    def __sub__(self, other):
        return binary_dunder(op_sub, self, other, False)

    def __rsub__(self, other):
        return binary_dunder(op_sub, self, other, True)

    def __isub__(self, other):
        return inplace_dunder(op_sub, self, other)

    def __mul__(self, other):
        return binary_dunder(op_mul, self, other, False)

    def __rmul__(self, other):
        return binary_dunder(op_mul, self, other, True)

    def __imul__(self, other):
        return inplace_dunder(op_mul, self, other)

    def __truediv__(self, other):
        return binary_dunder(op_div, self, other, False)

    def __rtruediv__(self, other):
        return binary_dunder(op_div, self, other, True)

    def __itruediv__(self, other):
        return inplace_dunder(op_div, self, other)

    def __neg__(self):
        return unary_op(op_neg, self, None)

    def __abs__(self):
        return unary_op(op_abs, self, None)

    def __eq__(self, other):
        return operator_op(op_eq, self, other)

    def __ne__(self, other):
        return operator_op(op_ne, self, other)

    def __lt__(self, other):
        return operator_op(op_lt, self, other)

    def __le__(self, other):
        return operator_op(op_le, self, other)

    def __gt__(self, other):
        return operator_op(op_gt, self, other)

    def __ge__(self, other):
        return operator_op(op_ge, self, other)

    def __pow__(self, other, modulo):
        return binary_dunder(op_pow, self, other, False)

    def __rpow__(self, other, modulo):
        return binary_dunder(op_pow, self, other, True)

    def __ipow__(self, other):
        return inplace_dunder(op_pow, self, other)

    def __pos__(self):
        return self

    def __matmul__(self, other):
        return binary_dunder(None, self, other, False)

    def __rmatmul__(self, other):
        return binary_dunder(None, self, other, True)

    def __getitem__(self, index):
        return getitem(self, index)

    def __setitem__(self, index, value):
        setitem(self, index, value)

    def __repr__(self):
        from ember.core._formatting import tensor_repr
        return tensor_repr(self)

    # views (_views.pxi) ----------------------------------------------------------------
    def view(self, *shape, **kw):
        """A view of shape ``shape`` (one dim may be -1), or of dtype ``shape[0]``; no copy."""
        shape = sized(shape, kw, "view", "size", "dtype")
        if len(shape) == 1 and isinstance(shape[0], dtype):
            return view_dtype_c(self, shape[0])
        return view_c(self, shape)

    def view_as(self, other):
        return view_c(self, (other.shape,))

    def reshape(self, *shape, **kw):
        """A view with shape ``shape`` when the strides allow it, else a copy."""
        return reshape_c(self, sized(shape, kw, "reshape", "shape"))

    def reshape_as(self, other):
        return reshape_c(self, (other.shape,))

    def permute(self, *dims, **kw):
        """A view with dims reordered to ``dims``."""
        dims = sized(dims, kw, "permute", "dims")
        return permute_c(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list))
                         else dims)

    def transpose(self, dim0, dim1):
        return transpose_c(self, dim0, dim1)

    def t(self):
        """Transpose of a tensor with at most 2 dims."""
        if self._ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._ndim}D")
        return transpose_c(self, 0, self._ndim - 1 if self._ndim else 0)

    @property
    def T(self):
        return permute_c(self, list(range(self._ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self._ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of "
                               f"matrices. Got {self._ndim}-D tensor.")
        return transpose_c(self, -2, -1)

    def movedim(self, source, destination):
        return movedim(self, source, destination)

    moveaxis = movedim

    def expand(self, *sizes, **kw):
        """A view broadcasting size-1 dims to ``sizes`` (-1 keeps a dim)."""
        return expand_c(self, sizes if not kw else sized(sizes, kw, "expand", "size"))

    def expand_as(self, other):
        return expand_c(self, (other.shape,))

    def squeeze(self, dim=None, *, axis=None):
        return squeeze(self, dim, axis=axis)

    def unsqueeze(self, dim=None, *, axis=None):
        return unsqueeze_c(self, dim_of("unsqueeze", dim, axis, None))

    def flatten(self, start_dim=0, end_dim=-1):
        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim, sizes):
        return unflatten(self, dim, sizes)

    def narrow(self, dim, start, length):
        return narrow_c(self, dim, start, length, 1)

    def select(self, dim=None, index=None, *, axis=None):
        return select_c(self, dim_of("select", dim, axis, None), index)

    def unbind(self, dim=0, *, axis=None):
        return unbind(self, dim_of("unbind", dim, axis, 0))

    def split(self, split_size, dim=0):
        return split(self, split_size, dim)

    def split_with_sizes(self, split_sizes, dim=0):
        return split_with_sizes(self, split_sizes, dim)

    def chunk(self, chunks, dim=0, *, axis=None):
        return chunk(self, chunks, dim_of("chunk", dim, axis, 0))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return diagonal_c(self, offset, dim1, dim2)

    def as_strided(self, size, stride, storage_offset=None):
        return as_strided_c(self, size, stride, storage_offset)

    # copies and casts (_copy.pxi) --------------------------------------------------------
    def contiguous(self, memory_format=None):
        """self if already laid out in ``memory_format`` (contiguous_format), else a copy."""
        if memory_format is None:
            return self if self.contiguous_c() else clone_c(self)
        from ember.core import memory_format as _mf
        return _mf.contiguous(self, memory_format)

    def clone(self, *, memory_format=None):
        return clone(self, memory_format=memory_format)

    def to(self, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
        """Convert to another device and/or dtype: to(dtype), to(device), to(other)."""
        dev, dt = _parse_to(args, kwargs)
        r = to_c(self, dev, dt, copy)
        if memory_format is None:
            return r
        from ember.core import memory_format as _mf
        return r if memory_format is _mf.preserve_format else _mf.contiguous(r, memory_format)

    def cpu(self):
        return to_c(self, "cpu", None, False)

    def cuda(self, device=None, non_blocking=False):
        return to_c(self, "cuda" if device is None else device, None, False)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"ember.{st_name(self._dtype)}Tensor"
        return to_c(self, None, dtype, False)

    def copy_(self, src, non_blocking=False):
        """Copy ``src`` (broadcast, cast, from any device; a Python number fills, as
        PyTorch's copy_ takes one) into self; returns self."""
        if not isinstance(src, TensorBase) and is_scalar(src):
            src = tensor(src)
        copy_into(self, as_tensor_arg(src, "copy_", "src"), "copy_")
        return self

    def fill_(self, value):
        if isinstance(value, TensorBase) and (<TensorBase>value)._keys & AUTOGRAD_BIT \
                and is_grad_enabled_c():
            # a value requiring grad gets its gradient (the sum of self's): a copy of it
            if (<TensorBase>value)._ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got "
                                   f"tensor with {(<TensorBase>value)._ndim} dimensions.")
            copy_into(self, expand_c(<TensorBase>value, (shape_c(self),)), "fill_")
            return self
        fill_c(self, value)
        return self

    def zero_(self):
        fill_c(self, 0)
        return self

    def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
        return _fill_uniform(self, kwargs.get("from", from_), to, generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return _fill_normal(self, mean, std, generator)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        size = factory_size(size, kwargs, "new_empty")      # size=, layout=, pin_memory=
        if self._bt is not None:          # a vmap wrapper's: one per sample (functorch's)
            return with_grad(batched_like(self, size, dtype, device, "new_empty"), requires_grad)
        return with_grad(new_empty(size, self._dtype if dtype is None else dtype,
                                   own_device(self) if device is None else device,
                                   "new_empty"), requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        t = self.new_empty(*size, dtype=dtype, device=device, **kwargs).zero_()
        return with_grad(t, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        return with_grad(self.new_empty(*size, dtype=dtype, device=device, **kwargs).fill_(1),
                         requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
                 **kwargs):
        t = self.new_empty(size, dtype=dtype, device=device, **kwargs).fill_(fill_value)
        return with_grad(t, requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return tensor(data, dtype=self._dtype if dtype is None else dtype,
                      device=own_device(self) if device is None else device,
                      requires_grad=requires_grad)

    # math (_elementwise.pxi, _reduce.pxi, _matmul.pxi) -----------------------------------
    def add(self, other, *, alpha=1, out=None):
        return binary_op(op_add, self, other, alpha, out)

    def add_(self, other, *, alpha=1):
        return binary_inplace(op_add, self, other, alpha)

    def sub(self, other, *, alpha=1, out=None):
        return binary_op(op_sub, self, other, alpha, out)

    def sub_(self, other, *, alpha=1):
        return binary_inplace(op_sub, self, other, alpha)

    def mul(self, other, *, out=None):
        return binary_op(op_mul, self, other, 1, out)

    def mul_(self, other):
        return binary_inplace(op_mul, self, other, 1)

    def div(self, other, *, rounding_mode=None, out=None):
        return div(self, other, rounding_mode=rounding_mode, out=out)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return binary_inplace(op_div, self, other, 1)
        cdef TensorBase r = div(self, other, rounding_mode=rounding_mode)
        if not can_cast(r._dtype, self._dtype) or r.shape != self.shape:
            raise RuntimeError(f"div_: the result ({st_name(r._dtype)}, {list(r.shape)}) "
                               f"cannot be written into self ({st_name(self._dtype)}, "
                               f"{list(self.shape)})")
        copy_into(self, r, "div_")
        return self

    true_divide = div

    def neg(self):
        return unary_op(op_neg, self, None)

    negative = neg

    def neg_(self):
        return unary_op(op_neg, self, self)

    def exp(self):
        return unary_op(op_exp, self, None)

    def exp_(self):
        return unary_op(op_exp, self, self)

    def relu(self):
        return unary_op(op_relu, self, None)

    def relu_(self):
        return unary_op(op_relu, self, self)

    def pow(self, exponent):
        return binary_op(op_pow, self, exponent, 1, None)

    def pow_(self, exponent):
        return binary_inplace(op_pow, self, exponent, 1)

    def maximum(self, other):
        return maximum(self, other)

    def minimum(self, other):
        return minimum(self, other)

    def prod(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names("prod", dim, keepdim, axis, keepdims)
        return reduce_op(op_prod, self, dim, keepdim, dtype, None)

    def amax(self, dim=(), keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names("amax", dim, keepdim, axis, keepdims, ())
        return reduce_op(op_amax, self, dim, keepdim, None, None)

    def amin(self, dim=(), keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names("amin", dim, keepdim, axis, keepdims, ())
        return reduce_op(op_amin, self, dim, keepdim, None, None)

    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names("sum", dim, keepdim, axis, keepdims)
        return reduce_op(op_sum, self, dim, keepdim, dtype, None)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names("mean", dim, keepdim, axis, keepdims)
        return reduce_op(op_mean, self, dim, keepdim, dtype, None)

    def matmul(self, other):
        return matmul(self, other)

    def softmax(self, dim=None, dtype=None, *, axis=None):
        return softmax(self, dim, dtype, axis=axis)

    def log_softmax(self, dim=None, dtype=None, *, axis=None):
        return log_softmax(self, dim, dtype, axis=axis)

    # interop (_interop.pxi) --------------------------------------------------------------
    def numpy(self, *, force=False):
        """A NumPy array sharing this CPU tensor's memory (``force`` copies instead)."""
        return numpy_view(self, force)

    def tolist(self):
        """The values as (nested) Python lists of numbers."""
        return host_array(self).tolist()

    def __array__(self, dtype=None, copy=None):
        arr = numpy_view(self, False) if self._device.type == "cpu" and (
            self._dtype.np_dtype is not None or self._keys & AUTOGRAD_BIT) else host_array(self)
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._keys & AUTOGRAD_BIT:
            raise RuntimeError("Can't export tensors that require gradient, use "
                               "tensor.detach()")
        kwargs = {} if max_version is None else {"max_version": max_version}
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return numpy_view(self, False).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self._device.type != "cpu":
            raise BufferError(f"__dlpack__: only CPU tensors can be exported yet, not "
                              f"{self._device}")
        return (1, 0)

    # pickling and copying (__reduce_ex__, __deepcopy__, __copy__): core/storages.py




include "_autograd_support.pxi"
include "_transforms.pxi"
include "_arguments.pxi"
include "_promotion.pxi"
include "_limited.pxi"
include "_elementwise.pxi"
include "_copy.pxi"

# The op modules split from this one cimport it, so they load last; their public names are
# this module's too (ember.core._tensor is where the rest of ember finds every op).
# The factories first (every op module makes tensors with them), then the view ops (advanced
# indexing loads after them).
from ember.core._factories import (
    arange, _Capsule, _complex_out, empty, empty_like, from_dlpack, _from_host, from_numpy,
    full, full_like, _imag, ones, ones_like, _real, _rebuild_tensor, _result_out, tensor,
    _to_host, view_as_complex, view_as_real, zeros, zeros_like)
from ember.core._views import (
    as_strided, clone, _d_as_strided, _d_diagonal, _d_narrow, _d_permute, _d_select,
    diagonal, flatten, is_floating_point, is_tensor, movedim, narrow, numel, permute,
    reshape, select, squeeze, swapaxes, swapdims, t, transpose, unflatten, unsqueeze)
from ember.core._conv_pool import (
    _adaptive_avg_pool2d, _adaptive_avg_pool2d_backward, _adaptive_bounds, _conv_composite,
    _plane_index, _pool_composite, _window_count, _window_index, adaptive_max_pool2d,
    adaptive_max_pool2d_backward, avg_pool2d, avg_pool2d_backward, convolution,
    convolution_backward, max_pool2d_with_indices, max_pool2d_with_indices_backward)
from ember.core._norm_loss import (
    _cross_entropy_backward, _cross_entropy_forward, _nll_composite, _norm_composite,
    batch_norm, layer_norm, native_batch_norm, native_batch_norm_backward, native_layer_norm,
    native_layer_norm_backward, nll_loss_backward, nll_loss_forward)
from ember.core._fused import (
    _fused_adam, _fused_rnn, _fused_sgd, _gelu, _gelu_backward, _has_fused_rnn, _ternary,
    _activation, _activation_kernel, _plain_operands, _ternary_ready, RNN_LSTM, RNN_LSTM_BACKWARD)
from ember.core._indexing import (
    adv_getitem, adv_setitem, _d_gather, _d_index, _d_index_add, _d_index_copy,
    _d_index_fill, _d_index_put, _d_index_select, _d_put, _d_scatter, _d_scatter_add,
    _d_scatter_reduce, _d_take, gather, index_add, _index_add_, index_copy, _index_copy_,
    index_fill, _index_fill_, index_put, _index_put_, index_select, IndexOutOfBoundsError,
    multinomial, put, _put_, scatter, _scatter_, scatter_add, _scatter_add_, scatter_reduce,
    _scatter_reduce_, searchsorted, take)
from ember.core._math import (
    _abs, _all, _any, _binary_method, cos, _d_extreme, _d_floor_divide, _d_fmod,
    _d_log_softmax, _d_matmul, _d_nan_extreme, _d_pow, _d_remainder, _d_softmax, _d_where,
    eq, equal, frac, ge, greater, greater_equal, gt, le, less, less_equal, log, log_softmax,
    _log_softmax_backward_data, logical_and, logical_not, logical_or, logical_xor, lt,
    masked_fill, _masked_fill_, _math_methods, matmul, maximum, _maximum_scalar, minimum,
    _minimum_scalar, ne, nonzero, not_equal, _operator_methods, _polygamma, _pow,
    reciprocal, _round, sigmoid, _sign, sin, softmax, _softmax_backward_data, _softmax_composite,
    sqrt, square, _state_default_dtype, table_functions, tanh, _unary_method, where,
    _zeros_grad)
from ember.core._reduce import (
    amax, amin, argmax, argmin, cummax, cummin, cumprod, cumsum, _d_amax, _d_cummax,
    _d_cumprod, _d_cumsum, _d_mean, _d_prod, _d_sum, _device_sort, mean, prod, sum,
    _top_k_rows, _ValuesIndices)
from ember.core._joining import (
    _bump_version, _cat, _cat_forward, _new_storage, _resize, _set_storage, _split_forward,
    _split_views, _split_with_sizes_forward, _storage_device, _storage_of, _tensor_over,
    _unbind_forward, _version_of, chunk, split, split_with_sizes, unbind)
from ember.core._random import (
    _default_generator, _fill_normal, _fill_uniform, _set_vmap_random, _shuffled_range,
    Generator, initial_seed, manual_seed, rand, rand_like, randn, randn_like, seed)


def _meta_is(object t, dtype dt, device dev, bint requires_grad, bint inference,
             tuple shape, tuple stride):
    """Whether ``t`` is a tensor with exactly this dtype, device, requires_grad, inference
    flag, shape and strides: a compiled graph's guard on one input in one call (its eight
    Python conditions cost ~3 us a tensor; ember._dynamo.guards keeps them for the reason a
    guard fails)."""
    if not isinstance(t, TensorBase):
        return False
    cdef TensorBase x = <TensorBase>t
    cdef int i
    if x._dtype is not dt or x._ndim != len(shape) or x._inference != inference or \
            ((x._keys & AUTOGRAD_BIT) != 0) != requires_grad:
        return False
    if x._device is not dev and not (x._device.type == dev.type and
                                     x._device.index == dev.index):
        return False
    for i in range(x._ndim):
        if x._sizes[i] != <int64_t>shape[i] or x._strides[i] != <int64_t>stride[i]:
            return False
    return True


cdef object binary_dunder(Op op, TensorBase self, object other, bint reflected):
    """An arithmetic dunder (``op`` None: matmul) as PyTorch's: an operand the op does not
    take gives NotImplemented, so Python tries that operand's reflected method (an fx
    Proxy's ``__radd__``) and else raises its own TypeError."""
    try:
        if op is None:
            return matmul(other, self) if reflected else matmul(self, other)
        if reflected:
            return binary_op(op, other, self, 1, None)
        return binary_op(op, self, other, 1, None)
    except TypeError:
        if isinstance(other, (TensorBase, int, float, complex)):
            raise
    np = numpy()
    if isinstance(other, np.ndarray):
        # PyTorch leaves this to NumPy: the tensor as an array (one requiring grad refuses),
        # NumPy's promotion, the result wrapped back as a tensor
        mine = self.__array__()
        fn = _PY_OPERATORS[None if op is None else op.name]
        return from_numpy(np.asarray(fn(other, mine) if reflected else fn(mine, other)))
    return NotImplemented


_PY_OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
                 "div": operator.truediv, "pow": operator.pow, None: operator.matmul,
                 "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
                 "gt": operator.gt, "ge": operator.ge, "floor_divide": operator.floordiv,
                 "remainder": operator.mod, "bitwise_and": operator.and_,
                 "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
                 "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift}


# The op modules have set this module's hooks (_tensor.pxd): a missing one fails the import
# here rather than crashing on its first call.
if (reduce_op == NULL or view_c == NULL or view_dtype_c == NULL or reshape_c == NULL
        or expand_c == NULL or permute_c == NULL or transpose_c == NULL or squeeze_c == NULL
        or unsqueeze_c == NULL or narrow_c == NULL or select_c == NULL or diagonal_c == NULL
        or as_strided_c == NULL or getitem == NULL or setitem == NULL or one_element == NULL
        or item_c == NULL or host_array == NULL or numpy_view == NULL or complex_ops == NULL
        or complex_copy == NULL or complex_fill == NULL):
    raise ImportError("ember.core._tensor: an op module did not set its hooks")
