"""ember's own checkpoint format before PyTorch's zip (``ember.save(..., format="safetensors")``).

Every such checkpoint is a standard safetensors file (any safetensors reader sees its
tensors); its ``__metadata__`` says how to rebuild the saved object:

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
import json
import pickle

from ember.serialization import _container, _pickling, _tree
from ember.serialization._allowlist import REFUSED
from ember.serialization._container import CorruptCheckpoint
from ember.serialization._tensors import Loader, Saver, registered_class

__all__ = ["load_safetensors", "save_safetensors"]

_FORMAT, _VERSION = "ember.format", "ember.format_version"
_STRUCTURE, _PICKLE = "ember.structure", "ember.pickle"


def save_safetensors(obj, pickle_protocol):
    """``write(fh)`` writing ``obj`` as an ember safetensors checkpoint."""
    saver = Saver()
    try:
        metadata = {_FORMAT: "tree", _VERSION: "1", _STRUCTURE: json.dumps(
            _tree.encode(obj, saver), separators=(",", ":"), allow_nan=False)}
    except _tree.NotATree:
        saver = Saver()
        stream = _pickling.dumps(obj, saver, pickle_protocol)
        metadata = {_FORMAT: "pickle", _VERSION: "1",
                    _PICKLE: base64.b64encode(stream).decode("ascii")}
    return lambda fh: _container.write(fh, saver.arrays, metadata)


def load_safetensors(f, map_location, weights_only, source, pickle_load_args, mmap_path=None,
                     file_size=None):
    """The object in the safetensors checkpoint ``f`` (read from its current position)."""
    metadata, entries, data = _container.read(f, mmap_path, file_size)
    fmt = metadata.get(_FORMAT)
    if fmt == "pickle":
        resolve = _pickling.tensor_class_resolver(weights_only, source)
    else:
        resolve = _registered_only
    loader = Loader(entries, data, map_location, resolve)
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
    except pickle.UnpicklingError as e:
        if str(e).startswith(REFUSED):
            raise
        raise CorruptCheckpoint(f"the pickle stream is corrupt ({e})") from None


def _registered_only(name):
    cls = registered_class(name, load_module=True) if isinstance(name, str) else None
    if cls is None:
        raise CorruptCheckpoint(f"unknown tensor type {name!r} (register it with "
                                f"ember.serialization.register_tensor_subclass)")
    return cls
