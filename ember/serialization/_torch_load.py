"""Reading PyTorch's zip checkpoints (``torch.save``'s format since PyTorch 1.6).

``data.pkl`` is unpickled (restricted when ``weights_only``); each storage it names by
persistent id is read from ``data/<key>`` once -- or mapped, with ``mmap`` -- byte-swapped if
the file's ``byteorder`` differs from this machine's, handed to the restore function of
``map_location`` as a 1-D uint8 tensor, and shared by every tensor that views it.
"""
import pickle
import sys

import numpy as np

from ember.core import _dtype as _dtypes
from ember.core._tensor import TensorBase, empty, from_numpy
from ember.serialization import _options, _rebuild
from ember.serialization._container import CorruptCheckpoint
from ember.serialization._locations import is_meta_location, restore_function
from ember.serialization._rebuild import LoadedStorage, StorageType
from ember.serialization._unpickler import load_pickle
from ember.serialization._zipfile import ZipReader

__all__ = ["as_str", "byteswap", "load_zip", "parse_pid", "storage_loader"]

MIN_VERSION, MAX_VERSION = 1, 10      # the archive versions PyTorch's reader accepts


def as_str(x):
    """A pickle's str, or bytes (Python 2 pickles read with encoding='bytes') decoded."""
    return x.decode("ascii") if isinstance(x, bytes) else x


def parse_pid(pid, fields=4):
    """(StorageType, key, location, numel[, ...]) of a storage's persistent id, checked."""
    if not (type(pid) is tuple and len(pid) == fields + 1):
        raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                     f"{pid!r:.80}")
    if as_str(pid[0]) != "storage":
        raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                     f"{pid[0]!r:.80}")
    storage_type, key, location, numel = pid[1:5]
    key, location = as_str(key), as_str(location)
    if not isinstance(storage_type, StorageType):
        raise pickle.UnpicklingError(f"the storage type of storage {key!r} is {storage_type!r}")
    if not (isinstance(key, str) and isinstance(location, str) and type(numel) is int
            and numel >= 0):
        raise pickle.UnpicklingError(f"invalid storage record {pid!r:.120}")
    return (storage_type, key, location, numel) + tuple(pid[5:])


def byteswap(buf, dtype):
    """Swap the bytes of each element (each half of a complex one) of ``buf`` in place."""
    size = dtype.itemsize // (2 if dtype.is_complex else 1)
    if size > 1 and buf.size:
        buf.view(f"u{size}").byteswap(inplace=True)
    return buf


def storage_loader(read, map_location, swap):
    """``load(key, dtype, location, nbytes) -> LoadedStorage``, placing each storage once.
    ``read(key, nbytes)`` gives a storage's bytes as a writable uint8 array;
    ``read(key, nbytes, check_only=True)`` only checks that it exists (map_location='meta')."""
    restore = restore_function(map_location)
    meta = is_meta_location(map_location)
    loaded = {}

    def load(key, dtype, location, nbytes):
        hit = loaded.get(key)
        if hit is not None:
            return hit
        _rebuild.check_dtype(dtype, f"storage '{key}'")
        if meta:
            read(key, nbytes, check_only=True)
            flat = empty(nbytes, dtype=_dtypes.uint8, device="meta")
        else:
            if _options.skipping_data():
                buf = np.zeros(nbytes, dtype=np.uint8)
            else:
                buf = read(key, nbytes)
                if swap:
                    byteswap(buf, dtype)
            # (NumPy gives an empty array stride 0; views of other item sizes want 1)
            flat = restore(from_numpy(buf) if nbytes else empty(0, dtype=_dtypes.uint8),
                           location)
            if not (isinstance(flat, TensorBase) and flat.dtype is _dtypes.uint8
                    and tuple(flat.shape) == (nbytes,)):
                raise TypeError(f"ember.load: map_location must return the storage it was given "
                                f"(a 1-D uint8 tensor of {nbytes} bytes) moved or None, got "
                                f"{flat!r:.80}")
        st = loaded[key] = LoadedStorage(key, flat, dtype)
        return st
    load.restore = restore
    return load


def _check_version(reader):
    name = ".data/version" if reader.has_record(".data/version") else "version"
    raw = reader.record(name).tobytes()
    try:
        version = int(raw.strip())
    except ValueError:
        raise CorruptCheckpoint(f"the version record is not a number ({raw[:20]!r})") from None
    if version < MIN_VERSION:
        raise CorruptCheckpoint(f"the archive version {version} is below the minimum "
                                f"{MIN_VERSION}")
    if version > MAX_VERSION:
        raise CorruptCheckpoint(f"Attempted to read a PyTorch file with version {version}, but "
                                f"the maximum supported version for reading is {MAX_VERSION}")


def load_zip(f, source, map_location, weights_only, pickle_module, mmap, pickle_load_args):
    """The object in the zip checkpoint ``f`` (``mmap``: a NumPy map of the whole file)."""
    reader = ZipReader(f, mmap)
    if reader.has_record("constants.pkl"):
        raise CorruptCheckpoint("it is a TorchScript archive (torch.jit.save); ember cannot load "
                                "TorchScript programs, only torch.save checkpoints")
    _check_version(reader)
    order = _options.file_byteorder(
        reader.record("byteorder").tobytes() if reader.has_record("byteorder") else None)
    if mmap is not None and order is not None and order != sys.byteorder:
        mmap = None                                 # swapping must not write through a map

    def read(key, nbytes, check_only=False):
        name = f"data/{key}"
        if check_only:
            if not reader.has_record(name):
                reader.record(name)                 # raises: file not found
            return None
        return reader.record(name, mmap=mmap is not None, size=nbytes)

    load = storage_loader(read, map_location, order is not None and order != sys.byteorder)

    storages = {}           # key -> the TypedStorage handed out (one per storage)
    by_id = {}              # id of such a storage -> its LoadedStorage

    def persistent_load(pid):
        storage_type, key, location, numel = parse_pid(pid)
        st = storages.get(key)
        if st is None:
            dtype = storage_type.dtype
            itemsize = dtype.itemsize if isinstance(dtype, _dtypes.dtype) else 1
            loaded = load(key, dtype, location, numel * itemsize)
            st = storages[key] = _rebuild.as_storage(loaded)
            by_id[id(st)] = loaded
        return st

    with _rebuild.restoring(load.restore, by_id):
        obj = load_pickle(reader.record("data.pkl").tobytes(), persistent_load, weights_only,
                          source, pickle_module, **pickle_load_args)
    f.seek(reader.end)              # a later load of the stream reads what follows
    return obj
