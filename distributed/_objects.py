"""Collectives of picklable Python objects, built on the tensor collectives: objects travel
as pickled bytes (sizes first, then the padded bytes).  As in PyTorch, unpickling runs code
the sending rank chose: use these only between ranks you trust."""
import pickle

import numpy as np

import ember

from . import _collectives as c
from ._launch import group_of
from ._process_group import peer_rank

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list"]


def _tensor(array):
    return ember.from_numpy(np.ascontiguousarray(array))


def _pickled(obj):
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8)


def _padded(payloads, width):
    rows = np.zeros((len(payloads), width), dtype=np.uint8)
    for row, p in zip(rows, payloads):
        row[:len(p)] = p
    return rows


def _unpickle(rows, sizes):
    return [pickle.loads(row[:n].tobytes()) for row, n in zip(rows, sizes)]


def _all_sizes(pg, n):
    """Every rank's ``n`` (an all-gather of one int64)."""
    out = np.empty(pg._size, dtype=np.int64)
    c.all_gather_into_tensor(_tensor(out), _tensor(np.array([n], dtype=np.int64)), group=pg)
    return out


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s items on every rank by those of rank ``src``."""
    pg = group_of(group, "broadcast_object_list")
    if pg is None:
        return
    root = peer_rank(pg, src, group_src, "broadcast_object_list", "src")
    here = pg._rank == root
    payloads = [_pickled(o) for o in object_list] if here else []
    sizes = np.array([len(p) for p in payloads], dtype=np.int64) if here else \
        np.zeros(len(object_list), dtype=np.int64)
    c.broadcast(_tensor(sizes), group=pg, group_src=root)
    data = np.concatenate(payloads) if payloads else np.empty(int(sizes.sum()), np.uint8)
    c.broadcast(_tensor(data), group=pg, group_src=root)
    if not here:
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        for i in range(len(object_list)):
            object_list[i] = pickle.loads(data[offsets[i]:offsets[i + 1]].tobytes())


def all_gather_object(object_list, obj, group=None):
    """Every rank's ``obj`` into ``object_list[rank]`` (a list of the group's size)."""
    pg = group_of(group, "all_gather_object")
    if pg is None:
        return
    mine = _pickled(obj)
    sizes = _all_sizes(pg, len(mine))
    rows = np.empty((pg._size, int(sizes.max())), dtype=np.uint8)
    c.all_gather_into_tensor(_tensor(rows), _tensor(_padded([mine], rows.shape[1])), group=pg)
    _fill(object_list, _unpickle(rows, sizes), "all_gather_object", "object_list")


def _fill(out, objects, fn, name):
    if len(out) != len(objects):
        raise ValueError(f"{fn}(): {name} must have one slot per rank ({len(objects)}), "
                         f"got {len(out)}")
    out[:] = objects


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst`` (None elsewhere)."""
    pg = group_of(group, "gather_object")
    if pg is None:
        return
    root = peer_rank(pg, dst, group_dst, "gather_object", "dst")
    here = pg._rank == root
    mine = _pickled(obj)
    sizes = _all_sizes(pg, len(mine))
    width = int(sizes.max())
    rows = np.empty((pg._size, width), dtype=np.uint8)
    out = [_tensor(r) for r in rows] if here else None
    c.gather(_tensor(_padded([mine], width)[0]), out, group=pg, group_dst=root)
    if here:
        _fill(object_gather_list, _unpickle(rows, sizes), "gather_object",
              "object_gather_list")


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Object ``i`` of rank ``src``'s ``scatter_object_input_list`` into
    ``scatter_object_output_list[0]`` on rank ``i``."""
    pg = group_of(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    root = peer_rank(pg, src, group_src, "scatter_object_list", "src")
    here = pg._rank == root
    width = np.zeros(1, dtype=np.int64)
    if here:
        payloads = [_pickled(o) for o in scatter_object_input_list]
        if len(payloads) != pg._size:
            raise ValueError(f"scatter_object_list(): scatter_object_input_list must hold one "
                             f"object per rank ({pg._size}), got {len(payloads)}")
        width[0] = max(len(p) for p in payloads)
    c.broadcast(_tensor(width), group=pg, group_src=root)
    rows = _padded(payloads, int(width[0])) if here else None
    sizes = np.array([len(p) for p in payloads], dtype=np.int64) if here else None
    mine = np.empty(int(width[0]), dtype=np.uint8)
    size = np.zeros(1, dtype=np.int64)
    c.scatter(_tensor(mine), [_tensor(r) for r in rows] if here else None, group=pg,
              group_src=root)
    c.scatter(_tensor(size), [_tensor(sizes[i:i + 1]) for i in range(pg._size)]
              if here else None, group=pg, group_src=root)
    scatter_object_output_list[0] = pickle.loads(mine[:int(size[0])].tobytes())
