"""ember.finfo / ember.iinfo: the numerical limits of the floating and integer dtypes;
ember.can_cast: PyTorch's casting rule between dtypes."""
from ember.core import _dtype

__all__ = ["can_cast", "checked_range", "finfo", "iinfo"]

_BOOL = _dtype._dtype_by_name["bool"]

# bits, eps, max, smallest normal (tiny), resolution (10**-precision)
_FLOAT = {
    "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
    "bfloat16": (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
    "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38,
                1e-06),
    "float64": (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308,
                1e-15),
}
_INT = {"uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -32768, 32767),
        "int32": (32, -2**31, 2**31 - 1), "int64": (64, -2**63, 2**63 - 1),
        "uint16": (16, 0, 2**16 - 1), "uint32": (32, 0, 2**32 - 1), "uint64": (64, 0, 2**64 - 1)}


class finfo:
    """Limits of a floating dtype: bits, eps, max, min, tiny (smallest_normal), resolution."""

    __module__ = "ember"

    def __init__(self, type=None):
        d = _dtype.as_dtype(_dtype._dtype_by_name["float32"] if type is None else type,
                            "finfo", "type")
        if d.is_complex:                    # a complex dtype's parts: its real dtype's limits
            d = d.to_real()
        if d.name not in _FLOAT:
            raise TypeError(f"finfo(): argument 'type' must be a floating point dtype, not {d}")
        self.dtype = d.name
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOAT[d.name]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = None                 # as torch.finfo: equal by dtype, not hashable

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:.6g}, max={self.max:.6g}, "
                f"eps={self.eps:.6g}, smallest_normal={self.tiny:.6g}, tiny={self.tiny:.6g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: bits, min, max."""

    __module__ = "ember"

    def __init__(self, type):
        d = _dtype.as_dtype(type, "iinfo", "type")
        if d.name not in _INT:
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, not {d}")
        self.dtype = d.name
        self.bits, self.min, self.max = _INT[d.name]

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def can_cast(from_, to):
    """PyTorch's casting rule: no cast down a category, bool < integral < floating <
    complex (so only bool casts to bool)."""
    for d, arg, position in ((from_, "from_", 1), (to, "to", 2)):
        if not isinstance(d, _dtype.dtype) and d not in (bool, int, float, complex):
            raise TypeError(f"can_cast(): argument '{arg}' (position {position}) must be "
                            f"ember.dtype, not {type(d).__name__}")
    from_, to = _dtype.as_dtype(from_), _dtype.as_dtype(to)

    def category(d):
        return 3 if d.is_complex else 2 if d.is_floating_point else 0 if d == _BOOL else 1
    return category(from_) <= category(to)


_CHECKED = {}       # dtype -> (lo, hi)


def checked_range(dt):
    """(lo, hi): the numbers c10's checked conversion takes into dtype ``dt`` (the range
    of ``fill``/``clamp`` bounds and of tensor(data, dtype=...)): a floating dtype its
    finite range (float64 everything), an unsigned integer -max..max (the negatives wrap),
    a signed integer its range."""
    r = _CHECKED.get(dt)
    if r is None:
        if dt.is_floating_point:
            m = finfo(dt).max
            r = (-float("inf"), float("inf")) if dt.name == "float64" else (-m, m)
        else:
            info = iinfo(dt)
            r = (-info.max if info.min == 0 else info.min, info.max)
        _CHECKED[dt] = r
    return r
