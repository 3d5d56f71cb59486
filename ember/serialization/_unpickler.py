"""Unpicklers for checkpoints: the restricted one of ``weights_only=True`` and the full one.

The weights_only unpickler is the standard library's pure-Python unpickler with every opcode
that can reach code narrowed to PyTorch's rules: GLOBAL/STACK_GLOBAL resolve allow-listed
names only (see _allowlist.py); REDUCE calls, NEWOBJ/INST/OBJ instantiate and BUILD sets state
only on allow-listed callables and classes (and OrderedDict, Parameter); APPEND(S) targets
lists, SETITEM(S) dicts, ADDITEMS sets only; the copyreg extension opcodes are refused. So a
malicious pickle (``os.system`` in ``__reduce__``, ``builtins.eval``...) stops at the name,
before anything is imported or called. The full unpickler (``weights_only=False``) is the
caller's ``pickle_module.Unpickler`` resolving ``torch.*`` names to ember's objects.

Both take tensors' storages through ``persistent_load``; its errors (a bad storage record, a
``map_location`` that raised) pass through unchanged, but for a refused persistent id.
"""
import collections
import io
import pickle
import struct

from ember.core.tensor import Tensor
from ember.serialization import _allowlist
from ember.serialization._rebuild import _STORAGE_DTYPES, StorageType

__all__ = ["globals_in_pickle", "load_pickle"]

_OP = {name: getattr(pickle, name)[0] for name in (
    "REDUCE", "NEWOBJ", "NEWOBJ_EX", "BUILD", "APPEND", "APPENDS", "SETITEM", "SETITEMS",
    "ADDITEMS", "EXT1", "EXT2", "EXT4")}
_DICTS = (dict, collections.OrderedDict, collections.Counter)
_SET_WHAT = "{} for dict, collections.OrderedDict, collections.Counter"
# what an unpickler raises on a truncated or garbled stream
_STREAM_ERRORS = (EOFError, struct.error, KeyError, IndexError, UnicodeDecodeError, ValueError,
                  TypeError, AttributeError, OverflowError)


class _Passthrough(Exception):
    """Carries an error of persistent_load out of the unpickler unchanged."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class _WeightsOnlyUnpickler(pickle._Unpickler):
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent = persistent_load
        self._allowed, self._keep = _allowlist.allowed_objects()
        from ember.nn.parameter import Parameter
        self._parameter = Parameter

    def find_class(self, module, name):
        module, name = _allowlist.fix_name(module, name, self.proto if self.fix_imports else 3)
        return _allowlist.weights_only_lookup(module, name)

    def persistent_load(self, pid):
        try:
            return self._persistent(pid)
        except pickle.UnpicklingError:
            raise
        except Exception as e:
            raise _Passthrough(e) from e

    def _check(self, obj):
        if id(obj) not in self._allowed:
            raise pickle.UnpicklingError(f"Trying to call reduce for unrecognized function {obj!r}")

    def _reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        self._check(func)
        self.stack[-1] = func(*args)
    dispatch[_OP["REDUCE"]] = _reduce

    def _new(self, cls, args, kwargs):
        if cls is self._parameter:
            return cls(*args, **kwargs)
        if not (isinstance(cls, type) and id(cls) in self._allowed):
            raise pickle.UnpicklingError(f"Can only create new object for nn.Parameter or classes "
                                         f"allowlisted via `add_safe_globals` but got {cls!r}")
        return cls.__new__(cls, *args, **kwargs)

    def _newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))
    dispatch[_OP["NEWOBJ"]] = _newobj

    def _newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, kwargs))
    dispatch[_OP["NEWOBJ_EX"]] = _newobj_ex

    def _instantiate(self, klass, args):         # INST and OBJ (protocols 0 and 1)
        self._check(klass)
        super()._instantiate(klass, args)

    def _build(self):
        cls = type(self.stack[-2])
        if cls is Tensor:
            raise pickle.UnpicklingError("Can not build a Tensor from a legacy Tensor state")
        if not (cls is collections.OrderedDict or cls is self._parameter
                or id(cls) in self._allowed):
            raise pickle.UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types "
                                         f"allowlisted via `add_safe_globals`, but got {cls}")
        pickle._Unpickler.load_build(self)
    dispatch[_OP["BUILD"]] = _build

    def _require(self, obj, kinds, what):
        if type(obj) not in kinds:
            raise pickle.UnpicklingError(f"Can only {what}, but got {type(obj)}")

    def _append(self):
        self._require(self.stack[-2], (list,), "append to lists")
        pickle._Unpickler.load_append(self)
    dispatch[_OP["APPEND"]] = _append

    def _appends(self):
        self._require(self.metastack[-1][-1], (list,), "extend lists")
        pickle._Unpickler.load_appends(self)
    dispatch[_OP["APPENDS"]] = _appends

    def _setitem(self):
        self._require(self.stack[-3], _DICTS, _SET_WHAT.format("SETITEM"))
        pickle._Unpickler.load_setitem(self)
    dispatch[_OP["SETITEM"]] = _setitem

    def _setitems(self):
        self._require(self.metastack[-1][-1], _DICTS, _SET_WHAT.format("SETITEMS"))
        pickle._Unpickler.load_setitems(self)
    dispatch[_OP["SETITEMS"]] = _setitems

    def _additems(self):
        self._require(self.metastack[-1][-1], (set,), "add items to sets")
        pickle._Unpickler.load_additems(self)
    dispatch[_OP["ADDITEMS"]] = _additems

    def _extension(self):
        raise pickle.UnpicklingError("Unsupported operand: the copyreg extension opcodes (EXT1, "
                                     "EXT2, EXT4) are not allowed")
    dispatch.update(dict.fromkeys((_OP["EXT1"], _OP["EXT2"], _OP["EXT4"]), _extension))


def _full_unpickler(base):
    class _FullUnpickler(base):
        def find_class(self, module, name):
            if type(name) is str and name in _STORAGE_DTYPES:     # as torch: any module
                return StorageType(name)
            fixed, _ = _allowlist.fix_name(module, name, 3)
            obj = _allowlist.registered_lookup(f"{fixed}.{name}") or \
                _allowlist.full_lookup(fixed, name)
            return obj if obj is not None else super().find_class(module, name)

    return _FullUnpickler


def load_pickle(data, persistent_load, weights_only, source, pickle_module=None,
                **pickle_load_args):
    """Unpickle ``data`` (bytes, or a binary file object read up to the pickle's end), taking
    storages from ``persistent_load(pid)``."""
    file = data if hasattr(data, "read") else io.BytesIO(data)
    if not weights_only:
        module = pickle_module if pickle_module is not None else pickle
        unpickler = _full_unpickler(module.Unpickler)(file, **pickle_load_args)
        unpickler.persistent_load = persistent_load
        try:
            return unpickler.load()
        except EOFError:
            raise pickle.UnpicklingError(f"ember.load: the pickled data of {source} is "
                                         f"truncated") from None
    try:
        return _WeightsOnlyUnpickler(file, persistent_load, **pickle_load_args).load()
    except _Passthrough as p:
        raise p.error from None
    except pickle.UnpicklingError as e:
        if str(e).startswith(_allowlist.REFUSED):
            raise
        raise pickle.UnpicklingError(_allowlist.weights_only_message(str(e), source)) from None
    except _STREAM_ERRORS as e:
        raise pickle.UnpicklingError(f"ember.load: the pickled data of {source} is corrupt "
                                     f"({type(e).__name__}: {e})") from None


def globals_in_pickle(data):
    """The "module.name" of every GLOBAL and STACK_GLOBAL in the pickle ``data``, read without
    running it (STACK_GLOBAL's two strings are followed through the memo)."""
    import pickletools
    found, memo, pushed = set(), {}, [None, None]     # pushed: the last two values (str or None)
    try:
        for op, arg, _ in pickletools.genops(data):
            name = op.name
            if name == "GLOBAL":
                found.add(".".join(_allowlist.fix_name(*arg.split(" ", 1))))
            elif name == "STACK_GLOBAL" and all(isinstance(p, str) for p in pushed):
                found.add(".".join(_allowlist.fix_name(*pushed, 4)))
            if name == "MEMOIZE":
                memo[len(memo)] = pushed[-1]
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = pushed[-1]
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                pushed = [pushed[-1], memo.get(arg)]
            elif name not in ("FRAME", "PROTO", "STOP", "MARK", "POP", "POP_MARK"):
                pushed = [pushed[-1], arg if "UNICODE" in name else None]
    except ValueError as e:
        raise pickle.UnpicklingError(f"the pickled data is corrupt ({e})") from None
    return found
