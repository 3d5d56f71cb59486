"""Operands and comparisons for the conformance cases, against NumPy only (no plugin is the
reference): values per dtype and domain rounded to the dtype on the host, the operand
layouts every case runs over, and one comparison of a device result with a NumPy value."""
import zlib

import numpy as np

import ember

__all__ = ["DTYPES", "FLOATS", "INTS", "NUMERIC", "INTS_BOOL", "LAYOUTS", "edtype", "round_to",
           "suite_dtypes",
           "values", "seeded", "to_device", "read", "view", "check", "tolerance", "np_dtype"]

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64")
FLOATS = DTYPES[6:]
INTS = DTYPES[1:6]
NUMERIC = DTYPES[1:]
INTS_BOOL = DTYPES[:6]


def suite_dtypes(row):
    """The dtypes of an op-table row (core/optable.py) that the suite covers: the kernel's,
    less the unsigned dtypes of limited support."""
    return tuple(t for t in DTYPES if t in row.dtype_names)

# operand layouts: contiguous, strided (transposed and sliced with a step), broadcast
# (stride 0), zero-size and 0-d; each is a base shape and a view of it
LAYOUTS = ("contiguous", "strided", "broadcast", "empty", "scalar")
_BASE = {"contiguous": (3, 4), "strided": (8, 3), "broadcast": (1, 4), "empty": (0, 4),
         "scalar": ()}


def edtype(name):
    return getattr(ember, name)


def np_dtype(name):
    """The host dtype a dtype's values are held in (bfloat16: float32)."""
    return np.dtype("float32" if name == "bfloat16" else name)


def round_to(arr, name):
    """`arr`'s values as `name` holds them: floats come back as float64, integers wrap."""
    arr = np.asarray(arr)
    if name == "bool":
        return arr.astype(bool)
    if name in INTS:
        return arr.astype(np.int64).astype(name)
    if name == "bfloat16":
        bits = np.asarray(arr, np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000     # nearest even
        out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
        return np.where(np.isnan(arr), np.nan, out)
    return arr.astype(name).astype(np.float64)


def values(rng, shape, name, domain="any"):
    """Values of dtype `name` (host, already rounded) in a domain:
    any, positive (> 0), unit (|x| < 1), small (|x| <= 2 or 0..3), nonzero, integer
    (whole numbers in -3..3, 0..6 for uint8, in every dtype: sums of many stay exact)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    if domain == "integer":
        lo = 0 if name == "uint8" else -3
        return round_to(rng.integers(lo, lo + 7, size=shape), name)
    if name in INTS:
        lo = {"positive": 1, "small": 0, "nonzero": 1}.get(domain, -9)
        if name == "uint8":
            lo = max(lo, 0)
        hi = 4 if domain == "small" else 10
        v = rng.integers(lo, hi, size=shape)
        if domain == "nonzero" and name != "uint8":
            v = v * rng.choice([-1, 1], size=shape)
        return round_to(v, name)
    if domain == "positive":
        v = rng.uniform(0.25, 4.0, shape)
    elif domain == "unit":
        v = rng.uniform(-0.9, 0.9, shape)
    elif domain == "small":
        v = rng.uniform(-2.0, 2.0, shape)
    elif domain == "nonzero":
        v = rng.uniform(0.5, 4.0, shape) * rng.choice([-1.0, 1.0], size=shape)
    else:
        v = rng.standard_normal(shape) * 2
    return round_to(v, name)


def seeded(*parts):
    """A NumPy generator seeded from the parts (stable across processes)."""
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def to_device(arr, name, device):
    """A tensor of dtype `name` on `device` holding the host values `arr`."""
    return ember.tensor(np.asarray(arr).astype(np_dtype(name)), dtype=edtype(name),
                        device=device)


def read(t):
    """A device tensor's values on the host (through the device's own to_host)."""
    return np.asarray(t.numpy(force=True))


def view(layout, x, shape=None):
    """The layout's view of `x` (an ember tensor or a NumPy array of the layout's base
    shape); `shape` is the broadcast target (default (3, 4))."""
    if layout == "strided":
        return x.T[:, ::2] if isinstance(x, np.ndarray) else x.t()[:, ::2]
    if layout == "broadcast":
        shape = shape or (3, 4)
        return np.broadcast_to(x, shape) if isinstance(x, np.ndarray) else x.expand(*shape)
    return x


def base_shape(layout):
    return _BASE[layout]


_TOL = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-10}


def tolerance(name, scale=1.0):
    t = _TOL.get(name, 0.0) * scale
    return t, t


def check(got, want, dtype, device, tol=None, what="result"):
    """`got` (an ember tensor) is on `device`, of dtype `dtype`, of want's shape and holds
    want's values (NaN matching NaN); floats within `tol` = (rtol, atol)."""
    assert isinstance(got, ember.Tensor), f"{what}: expected a Tensor, got {type(got)}"
    dev = ember.device(device)
    assert got.device.type == dev.type, f"{what}: on {got.device}, expected {dev}"
    assert got.dtype == edtype(dtype), f"{what}: dtype {got.dtype}, expected ember.{dtype}"
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape, f"{what}: shape {tuple(got.shape)} != {want.shape}"
    have = read(got)
    if dtype in FLOATS:
        rtol, atol = tol if tol is not None else tolerance(dtype)
        np.testing.assert_allclose(have.astype(np.float64), round_to(want, dtype),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(have, want.astype(np_dtype(dtype)), err_msg=what)
