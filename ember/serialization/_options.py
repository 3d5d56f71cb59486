"""The settings and small helpers ``torch.serialization`` offers beside save and load."""
import contextlib
import enum
import mmap as _mmap
import shutil
import sys
import tempfile
import threading
import warnings

__all__ = ["LoadEndianness", "SourceChangeWarning", "check_module_version_greater_or_equal",
           "get_crc32_options", "get_default_load_endianness", "get_default_mmap_options",
           "mkdtemp", "normalize_storage_type", "set_crc32_options",
           "set_default_load_endianness", "set_default_mmap_options", "skip_data",
           "storage_to_tensor_type"]

MAP_PRIVATE = getattr(_mmap, "MAP_PRIVATE", None)
MAP_SHARED = getattr(_mmap, "MAP_SHARED", None)
_config = {"endianness": None, "crc32": True, "mmap_flags": MAP_PRIVATE}
_local = threading.local()          # skip_data is per thread, as in PyTorch


class SourceChangeWarning(Warning):
    """The source of a pickled module's class changed since it was saved."""


class LoadEndianness(enum.Enum):
    """The byte order assumed for a checkpoint without a byteorder record."""
    NATIVE = 1
    LITTLE = 2
    BIG = 3


def get_default_load_endianness():
    """Get the fallback byte order for loading files without a byteorder mark (None: little
    endian, what every PyTorch since 2.1 writes)."""
    return _config["endianness"]


def set_default_load_endianness(endianness):
    """Set the fallback byte order for loading files without a byteorder mark.

    Args:
        endianness: a LoadEndianness or None."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config["endianness"] = endianness


def file_byteorder(record):
    """The byte order of a checkpoint's storages ("little", "big") given its byteorder record
    (None when absent); None for native order (nothing to swap)."""
    if record is not None:
        if record not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + record.decode("latin-1"))
        return record.decode()
    default = _config["endianness"]
    if default is LoadEndianness.NATIVE:
        return None
    return "big" if default is LoadEndianness.BIG else "little"


def get_crc32_options():
    """Get whether ``ember.save`` computes and writes crc32 for each record (default True)."""
    return _config["crc32"]


def set_crc32_options(compute_crc32):
    """Set whether ``ember.save`` computes and writes crc32 for each record. Without it the
    records hold 0, which other unzip tools report as corrupt; ``ember.load`` and
    ``torch.load`` read them.

    Args:
        compute_crc32 (bool): set crc32 computation flag"""
    _config["crc32"] = bool(compute_crc32)


def get_default_mmap_options():
    """Get the default mmap options for ``ember.load`` with ``mmap=True`` (default
    ``mmap.MAP_PRIVATE``: writes to loaded tensors stay in memory)."""
    return _config["mmap_flags"]


class set_default_mmap_options:
    """Context manager or function to set default mmap options for ``ember.load`` with
    ``mmap=True`` to flags: ``mmap.MAP_PRIVATE`` or ``mmap.MAP_SHARED`` (writes to loaded
    tensors go to the file).

    Args:
        flags: ``mmap.MAP_PRIVATE`` or ``mmap.MAP_SHARED``"""

    def __init__(self, flags):
        if sys.platform == "win32":
            raise RuntimeError("Changing the default mmap options is currently not supported for "
                               "Windows")
        if flags != MAP_PRIVATE and flags != MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _config["mmap_flags"]
        _config["mmap_flags"] = flags

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _config["mmap_flags"] = self.prev


def skipping_data():
    """Whether a ``skip_data`` block is active in this thread."""
    return getattr(_local, "skip_data", False)


class skip_data:
    """Context-manager that skips writing/reading storage bytes for ``ember.save`` /
    ``ember.load`` calls: saving writes zeros where the bytes would go, loading gives tensors
    the checkpoint's dtypes, shapes and sharing over zero-filled storages.

    Args:
        materialize_fake_tensors: accepted for PyTorch's signature (ember has no fake
            tensors)."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = skipping_data()
        _local.skip_data = True

    def __exit__(self, *exc):
        _local.skip_data = self._old


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory, removed with its contents on exit."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether ``module.__version__`` is at least ``req_version_tuple`` (compared field by
    field, each cast to the type of the required field). A malformed version raises
    RuntimeError, or with ``error_if_malformed=False`` warns and counts as met."""
    try:
        fields = module.__version__.split(".")
        version = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        return True


def normalize_storage_type(storage_type):
    """ember's storage class of the same name as ``storage_type``."""
    import ember
    return getattr(ember, storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor type matching a legacy storage (``FloatStorage`` -> ``FloatTensor``)."""
    import importlib
    storage_type = type(storage)
    module = importlib.import_module(storage_type.__module__)
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))
