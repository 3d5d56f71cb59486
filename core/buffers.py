"""Tensors over existing memory: ``asarray`` (NumPy's semantics: share when possible, copy
on request), ``frombuffer`` (any object with the buffer protocol) and ``from_file``."""
import warnings

from ember.core import _tensor as _T
from ember.core._autograd import set_requires_grad
from ember.core._device import device as _device
from ember.core._dtype import as_dtype
from ember.core._errors import _scalar_name
from ember.core._tensor import TensorBase
from ember.core.conversions import _shareable, as_tensor

__all__ = ["asarray", "from_file", "frombuffer"]

_warned_readonly = False


def _np():
    import numpy
    return numpy


def _np_dtype(dtype):
    np = _np()
    if dtype.name == "bfloat16":
        raise TypeError("frombuffer: bfloat16 has no NumPy dtype to read a buffer as")
    return np.dtype(dtype.np_dtype)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over ``buffer``'s memory (shared: writes show in both), ``count``
    elements of ``dtype`` from byte ``offset`` (-1: to the end)."""
    global _warned_readonly
    np = _np()
    dt = as_dtype(dtype, "frombuffer", "dtype")
    view = memoryview(buffer)
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % dt.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({dt.itemsize})")
        count = (length - offset) // dt.itemsize
    if offset + count * dt.itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {dt.itemsize} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer "
                         f"length ({length} bytes)")
    arr = np.frombuffer(buffer, dtype=_np_dtype(dt), count=count, offset=offset)
    if not arr.flags.writeable:
        if not _warned_readonly:
            warnings.warn("The given buffer is not writable, and ember does not support "
                          "non-writable tensors: the tensor holds a copy of it. This warning "
                          "is shown once.", UserWarning, stacklevel=2)
            _warned_readonly = True
        arr = arr.copy()
    return set_requires_grad(_T.from_numpy(arr), requires_grad)


def _is_buffer(obj):
    if isinstance(obj, (TensorBase, list, tuple, str, int, float, complex, bool)):
        return False
    if type(obj).__module__ == "numpy":
        return False
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing its memory when ``copy`` is not True and the dtype and
    device allow it (``copy=False`` makes a copy an error): tensors, NumPy arrays, objects
    with the buffer protocol (read as ``dtype``, default the default float dtype), numbers
    and nested sequences."""
    from ember.core._state import get_default_dtype
    dt = None if dtype is None else as_dtype(dtype, "asarray", "dtype")
    dev = None if device is None else _device(device)
    if isinstance(obj, TensorBase):
        same = (dt is None or obj.dtype is dt) and (dev is None or obj.device == dev)
        if copy is False and not same:
            raise ValueError(f"can't alias tensor with dtype '{_scalar_name(obj)}' into dtype "
                             f"'{_T._st_name(dt)}'." if dt is not None and obj.dtype is not dt
                             else "can't alias tensor into another device")
        result = obj if same and not copy else obj.to(
            device=dev or obj.device, dtype=dt or obj.dtype, copy=bool(copy))
    elif type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        if copy is False:
            if not _shareable(obj) or (dev is not None and dev.type != "cpu"):
                raise ValueError("can't alias NumPy array: it is not writable, has negative "
                                 "strides, or lives on another device")
            shared = _T.from_numpy(obj)
            if dt is not None and shared.dtype is not dt:
                raise ValueError(f"can't alias tensor with dtype '{_scalar_name(shared)}' into "
                                 f"dtype '{_T._st_name(dt)}'.")
            result = shared
        elif copy:
            result = _T.tensor(obj, dtype=dt, device=dev)
        else:
            result = as_tensor(obj, dt, dev)
    elif _is_buffer(obj):
        result = frombuffer(obj, dtype=dt or get_default_dtype())
        if dev is not None:
            result = result.to(dev)
        if copy:
            result = result.clone()
    else:
        if copy is False:
            raise ValueError(f"can't alias a {type(obj).__name__}: asarray(copy=False) needs "
                             f"a tensor, an array or a buffer")
        result = _T.tensor(obj, dtype=dt, device=dev)
    return set_requires_grad(result, requires_grad) if requires_grad else result


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False):
    """``size`` elements of ``dtype`` read from ``filename``; ``shared=True`` maps the file,
    so writes to the tensor reach it."""
    from ember.core._state import get_default_dtype
    np = _np()
    dt = get_default_dtype() if dtype is None else as_dtype(dtype, "from_file", "dtype")
    npdt = _np_dtype(dt)
    nbytes = size * dt.itemsize
    import os
    actual = os.path.getsize(filename) if os.path.exists(filename) else 0
    if shared:
        if actual < nbytes:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: file "
                               f"is {actual} bytes")
        arr = np.memmap(filename, dtype=npdt, mode="r+", shape=(size,))
    else:
        if actual < nbytes:
            raise RuntimeError(f"unable to read {nbytes} bytes from file <{filename}>: file "
                               f"is {actual} bytes")
        arr = np.fromfile(filename, dtype=npdt, count=size)
    t = _T.from_numpy(np.asarray(arr) if not shared else arr)
    return t if device is None else t.to(device)
