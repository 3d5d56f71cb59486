"""PyTorch's checkpoint container: an uncompressed zip archive, written and read here.

``torch.save`` writes ``<archive>/data.pkl`` (the pickled object), ``<archive>/data/<key>``
(one record per storage: its raw bytes), ``byteorder``, ``.format_version``,
``.storage_alignment``, ``version`` and ``.data/serialization_id``. Every record's data starts
at a multiple of 64 bytes from the start of the archive (the padding is an extra field of the
local header), so a memory map of the file holds aligned storages.

The writer produces that layout: stored records, CRC-32 and sizes in each local header, ZIP64
fields once a size or offset reaches 4 GiB. The reader takes the central directory from the
standard library's zipfile and reads each record's bytes itself, checking what a truncated or
tampered file could get wrong; every failure is a CorruptCheckpoint (ember.load reports it as
a RuntimeError naming the file).
"""
import io
import struct
import zipfile
import zlib

import numpy as np

from ember.serialization._container import CorruptCheckpoint, _read_exact

__all__ = ["ALIGNMENT", "ZipReader", "ZipWriter", "is_zip"]

ALIGNMENT = 64
ZIP64_LIMIT = 0xFFFFFFFF        # a size or offset this large needs ZIP64 fields (tests lower it)
MAGIC = b"PK\x03\x04"
_LOCAL = struct.Struct("<IHHHHHIIIHH")                  # local file header, 30 bytes
_CENTRAL = struct.Struct("<IBBBBHHHHIIIHHHHHII")        # central directory header, 46 bytes
_END = struct.Struct("<IHHHHIIH")                       # end of central directory, 22 bytes
_END64 = struct.Struct("<IQHHIIQQQQ")                   # ZIP64 end of central directory
_LOCATOR64 = struct.Struct("<IIQI")                     # ZIP64 end of central directory locator
_PAD_ID, _ZIP64_ID = 0x4246, 0x0001                     # extra fields: torch's "FB" padding; ZIP64
_UTF8_NAME = 0x0800
_DOS_DATE = 0x21                                        # 1980-01-01: the earliest valid DOS date
_CHUNK = 1 << 24


def is_zip(head):
    """Whether the bytes a file starts with are a zip archive's (PyTorch's own test)."""
    return head[:4] == MAGIC


class ZipWriter:
    """Writes records ``<archive>/<name>`` to the binary file object ``f`` from its current
    position; ``close()`` writes the central directory. Offsets count bytes written, so ``f``
    need not be seekable."""

    def __init__(self, f, archive, compute_crc32=True, alignment=ALIGNMENT):
        self._f, self._archive, self._crc = f, archive, compute_crc32
        self._alignment = alignment
        self._pos = 0
        self._entries = []          # (name bytes, flags, crc, size, offset)
        self._names = set()

    def _put(self, data):
        self._f.write(data)
        self._pos += memoryview(data).nbytes

    def write_record(self, name, data, size=None):
        """Add a record holding ``data`` (bytes or a C-contiguous array); with ``data=None``,
        ``size`` zero bytes (skip_data)."""
        full = f"{self._archive}/{name}"
        if full in self._names:
            raise RuntimeError(f"ember.save: the archive already holds a record '{full}'")
        self._names.add(full)
        raw = full.encode("utf-8")
        flags = 0 if raw.isascii() else _UTF8_NAME
        view = None if data is None else memoryview(data).cast("B")
        size = view.nbytes if view is not None else size
        crc = zlib.crc32(view) if (self._crc and view is not None) else 0
        offset = self._pos
        big = size >= ZIP64_LIMIT
        extra = struct.pack("<HHQQ", _ZIP64_ID, 16, size, size) if big else b""
        start = offset + _LOCAL.size + len(raw) + len(extra) + 4
        pad = -start % self._alignment
        extra += struct.pack("<HH", _PAD_ID, pad) + b"Z" * pad
        stored = 0xFFFFFFFF if big else size
        self._put(_LOCAL.pack(0x04034B50, 45 if big else 20, flags, 0, 0, _DOS_DATE, crc,
                              stored, stored, len(raw), len(extra)))
        self._put(raw)
        self._put(extra)
        if view is not None:
            if view.nbytes:
                self._put(view)
        else:
            zeros = bytes(min(size, _CHUNK))
            left = size
            while left:
                self._put(zeros[:min(left, _CHUNK)])
                left -= min(left, _CHUNK)
        self._entries.append((raw, flags, crc, size, offset))

    def close(self):
        """Write the central directory and the end records."""
        cd_start = self._pos
        for raw, flags, crc, size, offset in self._entries:
            fields = []
            if size >= ZIP64_LIMIT:
                fields += [size, size]
            if offset >= ZIP64_LIMIT:
                fields.append(offset)
            extra = (struct.pack(f"<HH{len(fields)}Q", _ZIP64_ID, 8 * len(fields), *fields)
                     if fields else b"")
            version = 45 if fields else 20
            stored = 0xFFFFFFFF if size >= ZIP64_LIMIT else size
            self._put(_CENTRAL.pack(0x02014B50, version, 3, version, 0, flags, 0, 0, _DOS_DATE,
                                    crc, stored, stored, len(raw), len(extra), 0, 0, 0, 0,
                                    min(offset, 0xFFFFFFFF)))
            self._put(raw)
            self._put(extra)
        cd_size, n = self._pos - cd_start, len(self._entries)
        if n >= 0xFFFF or cd_size >= ZIP64_LIMIT or cd_start >= ZIP64_LIMIT:
            end64 = self._pos
            self._put(_END64.pack(0x06064B50, _END64.size - 12, 45, 45, 0, 0, n, n, cd_size,
                                  cd_start))
            self._put(_LOCATOR64.pack(0x07064B50, 0, end64, 1))
        self._put(_END.pack(0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                            min(cd_size, 0xFFFFFFFF), min(cd_start, 0xFFFFFFFF), 0))


_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError,
               EOFError, struct.error, UnicodeDecodeError, OverflowError)


def _open(f):
    try:
        return zipfile.ZipFile(f)
    except _ZIP_ERRORS as e:
        raise CorruptCheckpoint(f"PytorchStreamReader failed reading zip archive: failed "
                                f"finding central directory ({e})") from None


def _archive_end(f, start):
    """Where the zip archive starting at ``start`` ends: the first end-of-central-directory
    record after it whose central directory lies just before it, at the offset the record
    gives from ``start`` (records may carry their sizes after their data, as PyTorch's do,
    so the local records cannot be stepped over). None when there is none."""
    sig, chunk, pos, tail = b"PK\x05\x06", 1 << 20, start, b""
    while True:
        f.seek(pos)
        data = f.read(chunk)
        if not data:
            return None
        hay = tail + data
        base = pos - len(tail)
        i = hay.find(sig)
        while i >= 0:
            end = _checked_end(f, start, base + i)
            if end is not None:
                return end
            i = hay.find(sig, i + 1)
        tail = hay[-(len(sig) - 1):]
        pos += len(data)


def _checked_end(f, start, at):
    """The archive's end if an end record at ``at`` closes the archive starting at
    ``start`` (its central directory, ZIP64's included, ends right before it)."""
    try:
        f.seek(at)
        fields = _END.unpack(f.read(_END.size))
        cd_size, cd_start, comment = fields[5], fields[6], fields[7]
        cd_end = at
        f.seek(max(at - _LOCATOR64.size, 0))
        loc = f.read(_LOCATOR64.size)
        if at - _LOCATOR64.size >= start and loc[:4] == b"PK\x06\x07":
            # ZIP64 end records (PyTorch writes them always) sit between the directory and
            # this record
            loc = _LOCATOR64.unpack(loc)
            f.seek(start + loc[2])
            end64 = _END64.unpack(f.read(_END64.size))
            if end64[0] != 0x06064B50:
                return None
            cd_size, cd_start, cd_end = end64[8], end64[9], start + loc[2]
        f.seek(start + cd_start)
        if f.read(4) != b"PK\x01\x02" or start + cd_start + cd_size != cd_end:
            return None
        return at + _END.size + comment
    except struct.error:
        return None


class _Prefix(io.RawIOBase):
    """The first ``end`` bytes of the seekable binary file ``f``, as a file (zipfile finds
    the end records of the archive that ends there)."""

    def __init__(self, f, end):
        super().__init__()
        self._f, self._end, self._pos = f, end, 0

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._end}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def read(self, n=-1):
        left = max(self._end - self._pos, 0)
        n = left if n is None or n < 0 else min(n, left)
        self._f.seek(self._pos)
        data = self._f.read(n)
        self._pos += len(data)
        return data

    def readinto(self, b):
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


class ZipReader:
    """The records of the zip archive in the seekable binary file object ``f`` (which may
    start after other data, as zip archives may). ``mmap`` (a NumPy memmap of the whole file)
    makes stored records views of the map instead of copies."""

    def __init__(self, f, mmap=None):
        self._mmap = mmap
        start = f.tell()
        self._zip = _open(f)
        self.end = f.seek(0, io.SEEK_END)
        infos = self._zip.infolist()
        if infos and min(i.header_offset for i in infos) > start:
            # more than one archive follows (two ember.save calls into one stream): the
            # central directory found from the end is the last one's, so this one is
            # bounded by walking its own records
            end = _archive_end(f, start)
            if end is None:
                raise CorruptCheckpoint(f"no zip archive ends after the one starting at byte "
                                        f"{start} (the central directory found belongs to "
                                        f"a later one)")
            f = _Prefix(f, end)
            self._zip, self.end = _open(f), end
            infos = self._zip.infolist()
        self._f = f
        if not infos or "/" not in infos[0].filename:
            raise CorruptCheckpoint("PytorchStreamReader failed reading zip archive: it does not "
                                    "hold a folder of records (not a torch.save checkpoint)")
        self.archive = infos[0].filename.split("/", 1)[0]
        self._records = {}
        for info in infos:
            folder, _, name = info.filename.partition("/")
            if folder != self.archive:
                continue
            if name in self._records:
                raise CorruptCheckpoint(f"the archive holds record '{info.filename}' twice")
            self._records[name] = info
        self._size = self.end

    def has_record(self, name):
        return name in self._records

    def names(self):
        """The record names, in the archive's order (without the archive folder)."""
        return list(self._records)

    def header_offset(self, name):
        """Where record ``name``'s local header starts."""
        return self._info(name).header_offset

    def data_offset(self, name):
        """Where record ``name``'s bytes start (read from its local header)."""
        return self._data_offset(name, self._info(name))

    def size(self, name):
        return self._info(name).file_size

    def _info(self, name):
        info = self._records.get(name)
        if info is None:
            raise CorruptCheckpoint(f"PytorchStreamReader failed locating file {name}: file "
                                    f"not found")
        return info

    def record(self, name, mmap=False, size=None):
        """The bytes of record ``name`` as a uint8 array (a view of the memory map when
        ``mmap`` and the record is stored aligned; otherwise read and CRC-checked). ``size``:
        the number of bytes the record must hold, checked before anything is read."""
        info = self._info(name)
        if size is not None and info.file_size != size:
            raise CorruptCheckpoint(f"record '{name}' holds {info.file_size} bytes, its storage "
                                    f"needs {size}")
        if info.flag_bits & 0x1:
            raise CorruptCheckpoint(f"record '{name}' is encrypted")
        if info.compress_type != zipfile.ZIP_STORED:
            try:
                return np.frombuffer(bytearray(self._zip.read(info)), dtype=np.uint8)
            except (*_ZIP_ERRORS, zlib.error, RuntimeError) as e:
                raise CorruptCheckpoint(f"PytorchStreamReader failed reading file {name}: "
                                        f"{e}") from None
        if info.compress_size != info.file_size:
            raise CorruptCheckpoint(f"record '{name}' is stored with {info.compress_size} bytes "
                                    f"for {info.file_size}")
        start = self._data_offset(name, info)
        end = start + info.file_size
        if end > self._size:
            raise CorruptCheckpoint(f"the file is truncated: record '{name}' needs bytes up to "
                                    f"{end}, the file has {self._size}")
        if mmap and self._mmap is not None and start % ALIGNMENT == 0:
            return self._mmap[start:end]
        self._f.seek(start)
        buf = _read_exact(self._f, info.file_size, f"record '{name}'")
        if info.CRC and zlib.crc32(buf) != info.CRC:      # torch writes 0 when told not to sum
            raise CorruptCheckpoint(f"record '{name}' fails its CRC-32 check: the file is "
                                    f"corrupt, or was changed after saving (through a shared "
                                    f"memory map: load it with mmap=True)")
        return buf

    def _data_offset(self, name, info):
        self._f.seek(info.header_offset)
        head = self._f.read(_LOCAL.size)
        if len(head) != _LOCAL.size or head[:4] != MAGIC:
            raise CorruptCheckpoint(f"the local header of record '{name}' is missing or "
                                    f"damaged")
        *_, name_len, extra_len = _LOCAL.unpack(head)
        raw = self._f.read(name_len)
        encoding = "utf-8" if info.flag_bits & _UTF8_NAME else "cp437"
        if raw.decode(encoding, "replace") != info.orig_filename:
            raise CorruptCheckpoint(f"the local header of record '{name}' names "
                                    f"{raw!r} instead")
        return info.header_offset + _LOCAL.size + name_len + extra_len
