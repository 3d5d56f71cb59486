"""Storages (``torch.storage``; ember/storage.py re-exports them): UntypedStorage is a
tensor's memory as bytes (what ``t.untyped_storage()`` returns, sharing it), TypedStorage
the same memory as elements of one dtype (``t.storage()``, which PyTorch deprecates), and
the legacy typed classes (``FloatStorage``, ...) build TypedStorages of a fixed dtype.

Resizing a storage gives the wrapper a new buffer (with the old bytes): tensors that viewed
the old one keep it, where PyTorch's would follow."""
import warnings

from ember.core import _tensor as _T
from ember.core._autograd import set_requires_grad
from ember.core._dtype import _dtype_by_name

__all__ = ["TypedStorage", "UntypedStorage"]

_UINT8 = _dtype_by_name["uint8"]
_shared = set()                 # ids of core storages moved into shared memory
_warned = []


def _warn_typed():
    if not _warned:
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=3)
        _warned.append(True)


def _device_of(core):
    return _T._storage_device(core)


class StorageBase:
    """The base of UntypedStorage (``torch.StorageBase``, the C++ storage class)."""

    __module__ = "ember"
    __slots__ = ()


class UntypedStorage(StorageBase):
    """A buffer of bytes on a device: ``UntypedStorage(nbytes, device=None)``,
    ``UntypedStorage(sequence_of_bytes)``, or a tensor's ``untyped_storage()``."""

    __module__ = "ember.storage"
    is_sparse = False

    def __init__(self, *args, device=None, _core=None):
        if _core is not None:
            self._core = _core
            return
        from ember.core._device import device as _device
        dev = _device(device) if device is not None else _device("cpu")
        if not args:
            self._core = _T._new_storage(0, dev)
        elif len(args) == 1 and isinstance(args[0], int):
            self._core = _T._new_storage(args[0], dev)
        elif len(args) == 1:
            data = _T.tensor(list(args[0]), dtype=_UINT8, device=dev)
            self._core = _T._storage_of(data)
        else:
            raise TypeError(f"UntypedStorage(): expected a size or a sequence, got {args!r}")

    def _bytes(self):
        return _T._tensor_over(self._core, _UINT8, (self.nbytes(),), (1,), 0)

    def nbytes(self):
        """The size in bytes."""
        return self._core.nbytes()

    size = nbytes

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._core.data_ptr()

    @property
    def _cdata(self):
        """The identity of the memory (PyTorch's pointer to its storage): every wrapper of
        one storage, from any tensor viewing it, has the same ``_cdata``."""
        return id(self._core)

    @property
    def device(self):
        return _device_of(self._core)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._bytes()[index].tolist()
        return int(self._bytes()[index])

    def __setitem__(self, index, value):
        self._bytes()[index] = value

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        """Set every byte to ``value``."""
        self._bytes().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        """Copy the bytes of ``source`` (a storage of the same size)."""
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch, got input ({source.nbytes()}), target "
                               f"({self.nbytes()})")
        self._bytes().copy_(source.untyped()._bytes())
        return self

    def clone(self):
        """A copy on the same device."""
        return UntypedStorage(_core=_T._storage_of(self._bytes().clone()))

    def to(self, *, device, non_blocking=False):
        return UntypedStorage(_core=_T._storage_of(self._bytes().to(device)))

    def cpu(self):
        return self if self.device.type == "cpu" else self.to(device="cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to(device="cuda" if device is None else device)

    def untyped(self):
        return self

    def resize_(self, size):
        """Make the storage ``size`` bytes, keeping the bytes that fit (a new buffer)."""
        grown = _T._new_storage(size, self.device)
        keep = min(size, self.nbytes())
        if keep:
            _T._tensor_over(grown, _UINT8, (keep,), (1,), 0).copy_(self._bytes()[:keep])
        self._core = grown
        return self

    def is_shared(self):
        return id(self._core) in _shared

    def share_memory_(self):
        """Move the bytes into shared memory (an anonymous shared mapping, inherited by
        forked processes)."""
        if self.device.type != "cpu" or self.is_shared():
            return self
        self._core = _share(self._bytes())
        return self

    def is_pinned(self, device="cuda"):
        return False

    def pin_memory(self, device="cuda"):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def type(self, dtype=None, non_blocking=False):
        return "ember.storage.UntypedStorage" if dtype is None else self

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self.tolist())
        return (f"{body}\n[ember.storage.UntypedStorage(device={self.device}) of size "
                f"{self.nbytes()}]").lstrip("\n")

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        """A storage holding a copy of ``buffer``'s bytes (``count`` elements of ``dtype``
        from byte ``offset``; "big"/"little" ``byte_order`` swaps to the host's)."""
        import sys

        from ember.core.buffers import frombuffer
        values = frombuffer(buffer, dtype=dtype or _UINT8, count=count, offset=offset)
        if byte_order not in ("native", sys.byteorder) and values.element_size() > 1:
            arr = _T._to_host(values).byteswap()
            values = _T.tensor(arr)
        return cls(_core=_T._storage_of(values.clone()))

    def __reduce__(self):
        return _rebuild_untyped, (bytes(self.tolist()), str(self.device))

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """``nbytes`` bytes of ``filename`` (mapped, so writes reach it, when ``shared``)."""
        from ember.core.buffers import from_file
        return cls(_core=_T._storage_of(from_file(filename, shared, nbytes, dtype=_UINT8)))


def _rebuild_untyped(data, device):
    """Unpickle an UntypedStorage from its bytes."""
    return UntypedStorage(list(data), device=device)


def _rebuild_typed(untyped, dtype_name):
    """Unpickle a TypedStorage (its untyped bytes and dtype)."""
    return TypedStorage(wrap_storage=untyped, dtype=_dtype_by_name[dtype_name], _internal=True)


def _share(byte_tensor):
    """A core storage in an anonymous shared mapping holding ``byte_tensor``'s bytes."""
    import mmap

    import numpy as np
    n = byte_tensor.numel()
    buf = mmap.mmap(-1, max(n, 1), flags=mmap.MAP_SHARED)
    arr = np.frombuffer(buf, dtype=np.uint8, count=n)
    shared = _T.from_numpy(arr)
    shared.copy_(byte_tensor)
    core = _T._storage_of(shared)
    _shared.add(id(core))
    return core


class _LegacyStorageMeta(type):
    """isinstance(storage, FloatStorage): a TypedStorage of that dtype."""

    def __instancecheck__(cls, obj):
        if cls is TypedStorage or cls.__dict__.get("_fixed_dtype") is None:
            return type.__instancecheck__(cls, obj)
        return isinstance(obj, TypedStorage) and obj.dtype is cls._fixed_dtype


class TypedStorage(metaclass=_LegacyStorageMeta):
    """A storage read as elements of ``dtype``: ``TypedStorage(size, dtype=..., device=...)``,
    ``TypedStorage(sequence, dtype=...)``, or a tensor's ``storage()`` (deprecated)."""

    __module__ = "ember.storage"
    is_sparse = False
    _fixed_dtype = None

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed()
        dtype = self._fixed_dtype or dtype or _T._state_default_dtype()
        self.dtype = dtype
        if wrap_storage is not None:
            self._untyped_storage = wrap_storage
            return
        if not args:
            self._untyped_storage = UntypedStorage(0, device=device)
        elif len(args) == 1 and isinstance(args[0], int):
            self._untyped_storage = UntypedStorage(args[0] * dtype.itemsize, device=device)
        elif len(args) == 1:
            data = _T.tensor(list(args[0]), dtype=dtype, device=device)
            self._untyped_storage = UntypedStorage(_core=_T._storage_of(data))
        else:
            raise TypeError(f"TypedStorage(): expected a size or a sequence, got {args!r}")

    def __reduce__(self):
        return _rebuild_typed, (self._untyped_storage, self.dtype.name)

    def _values(self):
        n = self.size()
        return _T._tensor_over(self._untyped_storage._core, self.dtype, (n,), (1,), 0)

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def untyped(self):
        return self._untyped_storage

    def tolist(self):
        return self._values().tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._values()[index].tolist()
        return self._values()[index].item()

    def __setitem__(self, index, value):
        self._values()[index] = value

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._values().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        self._values().copy_(source._values() if isinstance(source, TypedStorage) else
                             source)
        return self

    def clone(self):
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype,
                            _internal=True)

    def cpu(self):
        return TypedStorage(wrap_storage=self._untyped_storage.cpu(), dtype=self.dtype,
                            _internal=True)

    def resize_(self, size):
        self._untyped_storage.resize_(size * self.dtype.itemsize)
        return self

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def is_pinned(self, device="cuda"):
        return False

    def type(self, dtype=None, non_blocking=False):
        """The legacy storage name ('ember.FloatStorage')."""
        if dtype is not None:
            return self
        from ember.core.legacy_types import _BY_DTYPE
        name = _BY_DTYPE.get(self.dtype.name, "Tensor").replace("Tensor", "Storage")
        prefix = "ember" if self.device.type == "cpu" else f"ember.{self.device.type}"
        return f"{prefix}.{name}"

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return (f"{body}\n[ember.storage.TypedStorage(dtype={self.dtype}, device="
                f"{self.device}) of size {self.size()}]").lstrip("\n")


_LEGACY_STORAGES = {}


def legacy_storage(name, device_type="cpu"):
    """The legacy typed storage class ``name`` ('FloatStorage')."""
    key = (name, device_type)
    cls = _LEGACY_STORAGES.get(key)
    if cls is None:
        from ember.core.legacy_types import LEGACY_NAMES
        dt_name = {**{k.replace("Tensor", "Storage"): v for k, v in LEGACY_NAMES.items()},
                   "ComplexFloatStorage": "complex64",
                   "ComplexDoubleStorage": "complex128"}[name]

        def init(self, *args, device=None, **kwargs):
            from ember.core.legacy_types import _check_available
            _check_available(type(self))
            TypedStorage.__init__(self, *args, device=device or device_type, _internal=True)
        cls = _LegacyStorageMeta(name, (TypedStorage,), {
            "_fixed_dtype": _dtype_by_name[dt_name], "dtype": _dtype_by_name[dt_name],
            "__init__": init, "_device_type": device_type,
            "__module__": "ember" if device_type == "cpu" else f"ember.{device_type}",
            "__doc__": f"TypedStorage of {dt_name} (legacy)."})
        _LEGACY_STORAGES[key] = cls
    return cls


LEGACY_STORAGE_NAMES = ("BFloat16Storage", "BoolStorage", "ByteStorage", "CharStorage",
                        "ComplexDoubleStorage", "ComplexFloatStorage", "DoubleStorage",
                        "FloatStorage", "HalfStorage", "IntStorage", "LongStorage",
                        "ShortStorage")


def is_storage(obj):
    """Whether ``obj`` is a storage (untyped or typed)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


# -- the tensor methods over storages ----------------------------------------------------------

def _untyped_storage(self):
    """The tensor's memory as an UntypedStorage (shared)."""
    return UntypedStorage(_core=_T._storage_of(self))


def _storage(self):
    """The tensor's memory as a TypedStorage of its dtype (PyTorch deprecates this)."""
    _warn_typed()
    return TypedStorage(wrap_storage=_untyped_storage(self), dtype=self.dtype, _internal=True)


def _storage_type(self):
    """The legacy storage class of the tensor's dtype (FloatStorage, ...)."""
    from ember.core.legacy_types import _BY_DTYPE
    name = _BY_DTYPE.get(self.dtype.name, "Tensor").replace("Tensor", "Storage")
    return legacy_storage(name, self.device.type)


def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make this tensor view ``source``'s memory: a tensor (its storage and geometry), a
    storage (with ``storage_offset``, ``size`` and ``stride``, by default all of it), or
    nothing (an empty storage)."""
    from ember.core.tensor import Tensor
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor of "
                               f"type {self.dtype}")
        return _T._set_storage(self, _T._storage_of(source), source.storage_offset(),
                               tuple(source.shape), source.stride())
    if source is None:
        core = _T._new_storage(0, self.device)
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage) and source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype} or an "
                               f"UntypedStorage, but got type {source.dtype}")
        core = source.untyped()._core
    else:
        raise TypeError(f"set_(): expected a Tensor or a Storage, got "
                        f"{type(source).__name__}")
    if size is None:
        size = ((core.nbytes() // self.dtype.itemsize) - storage_offset,)
    size = tuple(size)
    if stride is None:
        stride, step = [], 1
        for s in reversed(size):
            stride.insert(0, step)
            step *= max(s, 1)
    return _T._set_storage(self, core, storage_offset, size, tuple(stride))


def _resize_(self, *sizes, memory_format=None):
    """Give the tensor shape ``sizes`` with contiguous strides; its storage grows (keeping
    its bytes) when the shape needs more."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return _T._resize(self, tuple(int(s) for s in sizes))


def _resize_as_(self, the_template, *, memory_format=None):
    """resize_ to ``the_template``'s shape."""
    return _resize_(self, tuple(the_template.shape))


def _is_set_to(self, tensor):
    """Whether both tensors view the same memory with the same geometry."""
    return (_T._storage_of(self) is _T._storage_of(tensor) and
            self.storage_offset() == tensor.storage_offset() and
            tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())


def _share_memory_(self):
    """Move the tensor's memory into shared memory (CPU; a no-op elsewhere)."""
    if self.device.type != "cpu" or _is_shared(self):
        return self
    whole = _T._storage_of(self).nbytes()
    core = _share(_T._tensor_over(_T._storage_of(self), _UINT8, (whole,), (1,), 0))
    return _T._set_storage(self, core, self.storage_offset(), tuple(self.shape),
                           self.stride())


def _is_shared(self):
    return id(_T._storage_of(self)) in _shared


_DEEPCOPY_MESSAGE = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
    "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")


def _deepcopy(self, memo):
    """copy.deepcopy of a leaf: a new leaf over a copy of its memory (tensors copied together
    that shared memory share the copy, by ``memo``), with requires_grad, .grad and its
    attributes copied, as PyTorch's."""
    import copy
    if self.grad_fn is not None:
        raise RuntimeError(_DEEPCOPY_MESSAGE)
    if id(self) in memo:
        return memo[id(self)]
    core = _T._storage_of(self)
    twin = memo.get(id(core))
    if twin is None:
        whole = _T._tensor_over(core, _UINT8, (core.nbytes(),), (1,), 0)
        twin = memo[id(core)] = _T._storage_of(whole.clone())
        memo.setdefault(id(memo), []).append(core)      # keep the key's object alive
    r = _T._tensor_over(twin, self.dtype, tuple(self.shape), self.stride(),
                        self.storage_offset())
    if type(self) is not type(r):
        r = r.as_subclass(type(self))
    memo[id(self)] = r
    set_requires_grad(r, self.requires_grad)
    if self.grad is not None:
        r.grad = copy.deepcopy(self.grad, memo)
    if self.__dict__:
        r.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return r


def _copy(self):
    """copy.copy: a new tensor over the same memory, requiring grad as self does (a leaf)."""
    r = _T._tensor_over(_T._storage_of(self), self.dtype, tuple(self.shape), self.stride(),
                        self.storage_offset())
    if type(self) is not type(r):
        r = r.as_subclass(type(self))
    set_requires_grad(r, self.requires_grad)
    r.__dict__.update(self.__dict__)
    return r


def _reduce_ex(self, protocol):
    """Pickling: the values, dtype, device, requires_grad and strides (kept when they lay the
    tensor out densely, as a transpose's do)."""
    return (_rebuild, (_T._to_host(self.detach()), self.dtype.name, str(self.device),
                       self.requires_grad, self.stride()))


def _dense_permutation(shape, stride):
    """Whether ``stride`` lays ``shape`` out densely in some order of its dims."""
    span = 1
    for st, n in sorted((st, n) for n, st in zip(shape, stride) if n > 1):
        if st != span:
            return False
        span *= n
    return True


def _rebuild(array, dtype_name, device, requires_grad=False, stride=None):
    t = _T._rebuild_tensor(array, dtype_name, device)
    if stride is not None and tuple(stride) != t.stride() and \
            _dense_permutation(tuple(t.shape), tuple(stride)):
        from ember.core.factories import empty_strided
        t = empty_strided(tuple(t.shape), tuple(stride), dtype=t.dtype,
                          device=t.device).copy_(t)
    return set_requires_grad(t, requires_grad) if requires_grad else t


class StorageMethods:
    """Tensor's storage methods: t.untyped_storage(), t.storage(), t.set_(...), t.resize_(...),
    t.share_memory_(), ... (a base of ember.Tensor)."""
    __slots__ = ()
    __module__ = "ember.core.tensor"
    untyped_storage = _untyped_storage
    storage = _storage
    storage_type = _storage_type
    set_ = _set_
    resize_ = _resize_
    resize_as_ = _resize_as_
    is_set_to = _is_set_to
    share_memory_ = _share_memory_
    is_shared = _is_shared
    __deepcopy__ = _deepcopy
    __copy__ = _copy
    __reduce_ex__ = _reduce_ex
