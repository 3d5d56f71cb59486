"""torch.as_tensor: data as a tensor, sharing memory with a tensor or a NumPy array when the
dtype and device allow it."""
from ember.core import _tensor as _T
from ember.core._device import device as _device
from ember.core._dtype import as_dtype, dtype_from_numpy
from ember.core._tensor import TensorBase

__all__ = ["as_tensor"]


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor of ``dtype`` on ``device``: a tensor with those already is
    returned as is, and a CPU NumPy array of a matching dtype is shared (from_numpy);
    anything else is copied."""
    dt = None if dtype is None else as_dtype(dtype, "as_tensor", "dtype")
    dev = None if device is None else _device(device)
    if isinstance(data, TensorBase):
        if (dt is None or data.dtype is dt) and (dev is None or data.device == dev):
            return data
        return data.to(device=dev if dev is not None else data.device,
                       dtype=dt if dt is not None else data.dtype)
    if type(data).__module__ == "numpy" and type(data).__name__ == "ndarray" \
            and (dev is None or dev.type == "cpu") and _shareable(data):
        t = _T.from_numpy(data)
        if dt is None or t.dtype is dt:
            return t
        return t.to(dt)
    return _T.tensor(data, dtype=dt, device=dev)


def _shareable(arr):
    """from_numpy takes it: a supported dtype, writable, no negative strides."""
    try:
        return arr.flags.writeable and all(s >= 0 for s in arr.strides) and \
            dtype_from_numpy(arr.dtype) is not None
    except (TypeError, KeyError, AttributeError):
        return False
