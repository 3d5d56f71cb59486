"""Checkpoints: ``ember.save`` / ``ember.load``, PyTorch's ``torch.save`` / ``torch.load``.

Every checkpoint is a standard safetensors file (any safetensors reader sees its tensors);
its ``__metadata__`` says how to rebuild the saved object:

* a **tensor tree** -- tensors, dicts (OrderedDict too, key order kept), lists, tuples,
  int/float/bool/str/None/bytes, ember.Size/dtype/device: a state_dict, an optimizer's
  state_dict -- is stored as a JSON structure (``ember.format = "tree"``, see _tree.py).
  Loading it builds containers and tensors only and never runs code, whatever weights_only.
* **anything else** (a Module, custom classes, sets, shared or cyclic containers) is a pickle
  stream (``ember.format = "pickle"``) with the tensors kept out of the stream; loading it
  with ``weights_only=True`` (the default) admits only allow-listed globals.

A safetensors file written by another library (no ember metadata) loads as a dict of name ->
tensor in the order of the tensors' data offsets. Tensor sharing: see _tensors.py.
"""
import base64
import binascii
import contextlib
import json
import os
import pickle
import secrets

from ember.serialization import _container, _pickling, _tree
from ember.serialization._container import CorruptCheckpoint
from ember.serialization._pickling import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from ember.serialization._tensors import (
    Loader,
    Saver,
    register_tensor_subclass,
    registered_class,
)

__all__ = ["DEFAULT_PROTOCOL", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "load", "register_tensor_subclass", "safe_globals", "save"]

DEFAULT_PROTOCOL = 4        # of the pickle stream (PyTorch's is 2; nested classes need 4)
_FORMAT, _VERSION = "ember.format", "ember.format_version"
_STRUCTURE, _PICKLE = "ember.structure", "ember.pickle"


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL):
    """Save ``obj`` to ``f``: a path (str or os.PathLike) or a writable binary file object
    (written from its current position).

    A tensor tree (a state_dict, an optimizer state_dict, nested dicts/lists/tuples of
    tensors and Python scalars) is saved as safetensors plus a JSON structure; any other
    object is pickled with ``pickle_module`` (the standard ``pickle``) at ``pickle_protocol``,
    its tensors stored beside the stream. Saving to a path is atomic: the file is written
    to a temporary file in the same folder, synced and renamed over ``f``, so a failure
    leaves any previous file intact."""
    if pickle_module is not pickle:
        raise ValueError("ember.save: pickle_module must be the standard pickle module")
    saver = Saver()
    try:
        metadata = {_FORMAT: "tree", _VERSION: "1", _STRUCTURE: json.dumps(
            _tree.encode(obj, saver), separators=(",", ":"), allow_nan=False)}
    except _tree.NotATree:
        saver = Saver()
        stream = _pickling.dumps(obj, saver, pickle_protocol)
        metadata = {_FORMAT: "pickle", _VERSION: "1",
                    _PICKLE: base64.b64encode(stream).decode("ascii")}

    def write(fh):
        _container.write(fh, saver.arrays, metadata)

    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), write)
    elif hasattr(f, "write"):
        write(f)
    else:
        raise TypeError(f"ember.save: f must be a path or a binary file object, not "
                        f"{type(f).__name__}")


def _atomic_write(path, write):
    path = os.path.realpath(path)           # through a symlink, to its target
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):      # make the rename itself durable where possible
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved with ``ember.save`` (or any safetensors file) from ``f``: a path
    or a readable binary file object (read from its current position).

    map_location: where tensors go -- None (the device they were saved on), a device or
    string (``'cpu'``, ``'meta'``), a dict mapping saved locations to new ones
    (``{'cuda:0': 'cpu'}``), or a callable ``fn(tensor, location)`` given each tensor as
    read (on the cpu) and its saved location string, returning a tensor or None (the
    default placement). Tensors that share memory are placed once.

    weights_only (default True): a pickled checkpoint may only use allow-listed globals
    (see ``ember.serialization.add_safe_globals``); others raise pickle.UnpicklingError.
    ``weights_only=False`` unpickles anything, which can run arbitrary code: use it only for
    files you trust. Tensor-tree checkpoints never run code either way.

    mmap: map the file's tensor data (copy-on-write) instead of reading it; ``f`` must be a
    path. ``pickle_load_args`` (e.g. ``encoding``) go to the unpickler.

    A corrupt or truncated file raises RuntimeError naming the file and the problem."""
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_module not in (None, pickle):
        raise ValueError("ember.load: pickle_module must be the standard pickle module")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        source = f"'{path}'"
    elif hasattr(f, "read"):
        if mmap:
            raise ValueError("f must be a file path in order to use the mmap argument")
        name = getattr(f, "name", None)
        source = f"'{name}'" if isinstance(name, str) else f"the {type(f).__name__} object"
    else:
        raise TypeError(f"ember.load: f must be a path or a binary file object, not "
                        f"{type(f).__name__}")
    try:
        if isinstance(f, (str, os.PathLike)):
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                header = _container.read(fh, path if mmap else None, size)
        else:
            header = _container.read(f)
        return _rebuild(header, map_location, weights_only, source, pickle_load_args)
    except CorruptCheckpoint as e:
        raise RuntimeError(f"ember.load: {source} is not a valid checkpoint: {e}") from None


def _rebuild(header, map_location, weights_only, source, pickle_load_args):
    metadata, entries, data = header
    fmt = metadata.get(_FORMAT)
    if fmt == "pickle":
        resolve = _pickling.tensor_class_resolver(weights_only, source)
    else:
        resolve = _registered_only
    loader = Loader(entries, data, map_location, source, resolve)
    if fmt is None:
        return loader.flat()
    if metadata.get(_VERSION) != "1" or fmt not in ("tree", "pickle"):
        raise CorruptCheckpoint(f"unsupported ember checkpoint format {fmt!r} version "
                                f"{metadata.get(_VERSION)!r} (written by a newer ember?)")
    if fmt == "tree":
        try:
            structure = json.loads(metadata.get(_STRUCTURE, ""),
                                   parse_constant=_container.reject_constant)
        except (ValueError, RecursionError) as e:
            raise CorruptCheckpoint(f"the structure metadata is not valid JSON ({e})") from None
        return _tree.decode(structure, loader)
    try:
        stream = base64.b64decode(metadata.get(_PICKLE, ""), validate=True)
    except (binascii.Error, ValueError) as e:
        raise CorruptCheckpoint(f"the pickle metadata is not valid base64 ({e})") from None
    try:
        return _pickling.loads(stream, loader, weights_only, source, **pickle_load_args)
    except (EOFError, pickle.UnpicklingError) as e:
        if isinstance(e, pickle.UnpicklingError) and str(e).startswith("Weights only"):
            raise
        raise CorruptCheckpoint(f"the pickle stream is corrupt ({type(e).__name__}: {e})") \
            from None


def _registered_only(name):
    cls = registered_class(name, load_module=True) if isinstance(name, str) else None
    if cls is None:
        raise CorruptCheckpoint(f"unknown tensor type {name!r} (register it with "
                                f"ember.serialization.register_tensor_subclass)")
    return cls

