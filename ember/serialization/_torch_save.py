"""Writing PyTorch's checkpoint format: what ``torch.save`` writes and ``torch.load`` reads.

The object is pickled (protocol 2 by default, the only one PyTorch's weights_only unpickler
reads) with ember's tensors, dtypes, devices and Sizes written under PyTorch's names, exactly
as PyTorch pickles its own: a tensor is ``torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, OrderedDict())`` whose storage is the persistent id
``("storage", torch.FloatStorage, key, location, numel)``; a Parameter wraps that in
``torch._utils._rebuild_parameter``; a dtype is the global ``torch.float32``. Each storage is
written once, whole, as the record ``data/<key>``, so views sharing a storage stay views.
PyTorch's names are written as GLOBAL opcodes by the pure-Python pickler (``pickle._Pickler``):
nothing imports torch. Other objects (modules, user classes) pickle under their own paths.
"""
import collections
import io
import pickle
import secrets
import sys

import numpy as np

from ember.core import _dtype as _dtypes
from ember.core._device import device as _device
from ember.core._size import Size
from ember.core._tensor import TensorBase, empty
from ember.core.storages import TypedStorage, UntypedStorage
from ember.core.tensor import Tensor
from ember.serialization import _options
from ember.serialization._locations import location_tag
from ember.serialization._rebuild import storage_name_of
from ember.serialization._tensors import registered_name
from ember.serialization._zipfile import ZipWriter

__all__ = ["pickle_with_storages", "save_zip"]

FILE_FORMAT_VERSION = b"3\n"       # the archive version torch.save writes


class _NamedGlobal:
    """A global pickled by name without importing it: PyTorch's
    (``torch._utils._rebuild_tensor_v2``) or a registered tensor subclass's registered name."""

    __slots__ = ("module", "name")
    _made = {}

    def __new__(cls, module, name):
        key = (module, name)
        obj = cls._made.get(key)
        if obj is None:             # one object per name: the pickler memoizes by identity
            obj = cls._made[key] = super().__new__(cls)
            obj.module, obj.name = module, name
        return obj

    def __call__(self, *args):      # pickle wants the function of a reduce to be callable
        raise TypeError(f"{self.module}.{self.name} is a placeholder for pickling")

    def __repr__(self):
        return f"{self.module}.{self.name}"


def _utils(name):
    return _NamedGlobal("torch._utils", name)


def _storage_dtype(dtype):
    """The dtype of the storage PyTorch pickles a ``dtype`` tensor's storage as: its own when a
    legacy typed storage class exists for it, else uint8 (an untyped storage)."""
    return dtype if storage_name_of(dtype) is not None else _dtypes.uint8


class _StorageRef:
    """One storage of the checkpoint: its key, its persistent id and the tensor to read."""

    def __init__(self, key, tensor, dtype, legacy):
        self.key, self.tensor, self.legacy = key, tensor, legacy
        typed = storage_name_of(dtype)
        self.dtype = _storage_dtype(dtype)
        self.storage_type = (_NamedGlobal("torch", typed) if typed is not None
                             else _NamedGlobal("torch.storage", "UntypedStorage"))
        itemsize = tensor.dtype.itemsize
        self.elements = tensor.untyped_storage().nbytes() // itemsize      # of tensor.dtype
        self.nbytes = self.elements * itemsize
        self.numel = self.nbytes // self.dtype.itemsize
        self.location = location_tag(tensor)

    def pid(self):
        pid = ("storage", self.storage_type, self.key, self.location, self.numel)
        return pid + (None,) if self.legacy else pid      # the legacy format's view_metadata

    def host_bytes(self):
        """The storage's bytes as a uint8 NumPy array (a view on the CPU, a copy elsewhere)."""
        flat = self.tensor.detach().as_strided((self.elements,), (1,), 0).view(_dtypes.uint8)
        if flat.device.type != "cpu":
            flat = flat.cpu()
        return np.asarray(flat)


class _Storages:
    """The storages met while pickling, keyed "0", "1"... in order of first use."""

    def __init__(self, legacy=False):
        self.refs = {}          # storage._cdata -> _StorageRef (which keeps a tensor alive)
        self.legacy = legacy

    def ref(self, t):
        key = t.untyped_storage()._cdata           # one per memory, whatever the wrapper
        ref = self.refs.get(key)
        if ref is None:
            ref = self.refs[key] = _StorageRef(str(len(self.refs)), t, t.dtype, self.legacy)
        elif _storage_dtype(t.dtype) is not ref.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data "
                               "as different types")
        return ref

    def storage_pid(self, storage):
        """The persistent id PyTorch writes for a storage saved as an object of its own: a
        TypedStorage under its legacy class, an UntypedStorage as bytes."""
        untyped = storage.untyped()
        typed = isinstance(storage, TypedStorage)
        dtype = storage.dtype if typed else _dtypes.uint8
        ref = self.ref(empty(0, dtype=dtype, device=untyped.device).set_(untyped))
        if typed:
            return ref.pid()
        pid = ("storage", _NamedGlobal("torch.storage", "UntypedStorage"), ref.key,
               ref.location, untyped.nbytes())
        return pid + (None,) if self.legacy else pid


def _tensor_reduce(t, storages):
    """PyTorch's reduction of tensor ``t``: (function, args)."""
    if t.device.type == "meta":
        return _utils("_rebuild_meta_tensor_no_storage"), (
            t.dtype, tuple(t.shape), t.stride(), t.requires_grad)
    from ember.nn.parameter import Parameter
    if type(t) is Parameter:
        state = dict(getattr(t, "__dict__", {}))
        args = (t.detach(), t.requires_grad, collections.OrderedDict())
        if state:
            return _utils("_rebuild_parameter_with_state"), args + (state,)
        return _utils("_rebuild_parameter"), args
    ref = storages.ref(t)
    args = (ref, t.storage_offset(), tuple(t.shape), t.stride(), t.requires_grad,
            collections.OrderedDict())
    if storage_name_of(t.dtype) is not None:
        func = _utils("_rebuild_tensor_v2")
    else:
        func, args = _utils("_rebuild_tensor_v3"), args + (t.dtype,)
    state = dict(getattr(t, "__dict__", {}))
    if type(t) is Tensor and not state:
        return func, args
    if type(t) is Tensor:
        cls = _NamedGlobal("torch", "Tensor")
    else:
        registered = registered_name(type(t))
        cls = _NamedGlobal(*registered.rsplit(".", 1)) if registered else type(t)
    return _NamedGlobal("torch._tensor", "_rebuild_from_type_v2"), (func, cls, args, state)


def _pickler_class(pickle_module):
    base = getattr(pickle_module, "Pickler", None)
    if pickle_module is pickle:
        base = pickle._Pickler
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise ValueError(f"ember.save: pickle_module must be the standard pickle module or one "
                         f"whose Pickler extends pickle._Pickler (as dill's does), not "
                         f"{pickle_module!r}")

    class _Pickler(base):
        dispatch = dict(base.dispatch)

        def __init__(self, file, protocol, storages):
            super().__init__(file, protocol)
            self._storages = storages

        def persistent_id(self, obj):
            if type(obj) is _StorageRef:
                return obj.pid()
            if isinstance(obj, (UntypedStorage, TypedStorage)):
                return self._storages.storage_pid(obj)
            return None

        def reducer_override(self, obj):
            if isinstance(obj, TensorBase):
                return _tensor_reduce(obj, self._storages)
            t = type(obj)
            if t is _device:
                args = (obj.type,) if obj.index is None else (obj.type, obj.index)
                return _NamedGlobal("torch", "device"), args
            if t is Size:
                return _NamedGlobal("torch", "Size"), (tuple(obj),)
            return NotImplemented

        def _save_global_name(self, module, name):
            if self.proto >= 4:
                self.save(module)
                self.save(name)
                self.write(pickle.STACK_GLOBAL)
            else:
                self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8"))

        def _save_named_global(self, obj):
            self._save_global_name(obj.module, obj.name)
            self.memoize(obj)
        dispatch[_NamedGlobal] = _save_named_global

        def _save_dtype(self, obj):
            self._save_global_name("torch", obj.name)
            self.memoize(obj)
        dispatch[_dtypes.dtype] = _save_dtype

    return _Pickler


def _serialization_id():
    return "".join(str(secrets.randbelow(10 ** 20)).zfill(20) for _ in range(2)).encode()


def pickle_with_storages(obj, pickle_module, pickle_protocol, legacy=False):
    """(the pickle of ``obj`` as bytes, the _Storages it refers to)."""
    storages = _Storages(legacy)
    buf = io.BytesIO()
    _pickler_class(pickle_module)(buf, pickle_protocol, storages).dump(obj)
    return buf.getvalue(), storages


def save_zip(obj, f, archive, pickle_module, pickle_protocol, disable_byteorder_record=False):
    """Write ``obj`` to the binary file object ``f`` as PyTorch's zip checkpoint."""
    data, storages = pickle_with_storages(obj, pickle_module, pickle_protocol)
    writer = ZipWriter(f, archive, _options.get_crc32_options())
    writer.write_record("data.pkl", data)
    writer.write_record(".format_version", b"1")
    writer.write_record(".storage_alignment", b"64")
    if not disable_byteorder_record:
        writer.write_record("byteorder", sys.byteorder.encode())
    skip = _options.skipping_data()
    for ref in storages.refs.values():
        writer.write_record(f"data/{ref.key}", None if skip else ref.host_bytes(), ref.nbytes)
    writer.write_record("version", FILE_FORMAT_VERSION)
    writer.write_record(".data/serialization_id", _serialization_id())
    writer.close()
