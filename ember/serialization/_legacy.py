"""PyTorch's legacy checkpoint format (``torch.save(..., _use_new_zipfile_serialization=False)``,
the default before PyTorch 1.6): pickles and raw storages back to back in one stream.

    pickle(MAGIC_NUMBER)  pickle(PROTOCOL_VERSION)  pickle(sys_info)
    pickle(obj)           -- storages by persistent id ("storage", type, key, location,
                             numel, view_metadata)
    pickle(sorted storage keys)
    for each key: numel as a little-endian int64, then the storage's bytes

The storages' bytes follow the pickle that uses them, so loading runs the pickle twice: a dry
run that builds nothing -- every global, call and state it meets becomes a placeholder -- to
learn the storages' types and sizes, then, once they are read and placed, the real one.
"""
import inspect
import pickle
import struct
import sys
import warnings

from ember.serialization import _rebuild
from ember.serialization._container import CorruptCheckpoint, _read_exact
from ember.serialization._options import SourceChangeWarning
from ember.serialization._rebuild import _STORAGE_DTYPES, LoadedStorage, StorageType
from ember.serialization._torch_load import as_str, byteswap, parse_pid, storage_loader
from ember.serialization._unpickler import load_pickle

__all__ = ["MAGIC_NUMBER", "PROTOCOL_VERSION", "is_legacy", "is_tar", "load_legacy",
           "save_legacy"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_MAGIC = MAGIC_NUMBER.to_bytes(10, "little")


def is_legacy(head):
    """Whether a file starting with ``head`` is a legacy checkpoint (its magic number pickle)."""
    return head[:1] == b"\x80" and _MAGIC in head[:32]


def is_tar(head):
    return head[257:262] == b"ustar"


class _Placeholder:
    """What the dry run pushes for anything it must not build."""


_ANY = _Placeholder()


class _DryRun(pickle._Unpickler):
    """Walks a pickle, building nothing but containers of placeholders, to collect the
    storages' persistent ids."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file):
        super().__init__(file, encoding="latin-1")
        self.storages = {}      # key -> (dtype, numel)

    def find_class(self, module, name):
        return StorageType(name) if name in _STORAGE_DTYPES else _ANY

    def persistent_load(self, pid):
        if type(pid) is tuple and len(pid) == 6 and pid[0] in ("storage", b"storage"):
            storage_type, key, _, numel, _ = parse_pid(pid, 5)
            self.storages.setdefault(key, (storage_type.dtype, numel))
        return _ANY

    def _pop(n, push):
        def op(self):
            del self.stack[len(self.stack) - n:]
            if push:
                self.append(_ANY)
        return op

    def _pop_mark(push):
        def op(self):
            self.pop_mark()
            if push:
                self.append(_ANY)
        return op

    def _inst(self):
        self.readline()
        self.readline()
        self.pop_mark()
        self.append(_ANY)

    def _ext(n):
        def op(self):
            self.read(n)
            self.append(_ANY)
        return op

    for _op, _fn in (("REDUCE", _pop(2, True)), ("NEWOBJ", _pop(2, True)),
                     ("NEWOBJ_EX", _pop(3, True)), ("BUILD", _pop(1, False)),
                     ("APPEND", _pop(1, False)), ("SETITEM", _pop(2, False)),
                     ("APPENDS", _pop_mark(False)), ("SETITEMS", _pop_mark(False)),
                     ("ADDITEMS", _pop_mark(False)), ("OBJ", _pop_mark(True)), ("INST", _inst),
                     ("EXT1", _ext(1)), ("EXT2", _ext(2)), ("EXT4", _ext(4))):
        dispatch[getattr(pickle, _op)[0]] = _fn
    del _op, _fn, _pop, _pop_mark, _inst, _ext


def _small_pickle(f, weights_only, source, pickle_module, args):
    return load_pickle(f, _no_pid, weights_only, source, pickle_module, **args)


def _no_pid(pid):
    raise pickle.UnpicklingError(f"unexpected persistent id {pid!r:.80}")


def _check_source(cls, source_file, original_source):
    """Warn (SourceChangeWarning) when a pickled module class's source changed since saving."""
    try:
        current = inspect.getsource(cls)
    except (OSError, TypeError):
        return
    if current != original_source:
        warnings.warn(f"source code of class '{cls.__module__}.{cls.__qualname__}' has changed "
                      f"since the checkpoint was saved", SourceChangeWarning, stacklevel=4)


def load_legacy(f, source, map_location, weights_only, pickle_module, args):
    """The object in the legacy checkpoint ``f`` (read from its current position)."""
    if _small_pickle(f, weights_only, source, pickle_module, args) != MAGIC_NUMBER:
        raise CorruptCheckpoint("Invalid magic number; corrupt file?")
    version = _small_pickle(f, weights_only, source, pickle_module, args)
    if version != PROTOCOL_VERSION:
        raise CorruptCheckpoint(f"Invalid protocol version: {version}")
    sys_info = _small_pickle(f, weights_only, source, pickle_module, args)
    swap = isinstance(sys_info, dict) and sys_info.get("little_endian") is False \
        and sys.byteorder == "little"
    start = f.tell()
    dry = _DryRun(f)
    try:
        dry.load()
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError,
            struct.error, UnicodeDecodeError) as e:
        raise CorruptCheckpoint(f"the pickled object is corrupt ({type(e).__name__}: {e})") \
            from None
    keys = _small_pickle(f, weights_only, source, pickle_module, args)
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise CorruptCheckpoint("the list of storage keys is damaged")
    buffers = {}
    for key in keys:
        if key not in dry.storages:
            raise CorruptCheckpoint(f"storage key {key!r} not found in the pickled object")
        dtype, numel = dry.storages[key]
        _rebuild.check_dtype(dtype, f"storage '{key}'")
        head = _read_exact(f, 8, f"the size of storage '{key}'")
        saved = int.from_bytes(head.tobytes(), "little")
        if saved != numel:
            raise CorruptCheckpoint(f"storage has wrong byte size: storage '{key}' holds "
                                    f"{saved} elements, its pickle says {numel}")
        buf = _read_exact(f, numel * dtype.itemsize, f"storage '{key}'")
        buffers[key] = byteswap(buf, dtype) if swap else buf
    end = f.tell()
    missing = set(dry.storages) - set(buffers)
    if missing:
        raise CorruptCheckpoint(f"the data of storage {sorted(missing)[0]!r} is missing")
    load = storage_loader(lambda key, nbytes, check_only=False: buffers.get(key),
                          map_location, False)
    views = {}

    def persistent_load(pid):
        if not weights_only and type(pid) is tuple and len(pid) == 4 and \
                as_str(pid[0]) == "module":
            if all(pid[2:]) and not pid[1].__module__.startswith("ember."):
                _check_source(*pid[1:])
            return pid[1]
        storage_type, key, location, numel, view = parse_pid(pid, 5)
        dtype = storage_type.dtype
        root = load(key, dtype, location, numel * dtype.itemsize)
        if view is None:
            return root
        view_key, offset, size = view
        if view_key not in views:
            size_bytes = dtype.itemsize
            begin, stop = offset * size_bytes, (offset + size) * size_bytes
            if not (0 <= begin <= stop <= root.nbytes()):
                raise CorruptCheckpoint(f"storage view {view_key!r} lies outside its storage")
            views[view_key] = LoadedStorage(view_key, root.flat[begin:stop], dtype)
        return views[view_key]

    f.seek(start)
    with _rebuild.restoring(load.restore):
        result = load_pickle(f, persistent_load, weights_only, source, pickle_module, **args)
    f.seek(end)
    return result


def save_legacy(obj, f, pickle_module, pickle_protocol):
    """Write ``obj`` to ``f`` in the legacy format."""
    from ember.serialization._torch_save import pickle_with_storages
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 8}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, f, protocol=pickle_protocol)
    data, storages = pickle_with_storages(obj, pickle_module, pickle_protocol, legacy=True)
    f.write(data)
    refs = sorted(storages.refs.values(), key=lambda r: r.key)
    pickle.dump([r.key for r in refs], f, protocol=pickle_protocol)
    for ref in refs:
        f.write(ref.numel.to_bytes(8, "little"))
        if ref.nbytes:
            f.write(memoryview(ref.host_bytes()))
