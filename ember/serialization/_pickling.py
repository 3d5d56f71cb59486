"""Arbitrary objects: a pickle stream whose tensors live in the safetensors section.

The pickler replaces every tensor by a persistent id holding its record (see _tensors.py),
so the stream itself carries no tensor data. With ``weights_only=True`` the unpickler's
``find_class`` is the only door to code and it opens for allow-listed globals alone: a few
harmless builtins and containers, ember's dtype/device/Size, and whatever the user adds with
``add_safe_globals``. Anything else raises pickle.UnpicklingError before it is imported.
"""
import _compat_pickle
import codecs
import collections
import importlib
import io
import pickle

from ember.core import _dtype as _dtypes
from ember.core._device import device as _device
from ember.core._size import Size
from ember.core._tensor import TensorBase
from ember.core.tensor import Tensor
from ember.serialization._tensors import registered_class

__all__ = ["add_safe_globals", "clear_safe_globals", "dumps", "get_safe_globals", "loads",
           "safe_globals"]

_PID = "ember.tensor"
_user_globals = []          # what add_safe_globals was given, in order
_builtin_globals = None     # "module.name" -> object, built on first use


def _builtin_safe():
    global _builtin_globals
    if _builtin_globals is None:
        table = {_name_of(obj): obj for obj in (
            collections.OrderedDict, collections.Counter, set, frozenset, complex, bytearray,
            slice, range, Size, _device, Tensor)}
        table["_codecs.encode"] = codecs.encode      # how protocol 2 pickles bytes
        table["ember.Tensor"] = Tensor
        for name, d in _dtypes._dtype_by_name.items():       # dtypes pickle as module globals
            if getattr(_dtypes, name, None) is d:
                table[f"ember.core._dtype.{name}"] = d
                table[f"ember.{name}"] = d      # ember.dtype's module, as torch.float32
        _builtin_globals = table
    return _builtin_globals


def _name_of(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def _entry(g, where):
    """(object, "module.name") of one add_safe_globals entry: an object or (object, name)."""
    if isinstance(g, tuple):
        if len(g) != 2 or not isinstance(g[1], str):
            raise TypeError(f"{where}: a tuple entry must be (object, 'module.name'), got {g!r}")
        return g
    if not (hasattr(g, "__module__") and hasattr(g, "__qualname__")):
        raise TypeError(f"{where}: expected classes or functions (or (object, 'module.name') "
                        f"tuples), got {g!r}")
    return g, _name_of(g)


def add_safe_globals(safe_globals):
    """Allow-list ``safe_globals`` (classes or functions, or ``(obj, "module.name")`` tuples)
    for ``ember.load(weights_only=True)``. Only add what you trust: loading may call them."""
    if not isinstance(safe_globals, list):
        raise TypeError(f"add_safe_globals(): safe_globals must be a list, not "
                        f"{type(safe_globals).__name__}")
    for g in safe_globals:
        _entry(g, "add_safe_globals()")
    _user_globals.extend(safe_globals)


def get_safe_globals():
    """The globals added with ``add_safe_globals`` (not the built-in ones), in order."""
    return list(_user_globals)


def clear_safe_globals():
    """Forget every global added with ``add_safe_globals``."""
    _user_globals.clear()


class safe_globals:
    """Context manager: ``safe_globals`` are allow-listed inside the ``with`` block only."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = list(_user_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _user_globals[:] = self._saved
        return False


def _lookup(full_name):
    for g in reversed(_user_globals):
        obj, name = _entry(g, "safe globals")
        if name == full_name:
            return obj
    return _builtin_safe().get(full_name)


def refusal(full_name, source):
    short = full_name.rpartition(".")[2]
    return pickle.UnpicklingError(
        f"Weights only load failed: {source} needs the global '{full_name}', which is not "
        f"allow-listed for weights_only=True. (1) If you trust this class or function, allow "
        f"it with `ember.serialization.add_safe_globals([{short}])` or inside `with "
        f"ember.serialization.safe_globals([{short}]):`. (2) If you trust the whole file, "
        f"load it with `weights_only=False` -- that can run arbitrary code, so only do it for "
        f"files from a trusted source.")


# saving ------------------------------------------------------------------------------------

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


# loading -----------------------------------------------------------------------------------

class _Unpickler(pickle.Unpickler):
    def __init__(self, file, loader, weights_only, source, **kwargs):
        super().__init__(file, **kwargs)
        self._loader, self._weights_only, self._source = loader, weights_only, source

    def find_class(self, module, name):
        if not self._weights_only:
            return super().find_class(module, name)
        # protocol 0-2 streams name Python 2 modules (__builtin__.set): map them as pickle does
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        obj = _lookup(f"{module}.{name}")
        if obj is None:
            raise refusal(f"{module}.{name}", self._source)
        return obj

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == _PID):
            raise pickle.UnpicklingError(f"{self._source}: unsupported persistent id {pid!r}")
        return self._loader.tensor(pid[1])


def tensor_class_resolver(weights_only, source):
    """For a pickle checkpoint: the Tensor subclass a record names. Registered subclasses
    always load; others need the allow-list (weights_only) or are imported (trusted file)."""
    def resolve(name):
        if not isinstance(name, str):
            raise pickle.UnpicklingError(f"{source}: invalid tensor type {name!r}")
        cls = registered_class(name, load_module=True)
        if cls is None:
            if weights_only:
                cls = _lookup(name)
                if cls is None:
                    raise refusal(name, source)
            else:
                module, _, qualname = name.rpartition(".")
                cls = importlib.import_module(module)
                for part in qualname.split("."):
                    cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, TensorBase)):
            raise pickle.UnpicklingError(f"{source}: '{name}' is not a Tensor subclass")
        return cls
    return resolve


def loads(data, loader, weights_only, source, **pickle_load_args):
    """Unpickle ``data``, taking tensors from ``loader``."""
    return _Unpickler(io.BytesIO(data), loader, weights_only, source,
                      **pickle_load_args).load()
