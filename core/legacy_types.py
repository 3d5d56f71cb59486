"""PyTorch's legacy tensor types (``FloatTensor``, ``cuda.LongTensor``, ...): classes that
build tensors of one dtype and device (``FloatTensor(2, 3)``, ``FloatTensor([1, 2])``),
answer ``isinstance`` by dtype and device, and name a tensor's type (``t.type()``)."""
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name

__all__ = ["LEGACY_NAMES", "legacy_class", "resolve", "type_name"]

# legacy name -> dtype name
LEGACY_NAMES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
                "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64",
                "BoolTensor": "bool"}
_BY_DTYPE = {v: k for k, v in LEGACY_NAMES.items()}
_CLASSES = {}


class _LegacyTensorType(type):
    """The metaclass of the legacy types: constructing one makes an ordinary tensor."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _T.TensorBase) and obj.dtype is cls.dtype and \
            obj.device.type == cls._device_type

    def __call__(cls, *args, device=None):
        _check_available(cls)
        dev = device if device is not None else cls._device_type
        dtype = cls.dtype
        if not args:
            return _T.empty(0, dtype=dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], _T.TensorBase):
            t = args[0]
            if t.dtype is not dtype or t.device.type != cls._device_type:
                raise TypeError(f"expected {cls.__name__} (dtype={dtype}, device="
                                f"{cls._device_type}), got a tensor of dtype {t.dtype} on "
                                f"{t.device}")
            return t
        if all(isinstance(a, int) for a in args):
            return _T.empty(*args, dtype=dtype, device=dev)
        if len(args) == 1 and type(args[0]).__name__ == "Size":       # FloatTensor(t.shape)
            return _T.empty(*args[0], dtype=dtype, device=dev)
        if len(args) == 1:
            return _T.tensor(args[0], dtype=dtype, device=dev)
        raise TypeError(f"{cls.__name__}(): expected sizes or one sequence of data, got "
                        f"{args!r}")

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _check_available(cls):
    """PyTorch's TypeError for a legacy type of a device type it cannot use here."""
    if cls._device_type != "cpu":
        from ember.backends import _runtimes
        runtime = _runtimes.runtime(cls._device_type)
        if not runtime.is_available():
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available: "
                            f"{runtime.unavailable_reason()}")


def legacy_class(name, device_type="cpu"):
    """The legacy type ``name`` ("FloatTensor") of ``device_type`` ('cpu' or 'cuda')."""
    key = (name, device_type)
    cls = _CLASSES.get(key)
    if cls is None:
        module = "ember" if device_type == "cpu" else f"ember.{device_type}"
        cls = _LegacyTensorType(name, (), {
            "dtype": _dtype_by_name[LEGACY_NAMES[name]], "_device_type": device_type,
            "is_cuda": device_type == "cuda", "is_sparse": False, "__module__": module,
            "__doc__": f"Tensors of dtype {LEGACY_NAMES[name]} on {device_type} (legacy)."})
        _CLASSES[key] = cls
    return cls


def type_name(t):
    """``t.type()``: 'ember.FloatTensor', 'ember.cuda.LongTensor', ..."""
    legacy = _BY_DTYPE.get(t.dtype.name)
    if legacy is None:                        # complex and the limited unsigned dtypes
        legacy = f"{_T._st_name(t.dtype)}Tensor"
    prefix = "ember" if t.device.type == "cpu" else f"ember.{t.device.type}"
    return f"{prefix}.{legacy}"


def resolve(spec):
    """A legacy type class from itself or its name ('torch.FloatTensor', 'ember.cuda.
    IntTensor', 'FloatTensor'); TypeError for anything else."""
    if isinstance(spec, _LegacyTensorType):
        return spec
    if isinstance(spec, str):
        parts = spec.split(".")
        if parts[0] in ("torch", "ember"):
            parts = parts[1:]
        device_type = "cpu"
        if len(parts) == 2 and parts[0] == "cuda":
            device_type, parts = "cuda", parts[1:]
        if len(parts) == 1 and parts[0] in LEGACY_NAMES:
            return legacy_class(parts[0], device_type)
        raise ValueError(f"invalid type: '{spec}'")
    raise TypeError(f"expected a legacy tensor type or its name, got {spec!r}")
