"""The on-disk container: a standard safetensors file, read and written here.

Layout (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length N,
N bytes of JSON (``{"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}``,
padded with spaces to a multiple of 8), then the tensors' bytes back to back, little-endian,
row-major, with ``data_offsets`` relative to the start of that data section. Entries are
laid out by decreasing item size so every tensor is naturally aligned (as the safetensors
library does). The reader checks everything a tampered or truncated file could get wrong
and raises CorruptCheckpoint (ember.load turns it into a RuntimeError naming the file); it
never trusts a size it has not checked.
"""
import json

import numpy as np

__all__ = ["CorruptCheckpoint", "Entry", "read", "write"]

# safetensors dtype name -> (ember dtype name, NumPy little-endian type; bfloat16 as raw int16)
DTYPES = {
    "F64": ("float64", "<f8"), "F32": ("float32", "<f4"), "F16": ("float16", "<f2"),
    "BF16": ("bfloat16", "<i2"), "I64": ("int64", "<i8"), "I32": ("int32", "<i4"),
    "I16": ("int16", "<i2"), "I8": ("int8", "i1"), "U8": ("uint8", "u1"), "BOOL": ("bool", "?"),
}
ST_NAME = {ember_name: st for st, (ember_name, _) in DTYPES.items()}
MAX_HEADER = 100 * 1024 * 1024      # the safetensors library's limit: refuse garbage lengths
_CHUNK = 64 * 1024 * 1024


class Entry:
    """One tensor of the file: its safetensors dtype name, shape and byte range."""

    __slots__ = ("name", "dtype", "shape", "begin", "end")

    def __init__(self, name, dtype, shape, begin, end):
        self.name, self.dtype, self.shape, self.begin, self.end = name, dtype, shape, begin, end

    def array(self, data):
        """This entry's values as a NumPy array over ``data`` (copied only if misaligned or
        not in native byte order)."""
        np_type = np.dtype(DTYPES[self.dtype][1])
        arr = data[self.begin:self.end].view(np_type).reshape(self.shape)
        if not arr.flags.aligned or not np_type.isnative:
            arr = arr.astype(np_type.newbyteorder("="))
        return arr


# writing -----------------------------------------------------------------------------------

def write(f, arrays, metadata):
    """Write ``arrays`` (name -> (safetensors dtype, C-contiguous NumPy array)) and the
    string map ``metadata`` to the binary file object ``f``."""
    order = sorted(arrays, key=lambda n: -arrays[n][1].dtype.itemsize)    # stable: aligned
    header = {"__metadata__": metadata}
    offset = 0
    for name in order:
        st_dtype, arr = arrays[name]
        header[name] = {"dtype": st_dtype, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    text += b" " * (-len(text) % 8)
    f.write(len(text).to_bytes(8, "little"))
    f.write(text)
    for name in order:
        _write_array(f, arrays[name][1])


def _write_array(f, arr):
    if arr.nbytes:
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        f.write(memoryview(arr).cast("B"))


# reading -----------------------------------------------------------------------------------

class CorruptCheckpoint(ValueError):
    """The file is not a valid checkpoint; ember.load reports it as a RuntimeError."""


def _read_exact(f, n, what):
    """Exactly n bytes from f, or a clear error saying the file is truncated."""
    buf = np.empty(n, dtype=np.uint8)
    view = memoryview(buf)
    got = 0
    readinto = getattr(f, "readinto", None)
    while got < n:
        want = min(n - got, _CHUNK)
        if readinto is not None:
            k = readinto(view[got:got + want])
        else:
            chunk = f.read(want)
            k = len(chunk)
            view[got:got + k] = chunk
        if not k:
            raise CorruptCheckpoint(f"the file is truncated: {what} needs {n} bytes, found {got}")
        got += k
    return buf


def read(f, mmap_path=None, file_size=None):
    """Read a container from the binary file object ``f`` at its current position.

    Returns (metadata dict, {name: Entry} in data-offset order, data as a uint8 array).
    ``mmap_path`` maps the data section of that file copy-on-write instead of reading it;
    ``file_size`` (given for paths) must match what the header describes exactly."""
    head = f.read(8)
    if not isinstance(head, bytes):
        raise TypeError("ember.load: f must be opened in binary mode ('rb')")
    if not head:
        raise CorruptCheckpoint("there is no data to read (an empty file, or a file object "
                                "at its end)")
    if head[:4] == b"PK\x03\x04":
        raise CorruptCheckpoint("it looks like a PyTorch zip checkpoint (or another zip file), "
                                "which ember cannot read; convert it to safetensors first")
    if len(head) < 8:
        raise CorruptCheckpoint(f"the file is truncated: the 8-byte header length has "
                                f"{len(head)} bytes")
    n = int.from_bytes(head, "little")
    if n > MAX_HEADER:
        raise CorruptCheckpoint(f"the header length {n} exceeds the {MAX_HEADER}-byte limit "
                                f"(a corrupt header length, or not a safetensors file)")
    if file_size is not None and 8 + n > file_size:
        raise CorruptCheckpoint(f"the header length {n} runs past the end of the "
                                f"{file_size}-byte file")
    metadata, entries, data_len = _parse_header(bytes(_read_exact(f, n, "the header")))
    total = 8 + n + data_len
    if file_size is not None and total != file_size:
        what = "truncated" if total > file_size else "followed by unexpected bytes"
        raise CorruptCheckpoint(f"the file is {what}: the header describes {total} bytes, "
                                f"the file has {file_size}")
    if mmap_path is not None and data_len:
        data = np.memmap(mmap_path, dtype=np.uint8, mode="c", offset=8 + n, shape=(data_len,))
    else:
        data = _read_exact(f, data_len, "the tensor data")
    for e in entries.values():
        if e.dtype == "BOOL" and e.end > e.begin and data[e.begin:e.end].max() > 1:
            raise CorruptCheckpoint(f"tensor '{e.name}' of dtype BOOL holds bytes other than "
                                    f"0 and 1")
    return metadata, entries, data


def _unique_keys(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _parse_header(raw):
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys,
                            parse_constant=reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CorruptCheckpoint(f"the header is not valid JSON ({e})")
    if not isinstance(header, dict):
        raise CorruptCheckpoint("the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise CorruptCheckpoint("__metadata__ is not a map of strings to strings")
    entries = [_parse_entry(name, info) for name, info in header.items()]
    entries.sort(key=lambda e: (e.begin, e.end))
    pos = 0
    for e in entries:      # the data section is covered exactly: no overlap, no hole
        if e.begin != pos:
            problem = "overlaps the previous tensor" if e.begin < pos else "leaves a gap"
            raise CorruptCheckpoint(f"the data offsets of tensor '{e.name}' [{e.begin}, {e.end}] "
                                    f"{problem} (expected it to start at {pos})")
        pos = e.end
    return metadata, {e.name: e for e in entries}, pos


def _is_count(x):
    return type(x) is int and x >= 0


def _parse_entry(name, info):
    if not isinstance(info, dict):
        raise CorruptCheckpoint(f"the header entry of tensor '{name}' is not a JSON object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise CorruptCheckpoint(f"tensor '{name}' has the unsupported dtype {dtype!r} (ember reads "
                                f"{', '.join(DTYPES)})")
    if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
        raise CorruptCheckpoint(f"tensor '{name}' has an invalid shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))
            and offsets[0] <= offsets[1]):
        raise CorruptCheckpoint(f"tensor '{name}' has invalid data_offsets {offsets!r}")
    numel = 1
    for s in shape:
        numel *= s
    nbytes = numel * np.dtype(DTYPES[dtype][1]).itemsize
    if offsets[1] - offsets[0] != nbytes:
        raise CorruptCheckpoint(f"tensor '{name}' of dtype {dtype} and shape {shape} needs "
                                f"{nbytes} bytes, its data_offsets {offsets} hold "
                                f"{offsets[1] - offsets[0]}")
    return Entry(name, dtype, tuple(shape), offsets[0], offsets[1])

