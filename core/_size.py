"""ember.Size: the type of ``Tensor.shape``, a tuple of ints (or SymInts: a fake tensor's)."""
from ember.core._sym import SymInt


def _size(s):
    # a SymInt stays symbolic (``__index__`` would specialise it to its hint)
    return s if type(s) is int or isinstance(s, SymInt) else s.__index__()


class Size(tuple):
    """A tuple subclass describing a tensor's shape, as ``torch.Size``."""

    __slots__ = ()
    __module__ = "ember"

    def __new__(cls, sizes=()):
        return tuple.__new__(cls, (_size(s) for s in sizes))

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))

    def numel(self):
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n
