"""ember's safetensors checkpoints, pickle flavour: a pickle stream whose tensors live in the
safetensors section.

The pickler replaces every tensor by a persistent id holding its record (see _tensors.py),
so the stream itself carries no tensor data. Loading goes through the unpicklers of
_unpickler.py: with ``weights_only=True`` only allow-listed globals resolve.
"""
import importlib
import io
import pickle

from ember.core._tensor import TensorBase
from ember.serialization import _allowlist
from ember.serialization._tensors import registered_class
from ember.serialization._unpickler import load_pickle

__all__ = ["dumps", "loads", "tensor_class_resolver"]

_PID = "ember.tensor"


class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol, saver):
        super().__init__(file, protocol)
        self._saver = saver

    def persistent_id(self, obj):
        if isinstance(obj, TensorBase):
            return (_PID, self._saver.record(obj))
        return None


def dumps(obj, saver, protocol):
    """The pickle stream of ``obj`` with its tensors recorded in ``saver``."""
    buf = io.BytesIO()
    _Pickler(buf, protocol, saver).dump(obj)
    return buf.getvalue()


def tensor_class_resolver(weights_only, source):
    """For a pickle checkpoint: the Tensor subclass a record names. Registered subclasses
    always load; others need the allow-list (weights_only) or are imported (trusted file)."""
    def resolve(name):
        if not isinstance(name, str):
            raise pickle.UnpicklingError(f"{source}: invalid tensor type {name!r}")
        cls = registered_class(name, load_module=True)
        if cls is None:
            module, _, qualname = name.rpartition(".")
            if weights_only:
                try:
                    cls = _allowlist.weights_only_lookup(module, qualname)
                except pickle.UnpicklingError as e:
                    raise pickle.UnpicklingError(
                        _allowlist.weights_only_message(str(e), source)) from None
            else:
                cls = importlib.import_module(module)
                for part in qualname.split("."):
                    cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, TensorBase)):
            raise pickle.UnpicklingError(f"{source}: '{name}' is not a Tensor subclass")
        return cls
    return resolve


def loads(data, loader, weights_only, source, **pickle_load_args):
    """Unpickle ``data``, taking tensors from ``loader``."""
    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == _PID):
            raise pickle.UnpicklingError(f"{source}: unsupported persistent id {pid!r}")
        return loader.tensor(pid[1])
    return load_pickle(data, persistent_load, weights_only, source, **pickle_load_args)
