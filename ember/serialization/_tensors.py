"""Tensors into and out of a checkpoint.

Each tensor object is saved once, as a *record* (a small JSON-able dict) that the structure
(JSON tree or pickle stream) refers to:
``{"id": n, "key": <safetensors entry>, "device": "cuda:0", "requires_grad": true,
"type": "ember.nn.Parameter"}`` (defaults omitted). Sharing: the same tensor object saved
twice loads as one object (same id); distinct tensors that are the *same view* of one storage
(same storage, offset, shape, strides and dtype: ``t`` and ``t.detach()``, tied weights in a
state_dict) are stored once and load as distinct tensors sharing memory. Other overlapping
views of one storage are saved by value and load as independent tensors (safetensors has no
notion of views). Meta tensors keep dtype and shape and no data (``"key": null``).
"""
import importlib
import sys

import numpy as np

from ember.core import _dtype as _dtypes
from ember.core._autograd import set_requires_grad
from ember.core._tensor import TensorBase, _to_host, empty, from_numpy
from ember.core.tensor import Tensor
from ember.serialization._container import DTYPES, ST_NAME, CorruptCheckpoint
from ember.serialization._locations import restore_function

__all__ = ["Loader", "Saver", "register_tensor_subclass"]

# Tensor subclasses a tree checkpoint may hold, by the name written to the file. None: resolved
# on first use from the module already imported (ember.nn imports lazily).
_TENSOR_TYPES = {"ember.nn.Parameter": None}


def register_tensor_subclass(cls, name=None):
    """Let checkpoints hold instances of the Tensor subclass ``cls`` (as ``name``, by default
    ``"<module>.<qualname>"``): save records the class, load rebuilds the instance as
    ``Tensor._make_subclass(cls, data)`` with the saved ``requires_grad``, with no pickle and
    no allow-listing. ember.nn.Parameter is registered from the start."""
    if not (isinstance(cls, type) and issubclass(cls, TensorBase)):
        raise TypeError(f"register_tensor_subclass(): cls must be a Tensor subclass, not "
                        f"{cls!r}")
    _TENSOR_TYPES[name if name is not None else f"{cls.__module__}.{cls.__qualname__}"] = cls


def registered_class(name, load_module=False):
    """The registered Tensor subclass called ``name``, or None."""
    cls = _TENSOR_TYPES.get(name)
    if cls is None and name in _TENSOR_TYPES:
        module, _, attr = name.rpartition(".")
        mod = importlib.import_module(module) if load_module else sys.modules.get(module)
        cls = getattr(mod, attr, None)
        if isinstance(cls, type) and issubclass(cls, TensorBase):
            _TENSOR_TYPES[name] = cls
        else:
            cls = None
    return cls


def registered_name(cls):
    """The name ``cls`` is registered under, or None."""
    return next((n for n in list(_TENSOR_TYPES) if registered_class(n) is cls), None)


class Saver:
    """Collects the tensors of one checkpoint: records and the arrays to write."""

    def __init__(self):
        self.arrays = {}        # safetensors name -> (safetensors dtype, NumPy array)
        self._records = {}      # id(tensor) -> (tensor kept alive, record)
        self._views = {}        # (storage, offset, shape, strides, dtype, device) -> name

    def record(self, t, hint=None):
        """The record of tensor ``t``; ``hint`` names its safetensors entry (a tree path)."""
        hit = self._records.get(id(t))
        if hit is not None:
            return hit[1]
        rec = {"id": len(self._records)}
        if t.device.type == "meta":
            rec.update(key=None, dtype=t.dtype.name, shape=list(t.shape))
        else:
            rec["key"] = self._store(t, hint)
        if t.device.type != "cpu":
            rec["device"] = str(t.device)
        if t.requires_grad:
            rec["requires_grad"] = True
        if type(t) is not Tensor:
            name = registered_name(type(t))
            rec["type"] = name or f"{type(t).__module__}.{type(t).__qualname__}"
        self._records[id(t)] = (t, rec)
        return rec

    def _store(self, t, hint):
        view = None
        if t.numel():
            view = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape),
                    t.stride(), t.dtype.name, str(t.device))
            if view in self._views:
                return self._views[view]
        name = hint if hint is not None else str(len(self.arrays))
        n = 1
        while name in self.arrays:
            name, n = f"{hint}#{n}", n + 1
        src = t.detach()
        if t.dtype.name == "bfloat16":      # NumPy has no bfloat16: its bits, as int16
            src = src.view(_dtypes.int16)
        # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
        arr = np.require(src, requirements="C") if t.device.type == "cpu" else _to_host(src)
        self.arrays[name] = (ST_NAME[t.dtype.name], arr)
        if view is not None:
            self._views[view] = name
        return name


class Loader:
    """Builds the tensors a checkpoint's structure refers to, placing them per map_location
    (the restore function gets each tensor as read and its saved location).

    ``resolve_type(name)`` returns the Tensor subclass a record names (or raises)."""

    def __init__(self, entries, data, map_location, resolve_type):
        self._entries, self._data = entries, data
        self._resolve_type = resolve_type
        self._place = restore_function(map_location)
        self._objects = {}      # record id -> (key, tensor)
        self._bases = {}        # safetensors name -> the placed tensor read from it

    def tensor(self, rec):
        if not (isinstance(rec, dict) and type(rec.get("id")) is int):
            raise CorruptCheckpoint(f"invalid tensor record {rec!r}")
        key = rec.get("key")
        hit = self._objects.get(rec["id"])
        if hit is not None:
            if hit[0] != key:
                raise CorruptCheckpoint(f"tensor record {rec['id']} names both '{hit[0]}' "
                                        f"and '{key}'")
            return hit[1]
        if key is None:
            t = self._meta(rec)
        elif key not in self._entries:
            raise CorruptCheckpoint(f"the structure refers to tensor '{key}', which the file "
                                    f"does not hold")
        elif key in self._bases:
            t = self._bases[key].detach()       # an alias of a tensor already loaded
        else:
            loc = rec.get("device", "cpu")
            if not isinstance(loc, str):
                raise CorruptCheckpoint(f"tensor '{key}' has an invalid device {loc!r}")
            t = self._bases[key] = self._place(self._read(self._entries[key]), loc)
        type_name = rec.get("type")
        if type_name is not None:
            t = Tensor._make_subclass(self._resolve_type(type_name), t.detach())
        requires_grad = rec.get("requires_grad", False)
        if type(requires_grad) is not bool:
            raise CorruptCheckpoint(f"tensor '{key}' has an invalid requires_grad")
        if requires_grad:
            set_requires_grad(t, True)
        self._objects[rec["id"]] = (key, t)
        return t

    def flat(self):
        """Every tensor of the file by name (a safetensors file from another library)."""
        return {name: self.tensor({"id": i, "key": name})
                for i, name in enumerate(self._entries)}

    def _read(self, entry):
        if entry.begin == entry.end:    # NumPy gives empty arrays 0 strides: build it here
            return empty(entry.shape, dtype=_dtypes._dtype_by_name[DTYPES[entry.dtype][0]])
        t = from_numpy(entry.array(self._data))
        return t.view(_dtypes.bfloat16) if entry.dtype == "BF16" else t

    def _meta(self, rec):
        dtype, shape = rec.get("dtype"), rec.get("shape")
        valid_shape = isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)
        if not (isinstance(dtype, str) and dtype in ST_NAME and valid_shape):
            raise CorruptCheckpoint(f"invalid meta tensor record {rec!r}")
        return empty(shape, dtype=_dtypes._dtype_by_name[dtype], device="meta")
