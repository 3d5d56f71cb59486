"""Checkpoints: ``ember.save`` / ``ember.load``, PyTorch's ``torch.save`` / ``torch.load``
(``ember.serialization`` is ``torch.serialization``).

``ember.save`` writes PyTorch's zip format -- ``torch.load(f, weights_only=True)`` reads it
-- and ``ember.load`` reads what ``torch.save`` writes: tensors of every dtype ember has,
views sharing a storage, Parameters, state_dicts, and with ``weights_only=False`` pickled
modules, whose ``torch.*`` classes map to ember's. ``weights_only=True`` is the default:
only allow-listed globals load (``add_safe_globals``, ``safe_globals``).

``ember.load`` tells the formats apart by their first bytes: a zip archive (PyTorch since
1.6, ember's default), PyTorch's legacy pickle stream, or a safetensors file -- ember's own
format before, still written with ``ember.save(obj, f, format="safetensors")`` and loaded as
always, or a plain safetensors file from another library.

Layout: _zipfile.py (the container), _torch_save.py / _torch_load.py / _legacy.py (PyTorch's
pickles), _rebuild.py (tensors out of storages), _unpickler.py and _allowlist.py
(weights_only), _locations.py (map_location), _options.py (torch.serialization's settings);
_safetensors.py with _container.py, _tensors.py, _tree.py, _pickling.py (ember's format).
"""
import contextlib
import io
import os
import pickle
import secrets
import sys
import warnings

import numpy as np

from ember.serialization import _legacy, _options
from ember.serialization._allowlist import (
    UNSAFE_MESSAGE as UNSAFE_MESSAGE,
)
from ember.serialization._allowlist import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from ember.serialization._container import CorruptCheckpoint
from ember.serialization._locations import (  # noqa: F401  (_get_restore_location: private)
    _get_restore_location,
    default_restore_location,
    location_tag,
    register_package,
    validate_cuda_device,
    validate_hpu_device,
)
from ember.serialization._options import (
    LoadEndianness,
    SourceChangeWarning,
    check_module_version_greater_or_equal,
    get_crc32_options,
    get_default_load_endianness,
    get_default_mmap_options,
    mkdtemp,
    normalize_storage_type,
    set_crc32_options,
    set_default_load_endianness,
    set_default_mmap_options,
    skip_data,
    storage_to_tensor_type,
)
from ember.serialization._rebuild import StorageType
from ember.serialization._safetensors import load_safetensors, save_safetensors
from ember.serialization._tensors import register_tensor_subclass
from ember.serialization._torch_load import load_zip
from ember.serialization._torch_save import save_zip
from ember.serialization._unpickler import globals_in_pickle
from ember.serialization._zipfile import ZipReader, is_zip

__all__ = ["DEFAULT_PROTOCOL", "LoadEndianness", "SourceChangeWarning", "StorageType",
           "add_safe_globals", "check_module_version_greater_or_equal", "clear_safe_globals",
           "default_restore_location", "get_crc32_options", "get_default_load_endianness",
           "get_default_mmap_options", "get_safe_globals", "get_unsafe_globals_in_checkpoint",
           "load", "location_tag", "mkdtemp", "normalize_storage_type", "register_package",
           "register_tensor_subclass", "safe_globals", "save", "set_crc32_options",
           "set_default_load_endianness", "set_default_mmap_options", "skip_data",
           "storage_to_tensor_type", "validate_cuda_device", "validate_hpu_device"]

DEFAULT_PROTOCOL = 2        # PyTorch's: its weights_only unpickler reads protocol 2 opcodes
# the sizes of the legacy format's C types and the platform (PyTorch's module constants)
INT_SIZE, LONG_SIZE, SHORT_SIZE = 4, 4, 2
IS_WINDOWS = sys.platform == "win32"
MAP_PRIVATE, MAP_SHARED = _options.MAP_PRIVATE, _options.MAP_SHARED
MAGIC_NUMBER, PROTOCOL_VERSION = _legacy.MAGIC_NUMBER, _legacy.PROTOCOL_VERSION
STORAGE_KEY_SEPARATOR = ","
_FORMATS = ("torch", "safetensors")


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False, *,
         format="torch"):
    """Saves an object to a disk file: ``f`` is a path (str or os.PathLike) or a writable
    binary file object (written from its current position).

    The default ``format="torch"`` is PyTorch's zip checkpoint (what ``torch.save`` writes):
    ``torch.load(f, weights_only=True)`` reads a state_dict, an optimizer's state_dict or any
    nesting of dicts/lists/tuples of tensors and Python scalars saved here. Each storage is
    written once, so tensors that share one (views, tied weights) load sharing it.
    ``pickle_module`` (the standard ``pickle``, or one whose Pickler extends
    ``pickle._Pickler``) pickles the object at ``pickle_protocol`` (PyTorch's 2 by default;
    its weights_only unpickler reads no other). ``_use_new_zipfile_serialization=False``
    writes PyTorch's legacy non-zip format; ``_disable_byteorder_record`` leaves out the
    byte order record.

    ``format="safetensors"`` writes ember's earlier format instead: a safetensors file whose
    metadata holds a JSON tree of a tensor tree (loading it never runs code) or a pickle
    stream of anything else.

    Saving to a path is atomic: the file is written to a temporary file in the same folder,
    synced and renamed over ``f``, so a failure leaves any previous file intact."""
    if format not in _FORMATS:
        raise ValueError(f"ember.save: format must be one of {_FORMATS}, not {format!r}")
    is_path = isinstance(f, (str, os.PathLike))
    if not is_path and not hasattr(f, "write"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'write' attribute, not {type(f).__name__}")
    if format == "safetensors":
        if pickle_module is not pickle:
            raise ValueError("ember.save: format='safetensors' pickles with the standard pickle "
                             "module only")
        write = save_safetensors(obj, pickle_protocol)
    elif not _use_new_zipfile_serialization:
        def write(fh):
            _legacy.save_legacy(obj, fh, pickle_module, pickle_protocol)
    else:
        archive = "archive"
        if is_path:
            archive = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"

        def write(fh):
            save_zip(obj, fh, archive, pickle_module, pickle_protocol, _disable_byteorder_record)
    if is_path:
        _atomic_write(os.fspath(f), write)
    else:
        write(f)


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


def _default_to_weights_only(pickle_module):
    # load's default for weights_only: True unless a pickle_module is given
    return pickle_module is None


def _is_path(name_or_buffer):
    return isinstance(name_or_buffer, (str, os.PathLike))


class _opener:
    """A context manager yielding ``file_like`` (PyTorch's private file helpers)."""

    def __init__(self, file_like):
        self.file_like = file_like

    def __enter__(self):
        return self.file_like

    def __exit__(self, *exc):
        pass


class _open_file(_opener):
    def __init__(self, name, mode):
        super().__init__(open(name, mode))

    def __exit__(self, *exc):
        self.file_like.close()


class _open_buffer_writer(_opener):
    def __exit__(self, *exc):
        self.file_like.flush()


def _open_file_like(name_or_buffer, mode):
    """A context manager giving a binary file: ``name_or_buffer`` opened with ``mode`` when it
    is a path (closed on exit), else the buffer itself (flushed on exit when writing)."""
    if _is_path(name_or_buffer):
        return _open_file(name_or_buffer, mode)
    if "w" in mode:
        return _open_buffer_writer(name_or_buffer)
    if "r" in mode:
        return _opener(name_or_buffer)
    raise RuntimeError(f"Expected 'r' or 'w' in mode but got {mode}")


def _describe(f):
    if isinstance(f, (str, os.PathLike)):
        return f"'{os.fspath(f)}'"
    name = getattr(f, "name", None)
    return f"'{name}'" if isinstance(name, str) else f"the {type(f).__name__} object"


def _seekable(f):
    try:
        if hasattr(f, "seekable"):
            return bool(f.seekable())
        f.seek(f.tell())
        return True
    except (OSError, AttributeError, ValueError):
        return False


def _peek(f, n):
    pos = f.tell()
    head = f.read(n)
    f.seek(pos)
    if not isinstance(head, bytes):
        raise TypeError("ember.load: f must be opened in binary mode ('rb')")
    return head


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Loads an object saved with ``ember.save`` or ``torch.save`` from ``f``: a path or a
    readable binary file object (read from its current position).

    map_location: where storages go -- None (the device they were saved on), a device or
    string (``'cpu'``, ``'meta'``: no data is read), a dict remapping saved locations
    (``{'cuda:1': 'cuda:0'}``), or a callable ``fn(storage, location)`` given each storage as
    read on the CPU (an UntypedStorage; in ember's safetensors format, each tensor's) and its
    saved location string, returning it moved (``storage.cuda(1)``) or None for the default
    placement.

    pickle_module: the module whose Unpickler reads the object (``weights_only=False`` only).

    weights_only: only tensors, primitive types, dicts and the globals allow-listed with
    ``ember.serialization.add_safe_globals`` load; any other global raises
    pickle.UnpicklingError before it is imported or called. None (the default) means True
    unless ``pickle_module`` is given. ``weights_only=False`` unpickles anything, which can
    run arbitrary code: use it only for files you trust. It maps PyTorch's classes
    (``torch.nn.modules.linear.Linear``) to ember's (``ember.nn.modules.linear.Linear``).

    mmap: map the file (``f`` must be a path) instead of reading the storages; tensors view
    the map, copy-on-write by default (``set_default_mmap_options``).

    pickle_load_args: keyword arguments for the Unpickler (``encoding``, default 'utf-8').
    A corrupt or truncated file raises RuntimeError naming the file and the problem; a
    damaged pickle raises pickle.UnpicklingError."""
    if weights_only is None:
        weights_only = _default_to_weights_only(pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    is_path = isinstance(f, (str, os.PathLike))
    if not is_path and not hasattr(f, "read"):
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read': f must be a "
                             f"path or a binary file object")
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    source = _describe(f)
    try:
        if is_path:
            with open(os.fspath(f), "rb") as fh:
                return _load_stream(fh, os.fspath(f), bool(mmap), source, map_location,
                                    weights_only, pickle_module, pickle_load_args)
        return _load_stream(f, None, False, source, map_location, weights_only, pickle_module,
                            pickle_load_args)
    except CorruptCheckpoint as e:
        raise RuntimeError(f"ember.load: {source} is not a valid checkpoint: {e}") from None


def _load_stream(f, path, mmap, source, map_location, weights_only, pickle_module, args):
    if not _seekable(f):            # PyTorch's formats need seeking: read it all
        f = io.BytesIO(f.read())
    head = _peek(f, 512)
    if not head:
        raise CorruptCheckpoint("there is no data to read (an empty file, or a file object at "
                                "its end)")
    size = os.fstat(f.fileno()).st_size if path is not None else None
    if is_zip(head):
        mapped = None
        if mmap:
            mode = "r+" if get_default_mmap_options() == _options.MAP_SHARED else "c"
            mapped = np.memmap(path, dtype=np.uint8, mode=mode, shape=(size,))
        return load_zip(f, source, map_location, weights_only, pickle_module, mapped, args)
    if _legacy.is_tar(head):
        raise CorruptCheckpoint("it is PyTorch's legacy tar format (PyTorch 0.3 and older), "
                                "which ember cannot read")
    if _legacy.is_legacy(head):
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True)`, please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        return _legacy.load_legacy(f, source, map_location, weights_only, pickle_module, args)
    return load_safetensors(f, map_location, weights_only, source, args,
                            path if mmap else None, size)


def get_unsafe_globals_in_checkpoint(f):
    """Returns a list of strings of functions/classes in a ``torch.save``/``ember.save``
    checkpoint that are not safe for ``weights_only`` (not allow-listed by default nor with
    ``add_safe_globals``), read from the pickle without running it.

    Args:
        f: file-like object or string containing the checkpoint"""
    from ember.serialization._allowlist import is_allowed_name
    opened = open(os.fspath(f), "rb") if isinstance(f, (str, os.PathLike)) else None
    fh = opened or f
    try:
        if not is_zip(_peek(fh, 4)):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        try:
            reader = ZipReader(fh)
            if reader.has_record("constants.pkl"):
                raise ValueError("Expected input to be a checkpoint returned by torch.save but "
                                 "got a torchscript checkpoint")
            data = reader.record("data.pkl").tobytes()
        except CorruptCheckpoint as e:
            raise RuntimeError(f"{_describe(f)} is not a valid checkpoint: {e}") from None
        return sorted(name for name in globals_in_pickle(data) if not is_allowed_name(name))
    finally:
        if opened is not None:
            opened.close()


# public at the module path PyTorch (and pickles, reprs, allow-lists) know them by
for _name in ("LoadEndianness", "SourceChangeWarning", "StorageType", "safe_globals",
              "skip_data", "set_default_mmap_options"):
    globals()[_name].__module__ = "ember.serialization"
