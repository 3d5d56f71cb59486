"""default_collate / default_convert: how a DataLoader turns samples into a batch."""
import collections.abc
import copy
import re

import numpy as np

import ember

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

_STR_OR_OBJECT = re.compile(r"[SaUO]")     # numpy dtype kinds a tensor cannot hold
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _rebuild(sample, values):
    """``values`` (a list) in the container type of ``sample``, as PyTorch rebuilds it:
    mutable containers are copied and refilled, others rebuilt, a plain list otherwise."""
    try:
        if isinstance(sample, collections.abc.MutableSequence):
            out = copy.copy(sample)
            for i, v in enumerate(values):
                out[i] = v
            return out
        return type(sample)(values)
    except TypeError:
        return list(values)


def _rebuild_mapping(sample, values):
    try:
        if isinstance(sample, collections.abc.MutableMapping):
            out = copy.copy(sample)
            out.update(values)
            return out
        return type(sample)(values)
    except TypeError:
        return dict(values)


def default_convert(data):
    """Convert NumPy arrays and scalars inside ``data`` (recursively through mappings,
    namedtuples and sequences) to tensors; what the DataLoader uses without batching."""
    kind = type(data)
    if isinstance(data, ember.Tensor):
        return data
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if isinstance(data, np.ndarray) and _STR_OR_OBJECT.search(data.dtype.str):
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data


def _collate_tensors(batch, *, collate_fn_map=None):
    return ember.stack(batch, 0)


def _collate_numpy_arrays(batch, *, collate_fn_map=None):
    if _STR_OR_OBJECT.search(batch[0].dtype.str):
        raise TypeError(_ERR.format(batch[0].dtype))
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _collate_numpy_scalars(batch, *, collate_fn_map=None):
    return ember.as_tensor(np.array(batch))


def _collate_floats(batch, *, collate_fn_map=None):
    return ember.tensor(batch, dtype=ember.float64)


def _collate_ints(batch, *, collate_fn_map=None):
    return ember.tensor(batch)


def _collate_strings(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    ember.Tensor: _collate_tensors,
    np.ndarray: _collate_numpy_arrays,
    (np.bool_, np.number, np.object_): _collate_numpy_scalars,
    float: _collate_floats,
    int: _collate_ints,
    str: _collate_strings,
    bytes: _collate_strings,
}


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples, dispatching on the first sample's type through
    ``collate_fn_map`` (exact type first, then ``isinstance``) and recursing into
    mappings, namedtuples and sequences."""
    elem = batch[0]
    kind = type(elem)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: collate([d[k] for d in batch],
                                                  collate_fn_map=collate_fn_map)
                                       for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return kind(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        ember._check(all(len(e) == size for e in batch),
                     "each element in list of batch should be of equal size")
        # each column as zip gives it, a tuple: strings come back as that tuple (PyTorch's)
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild(elem, columns)
    raise TypeError(_ERR.format(kind))


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked along a new first
    dimension, NumPy arrays and scalars become tensors, Python ints/floats become int64/
    float64 tensors, strings stay lists, and mappings, namedtuples, tuples and lists are
    collated field by field (tuples come back as lists, as in PyTorch)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
