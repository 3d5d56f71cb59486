"""The JSON structure of a tensor tree (the checkpoint's ``ember.structure`` metadata).

A node is a JSON value: ``null``, booleans, strings, integers in int64 range and finite
floats stand for themselves; everything else is an object with one tag key:

  {"tensor": record}                 a tensor (record: see _tensors.py)
  {"int": "0x..."}                   an integer outside int64 (hex: no digit limit)
  {"float": "inf" | "-inf" | "nan"}
  {"list": [node, ...]}   {"tuple": [node, ...]}
  {"dict": {str: node, ...}}         a dict with string keys, in order
  {"items": [[node, node], ...]}     a dict with other keys (ints in optimizer states)
      either dict form may add "ordered": true (an OrderedDict) and "metadata": node (its
      ``_metadata`` attribute, which Module.state_dict sets)
  {"size": [int, ...]}   {"dtype": "float32"}   {"device": "cpu"}   {"bytes": "<base64>"}

Decoding builds containers and tensors only: it never imports or calls anything the file
names. A tree is anything built from exactly these types; ``encode`` raises NotATree on
anything else (a set, a Module, a dict subclass, a list that appears twice) so the caller
pickles the object instead.
"""
import base64
import binascii
import math
from collections import OrderedDict

from ember.core import _dtype as _dtypes
from ember.core._device import device as _device
from ember.core._size import Size
from ember.core._tensor import TensorBase
from ember.core.tensor import Tensor
from ember.serialization._container import CorruptCheckpoint
from ember.serialization._tensors import registered_name

__all__ = ["NotATree", "decode", "encode"]

_INT64 = 1 << 63


class NotATree(Exception):
    """The object holds something the JSON structure cannot express."""


def encode(obj, saver):
    """The JSON-able structure of ``obj``, registering its tensors with ``saver``."""
    return _Encoder(saver).node(obj, "")


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


class _Encoder:
    def __init__(self, saver):
        self.saver = saver
        self.containers = set()     # ids of mutable containers met: each may appear once

    def node(self, x, path):
        t = type(x)
        if x is None or t is str or t is bool:
            return x
        if t is int:
            return x if -_INT64 <= x < _INT64 else {"int": hex(x)}
        if t is float:
            return x if math.isfinite(x) else {"float": repr(x)}
        if isinstance(x, TensorBase):
            if t is not Tensor and registered_name(t) is None:
                raise NotATree
            return {"tensor": self.saver.record(x, path or "tensor")}
        if t is tuple:
            return {"tuple": [self.node(v, _join(path, i)) for i, v in enumerate(x)]}
        if t is Size:
            return {"size": list(x)}
        if t is _dtypes.dtype:
            return {"dtype": x.name}
        if t is _device:
            return {"device": str(x)}
        if t is bytes:
            return {"bytes": base64.b64encode(x).decode("ascii")}
        if t is not list and t is not dict and t is not OrderedDict:
            raise NotATree
        if id(x) in self.containers:        # shared or cyclic: pickle keeps the identity
            raise NotATree
        self.containers.add(id(x))
        if t is list:
            return {"list": [self.node(v, _join(path, i)) for i, v in enumerate(x)]}
        return self._dict(x, path)

    def _dict(self, x, path):
        attrs = vars(x) if type(x) is OrderedDict else {}
        if set(attrs) - {"_metadata"}:
            raise NotATree
        if all(type(k) is str for k in x):
            out = {"dict": {k: self.node(v, _join(path, k)) for k, v in x.items()}}
        else:
            out = {"items": [[self.node(k, _join(path, "key")), self.node(v, _join(path, k))]
                             for k, v in x.items()]}
        if type(x) is OrderedDict:
            out["ordered"] = True
            if "_metadata" in attrs:
                out["metadata"] = self.node(attrs["_metadata"], _join(path, "_metadata"))
        return out


def decode(node, loader):
    """The object the structure ``node`` describes; tensors come from ``loader``."""
    try:
        return _decode(node, loader)
    except RecursionError:
        raise CorruptCheckpoint("the structure is nested too deeply") from None


_SCALARS = (str, bool, int, float)
_KEYS = {"dict": {"dict", "ordered", "metadata"}, "items": {"items", "ordered", "metadata"}}


def _decode(node, loader):
    if node is None or type(node) in _SCALARS:
        return node
    if type(node) is not dict or not node:
        raise CorruptCheckpoint(f"invalid structure node {_short(node)}")
    tag = next(iter(node))
    if set(node) - _KEYS.get(tag, {tag}):
        raise CorruptCheckpoint(f"invalid structure node {_short(node)}")
    value = node[tag]
    if tag == "tensor":     # errors of map_location and placement are the caller's own
        return loader.tensor(value)
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise CorruptCheckpoint(f"unknown structure node '{tag}'")
    try:
        out = decoder(value, loader)
    except (TypeError, ValueError, KeyError, binascii.Error) as e:
        if isinstance(e, CorruptCheckpoint):
            raise
        raise CorruptCheckpoint(f"invalid '{tag}' node {_short(node)} ({e})") from None
    if tag in _KEYS:
        out = _finish_dict(out, node, loader)
    return out


def _short(node):
    text = repr(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _list(value, loader):
    if type(value) is not list:
        raise TypeError("expected a list")
    return [_decode(v, loader) for v in value]


def _items(value, loader):
    if type(value) is not list or not all(type(p) is list and len(p) == 2 for p in value):
        raise TypeError("expected a list of [key, value] pairs")
    return [(_decode(k, loader), _decode(v, loader)) for k, v in value]


def _str_dict(value, loader):
    if type(value) is not dict:
        raise TypeError("expected an object")
    return [(k, _decode(v, loader)) for k, v in value.items()]


def _finish_dict(pairs, node, loader):
    ordered = node.get("ordered", False)
    if type(ordered) is not bool:
        raise CorruptCheckpoint(f"invalid 'ordered' flag {ordered!r}")
    try:
        out = OrderedDict(pairs) if ordered else dict(pairs)
    except TypeError as e:                  # an unhashable key
        raise CorruptCheckpoint(f"invalid dict key ({e})") from None
    if "metadata" in node:
        if not ordered:
            raise CorruptCheckpoint("only an ordered dict may carry metadata")
        out._metadata = _decode(node["metadata"], loader)
    return out


def _size(value, loader):
    if type(value) is not list or not all(type(s) is int for s in value):
        raise TypeError("expected a list of ints")
    return Size(value)


def _float(value, loader):
    if value not in ("inf", "-inf", "nan"):
        raise ValueError("expected 'inf', '-inf' or 'nan'")
    return float(value)


def _int(value, loader):
    if type(value) is not str:
        raise TypeError("expected a hex string")
    return int(value, 16)


def _dtype(value, loader):
    if value not in _dtypes._dtype_by_name:
        raise ValueError("unknown dtype")
    return _dtypes._dtype_by_name[value]


def _device_node(value, loader):
    if type(value) is not str:
        raise TypeError("expected a string")
    try:
        return _device(value)
    except RuntimeError as e:
        raise ValueError(str(e)) from None


def _bytes(value, loader):
    if type(value) is not str:
        raise TypeError("expected a base64 string")
    return base64.b64decode(value, validate=True)


_DECODERS = {
    "int": _int, "float": _float,
    "list": _list, "tuple": lambda value, loader: tuple(_list(value, loader)),
    "dict": _str_dict, "items": _items,
    "size": _size, "dtype": _dtype, "device": _device_node, "bytes": _bytes,
}
