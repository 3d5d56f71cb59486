"""PyTorch's archive classes (``torch._C.PyTorchFileReader``/``PyTorchFileWriter``) and the
storage contexts of its serializers, on ember's zip reader and writer (``_zipfile``).

The writer produces what ``torch.save`` containers look like: records ``<archive>/<name>``
stored uncompressed with their data aligned, and at ``write_end_of_file`` the ``version``,
``byteorder`` and ``.data/serialization_id`` records and the central directory.  Record
names are given and returned without the archive folder, as PyTorch's are.
"""
import io
import os
import secrets

from ember.serialization._container import CorruptCheckpoint

__all__ = ["DeserializationStorageContext", "PyTorchFileReader", "PyTorchFileWriter",
           "SerializationStorageContext"]

_DEFAULT_VERSION = 3          # the archive format version PyTorch's writer records


def _storage_bytes(storage):
    """The bytes of an ember storage (untyped or typed)."""
    untyped = getattr(storage, "_untyped_storage", None) or storage
    return bytes(untyped)


def _is_storage(x):
    from ember.core.storages import StorageBase, TypedStorage, UntypedStorage
    return isinstance(x, (UntypedStorage, TypedStorage, StorageBase))


class PyTorchFileWriter:
    """Writes a PyTorch zip archive to ``file_name`` (a path) or ``buffer`` (a binary file
    object with ``write``).

    Args:
        compute_crc32: store each record's CRC-32 (0 when False, which readers skip).
        storage_alignment: the byte alignment of each record's data in the file.
    """

    def __init__(self, file_name, compute_crc32=True, storage_alignment=64):
        from ember.serialization._zipfile import ZipWriter
        self._own = isinstance(file_name, (str, os.PathLike))
        if self._own:
            path = os.fspath(file_name)
            base = os.path.basename(path)
            if not base:
                raise RuntimeError(f"invalid file name: {path}")
            try:
                f = open(path, "wb")
            except OSError as e:
                raise RuntimeError(f"open file failed because of errno {e.errno} on fopen: "
                                   f"{e.strerror}, file path: {path}") from None
            archive = os.path.splitext(base)[0]
        elif hasattr(file_name, "write"):
            f, archive = file_name, "archive"
        else:
            raise TypeError(f"PyTorchFileWriter(): expected a file name or a binary file object "
                            f"with write(), got {type(file_name).__name__}")
        if isinstance(storage_alignment, bool) or not isinstance(storage_alignment, int) or \
                storage_alignment <= 0:
            raise ValueError(f"PyTorchFileWriter(): storage_alignment must be a positive int, "
                             f"got {storage_alignment!r}")
        self._f, self._archive = f, archive
        self._zip = ZipWriter(f, archive, bool(compute_crc32), storage_alignment)
        self._written = []
        self._version = _DEFAULT_VERSION
        self._id = ""
        self._finalized = False

    def archive_name(self):
        """The folder every record is stored under (the file's stem, or "archive")."""
        return self._archive

    def serialization_id(self):
        """The id written at ``write_end_of_file`` ("" before it)."""
        return self._id

    def set_min_version(self, version):
        """Record at least format ``version`` in the ``version`` record."""
        self._version = max(self._version, int(version))

    def _check_open(self, name):
        if self._finalized:
            raise RuntimeError(f"PyTorchFileWriter: cannot write record '{name}': the archive "
                               f"was finalized by write_end_of_file()")
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")

    def write_record(self, name, data, size):
        """Add record ``name`` holding the first ``size`` bytes of ``data`` (bytes, str or a
        storage)."""
        self._check_open(name)
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif _is_storage(data):
            data = _storage_bytes(data)
        elif isinstance(data, int):
            raise TypeError("write_record(): passing a storage by data pointer is not supported "
                            "by ember; pass the storage object")
        view = memoryview(data).cast("B")
        if size < 0 or size > view.nbytes:
            raise RuntimeError(f"write_record(): record '{name}' asks for {size} bytes, the data "
                               f"holds {view.nbytes}")
        self._zip.write_record(name, view[:size])
        self._written.append(name)

    def write_record_metadata(self, name, size):
        """Add record ``name`` of ``size`` bytes whose data is written later (into the file,
        at the record's offset); the bytes are zeros until then."""
        self._check_open(name)
        self._zip.write_record(name, None, size)
        self._written.append(name)

    def get_all_written_records(self):
        """The names of the records written so far."""
        return set(self._written)

    def write_end_of_file(self):
        """Write the version, byte order and serialization id records and the central
        directory; a file opened by name is closed."""
        if self._finalized:
            raise RuntimeError("PyTorchFileWriter: write_end_of_file() was already called")
        if "version" not in self._written:
            self.write_record("version", f"{self._version}\n", len(f"{self._version}\n"))
        if "byteorder" not in self._written:
            self.write_record("byteorder", "little", 6)
        self._id = "".join(str(secrets.randbelow(10 ** 20)).zfill(20) for _ in range(2))
        self.write_record(".data/serialization_id", self._id, len(self._id))
        self._zip.close()
        self._finalized = True
        if self._own:
            self._f.close()

    def __del__(self):
        if not getattr(self, "_finalized", True):
            try:
                self.write_end_of_file()
            except Exception:        # never raise from a finaliser
                pass


class PyTorchFileReader:
    """Reads the records of a PyTorch zip archive: ``file_name`` (a path) or a binary file
    object with ``read``/``seek``/``tell``."""

    def __init__(self, file_name):
        from ember.serialization._zipfile import ZipReader
        if isinstance(file_name, (str, os.PathLike)):
            path = os.fspath(file_name)
            try:
                with open(path, "rb") as fh:
                    f = io.BytesIO(fh.read())
            except OSError as e:
                raise RuntimeError(f"open file failed because of errno {e.errno} on fopen: "
                                   f"{e.strerror}, file path: {path}") from None
        elif all(hasattr(file_name, a) for a in ("read", "seek", "tell")):
            f = file_name
        else:
            raise TypeError(f"PyTorchFileReader(): expected a file name or a binary file object "
                            f"with read/seek/tell, got {type(file_name).__name__}")
        try:
            self._zip = ZipReader(f)
        except CorruptCheckpoint as e:
            raise RuntimeError(str(e)) from None

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except CorruptCheckpoint as e:
            raise RuntimeError(str(e)) from None

    def get_all_records(self):
        """Every record name, in the archive's order."""
        return self._zip.names()

    def has_record(self, name):
        return self._zip.has_record(name)

    def get_record(self, name):
        """Record ``name``'s bytes (CRC-checked)."""
        return bytes(self._call(self._zip.record, name))

    def get_record_size(self, name):
        return self._call(self._zip.size, name)

    def get_record_offset(self, name):
        """Where record ``name``'s data starts in the file."""
        return self._call(self._zip.data_offset, name)

    def get_record_header_offset(self, name):
        """Where record ``name``'s local header starts in the file."""
        return self._call(self._zip.header_offset, name)

    def get_record_offset_no_read(self, zipfile_header_offset, filename, size,
                                  storage_alignment):
        """The data offset of a record written by PyTorchFileWriter with this header
        offset, name, size and alignment, computed without reading the file."""
        from ember.serialization._zipfile import _LOCAL, ZIP64_LIMIT
        full = filename if filename.startswith(self._zip.archive + "/") else \
            f"{self._zip.archive}/{filename}"
        extra = 20 if size >= ZIP64_LIMIT else 0
        start = zipfile_header_offset + _LOCAL.size + len(full.encode("utf-8")) + extra + 4
        return start + (-start % storage_alignment)

    def get_storage_from_record(self, name, numel, dtype):
        """A tensor of ``dtype`` whose storage holds record ``name`` (``numel`` elements);
        the tensor itself has no elements, as PyTorch's."""
        import ember
        need = numel * dtype.itemsize
        have = self.get_record_size(name)
        if have != need:
            raise RuntimeError(f"record size ({have} bytes) does not match expected size "
                               f"({need} bytes = {numel} elements * {dtype.itemsize} "
                               f"bytes/element) for dtype {dtype}")
        data = ember.frombuffer(bytearray(self.get_record(name)), dtype=ember.uint8) if need \
            else ember.empty(0, dtype=ember.uint8)
        return ember.empty(0, dtype=dtype).set_(data.untyped_storage(), 0, (0,), (1,))

    def serialization_id(self):
        """The ``.data/serialization_id`` record ("" when the archive has none)."""
        name = ".data/serialization_id"
        return self.get_record(name).decode() if self.has_record(name) else ""


class SerializationStorageContext:
    """Numbers the storages a serializer writes: each distinct storage gets the next id.
    (PyTorch creates it inside its TorchScript serializer; in ember it can be constructed.)"""

    def __init__(self):
        self._ids = {}

    @staticmethod
    def _key(storage):
        if not _is_storage(storage):
            raise TypeError(f"expected a storage, got {type(storage).__name__}")
        untyped = getattr(storage, "_untyped_storage", None) or storage
        return untyped._cdata

    def get_or_add_storage(self, storage):
        """The id of ``storage`` (a new one the first time it is seen)."""
        return self._ids.setdefault(self._key(storage), len(self._ids))

    def has_storage(self, storage):
        return self._key(storage) in self._ids


class DeserializationStorageContext:
    """The storages a deserializer has read, by name."""

    def __init__(self):
        self._storages = {}

    def add_storage(self, name, tensor):
        """Remember ``tensor``'s storage as ``name`` (once per name)."""
        from ember.core._tensor import TensorBase
        if not isinstance(tensor, TensorBase):
            raise TypeError(f"add_storage(): expected a Tensor, got {type(tensor).__name__}")
        if name in self._storages:
            raise RuntimeError(f"DeserializationStorageContext: a storage named '{name}' was "
                               f"already added")
        self._storages[name] = tensor.untyped_storage()

    def has_storage(self, name):
        return name in self._storages

    def get_storage(self, name, dtype):
        """An empty tensor of ``dtype`` over the storage named ``name``."""
        import ember
        if name not in self._storages:
            raise RuntimeError(f"DeserializationStorageContext: no storage named '{name}'")
        return ember.empty(0, dtype=dtype).set_(self._storages[name], 0, (0,), (1,))


# PyTorch's public path (torch.PyTorchFileReader, ...)
for _cls in (PyTorchFileReader, PyTorchFileWriter, SerializationStorageContext,
             DeserializationStorageContext):
    _cls.__module__ = "ember"
