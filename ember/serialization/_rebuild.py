"""Tensors out of a PyTorch pickle: the storages and the ``torch._utils._rebuild_*`` functions.

A ``torch.save`` pickle names each tensor's storage by a persistent id
``("storage", <storage type>, key, location, numel)`` and rebuilds the tensor with a call such
as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``.
Loading maps those names to the functions below: every storage of the file becomes one
``LoadedStorage`` (its bytes as a uint8 ember tensor, placed once per map_location; a zip
checkpoint's pickle sees it as an ember TypedStorage, which a storage saved on its own loads
as), and every tensor is an ``as_strided`` view of it, so tensors that shared a storage when
saved share one ember storage when loaded. Arguments come from an untrusted file: each is
checked here, and the core's ``as_strided`` refuses views outside the storage.
"""
import pickle
import threading

from ember.core import _dtype as _dtypes
from ember.core._autograd import set_requires_grad
from ember.core._tensor import TensorBase, empty, from_numpy
from ember.core.factories import empty_strided
from ember.core.storages import TypedStorage, UntypedStorage
from ember.core.tensor import Tensor

__all__ = ["LoadedStorage", "MissingDtype", "StorageType", "as_storage", "dtype_named",
           "storage_name_of"]

# the storage classes of PyTorch's pickles and the dtype each holds
_STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4", "UntypedStorage": "uint8",
}
_STORAGE_OF = {d: s for s, d in _STORAGE_DTYPES.items()
               if s != "UntypedStorage" and not s.startswith("Q")}
_active = threading.local()        # the load in progress: its restore function


class MissingDtype:
    """A dtype a checkpoint names that ember does not have; building a tensor of it fails."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def dtype_named(name):
    """The ember dtype PyTorch calls ``torch.<name>`` (aliases too), or a MissingDtype."""
    d = _dtypes._dtype_by_name.get(name)
    return d if d is not None else MissingDtype(name)


def storage_name_of(dtype):
    """The legacy storage class that pickles ``dtype`` (``"FloatStorage"``), or None for the
    dtypes PyTorch saves through an untyped storage and ``_rebuild_tensor_v3``."""
    return _STORAGE_OF.get(dtype.name)


class StorageType:
    """The storage class a pickle names (``torch.FloatStorage``...): stands for its dtype."""

    def __init__(self, name):
        self._name = name
        self._dtype = dtype_named(_STORAGE_DTYPES[name])      # KeyError: not a storage type

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self._dtype})"

    def __repr__(self):
        return str(self)


def check_dtype(dtype, what):
    if isinstance(dtype, MissingDtype):
        raise RuntimeError(f"ember.load: the checkpoint holds {what} of dtype torch.{dtype.name}, "
                           f"which ember does not support")
    if not isinstance(dtype, _dtypes.dtype):
        raise pickle.UnpicklingError(f"{what}: expected a dtype, got {type(dtype).__name__}")


class LoadedStorage:
    """One storage of a checkpoint: its bytes (``flat``, a 1-D uint8 tensor already placed on
    its device) and the dtype its persistent id gave it."""

    def __init__(self, key, flat, dtype):
        self.key, self.flat, self.dtype = key, flat, dtype
        self._typed = {}

    def nbytes(self):
        return self.flat.numel()

    def typed(self, dtype):
        """The storage as a 1-D tensor of ``dtype`` (one per dtype: views share it)."""
        check_dtype(dtype, f"storage '{self.key}'")
        t = self._typed.get(dtype)
        if t is None:
            size = dtype.itemsize
            if self.flat.numel() % size:
                raise RuntimeError(f"ember.load: storage '{self.key}' holds {self.flat.numel()} "
                                   f"bytes, not a whole number of {dtype} elements")
            t = self._typed[dtype] = self.flat.view(dtype)
        return t


def _ints(x, what):
    if not (isinstance(x, (tuple, list)) and all(type(v) is int for v in x)):
        raise pickle.UnpicklingError(f"_rebuild_tensor: {what} must be a tuple of ints, got {x!r}")
    return tuple(x)


def as_storage(loaded):
    """The ember TypedStorage over a LoadedStorage's bytes: what loading a storage saved as an
    object of its own gives, as PyTorch's load gives a TypedStorage."""
    return TypedStorage(wrap_storage=loaded.flat.untyped_storage(), dtype=loaded.dtype,
                        _internal=True)


def _loaded(storage):
    # zip checkpoints hand out ember storages (see as_storage); legacy ones LoadedStorages,
    # which may be views of part of a storage
    if isinstance(storage, LoadedStorage):
        return storage
    hit = getattr(_active, "storages", {}).get(id(storage))
    if hit is not None:             # one this load handed out: its views are cached there
        return hit
    if not isinstance(storage, (TypedStorage, UntypedStorage)):
        raise pickle.UnpicklingError(f"_rebuild_tensor: expected a storage of the checkpoint, "
                                     f"got {type(storage).__name__}")
    untyped = storage.untyped()
    flat = empty(0, dtype=_dtypes.uint8, device=untyped.device).set_(untyped)
    dtype = storage.dtype if isinstance(storage, TypedStorage) else _dtypes.uint8
    return LoadedStorage("", flat, dtype)


def _rebuild_tensor(storage, storage_offset, size, stride, dtype=None):
    storage = _loaded(storage)
    if type(storage_offset) is not int:
        raise pickle.UnpicklingError(f"_rebuild_tensor: storage_offset must be an int, got "
                                     f"{storage_offset!r}")
    typed = storage.typed(storage.dtype if dtype is None else dtype)
    return typed.as_strided(_ints(size, "size"), _ints(stride, "stride"), storage_offset)


def _finish(t, requires_grad, metadata):
    for key, value in (metadata or {}).items():      # PyTorch's lazy conj/neg bits
        if key not in ("conj", "neg"):
            raise RuntimeError(f"ember.load: unsupported tensor metadata {key!r}")
        if value:
            t = t.conj() if key == "conj" else t.neg()
    if type(requires_grad) is not bool:
        raise pickle.UnpicklingError(f"_rebuild_tensor: requires_grad must be a bool, got "
                                     f"{requires_grad!r}")
    if requires_grad:
        set_requires_grad(t, True)
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    return _finish(_rebuild_tensor(storage, storage_offset, size, stride), requires_grad,
                   metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    check_dtype(dtype, "a tensor")
    return _finish(_rebuild_tensor(storage, storage_offset, size, stride, dtype), requires_grad,
                   metadata)


def _parameter():
    from ember.nn.parameter import Parameter
    return Parameter


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, TensorBase):
        raise pickle.UnpicklingError(f"_rebuild_parameter: expected a tensor, got "
                                     f"{type(data).__name__}")
    return _parameter()(data, bool(requires_grad))


def _set_obj_state(obj, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part:
            if not isinstance(part, dict):
                raise pickle.UnpicklingError(f"Invalid serialized state: {state!r}")
            for k, v in part.items():
                setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor of class ``new_type`` (a Tensor subclass, or Tensor with attributes)."""
    if not (isinstance(new_type, type) and issubclass(new_type, TensorBase)):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: {new_type!r} is not a Tensor class")
    ret = func(*args)
    if not isinstance(ret, TensorBase):
        raise pickle.UnpicklingError("_rebuild_from_type_v2: the rebuild function did not "
                                     "return a tensor")
    if type(ret) is not new_type:
        ret = Tensor._make_subclass(new_type, ret.detach(), ret.requires_grad)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        ret.__setstate__(state)
        return ret
    return _set_obj_state(ret, state)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    check_dtype(dtype, "a meta tensor")
    t = empty_strided(_ints(size, "size"), _ints(stride, "stride"), dtype=dtype, device="meta")
    return _finish(t, requires_grad, None)


def _to_device(data, dtype, device, requires_grad):
    check_dtype(dtype, "a tensor")
    t = data.to(dtype)
    restore = getattr(_active, "restore", None)
    t = restore(t, str(device)) if restore is not None else t.to(device)
    return _finish(t, requires_grad, None)


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, TensorBase):
        raise pickle.UnpicklingError("_rebuild_device_tensor_from_cpu_tensor: expected a tensor")
    return _to_device(data, dtype, device, requires_grad)


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    return _to_device(from_numpy(data), dtype, device, requires_grad)


def _unsupported(kind, fn):
    def rebuild(*args, **kwargs):
        raise RuntimeError(f"ember.load: the checkpoint holds {kind} (torch._utils.{fn}), which "
                           f"ember does not support")
    rebuild.__name__ = rebuild.__qualname__ = fn
    return rebuild


def _get_layout(name):
    """The layout PyTorch pickles as ``torch.serialization._get_layout(name)``."""
    import ember
    layout = getattr(ember, str(name).rpartition(".")[2], None)
    if layout is None:
        raise RuntimeError(f"ember.load: the checkpoint names the layout {name!r}, which ember "
                           f"does not have")
    return layout


# "module.name" in a PyTorch pickle -> the function that rebuilds it here
REBUILD_FUNCTIONS = {f"torch._utils.{f.__name__}": f for f in (
    _rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
    _rebuild_parameter_with_state, _rebuild_meta_tensor_no_storage,
    _rebuild_device_tensor_from_cpu_tensor, _rebuild_device_tensor_from_numpy,
    _unsupported("a sparse tensor", "_rebuild_sparse_tensor"),
    _unsupported("a quantized tensor", "_rebuild_qtensor"),
    _unsupported("a nested tensor", "_rebuild_nested_tensor"),
    _unsupported("a wrapper tensor subclass", "_rebuild_wrapper_subclass"))}
REBUILD_FUNCTIONS["torch._tensor._rebuild_from_type_v2"] = _rebuild_from_type_v2
REBUILD_FUNCTIONS["torch.serialization._get_layout"] = _get_layout


class restoring:
    """While loading: ``_rebuild_device_tensor_*`` place tensors with this restore function;
    ``storages`` maps id(storage handed out) -> its LoadedStorage (the caller keeps those
    storages alive)."""

    def __init__(self, restore, storages=None):
        self.restore, self.storages = restore, {} if storages is None else storages

    def __enter__(self):
        self.saved = (getattr(_active, "restore", None), getattr(_active, "storages", {}))
        _active.restore, _active.storages = self.restore, self.storages

    def __exit__(self, *exc):
        _active.restore, _active.storages = self.saved
