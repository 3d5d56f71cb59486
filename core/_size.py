"""ember.Size: the type of ``Tensor.shape``, a tuple of ints (or SymInts: a fake tensor's)."""
import operator

from ember.core._sym import SymInt


def _size(s, i):
    """Entry ``i`` of a Size (not a plain int): a SymInt stays symbolic (``__index__``
    would specialise it to its hint); anything without ``__index__`` is a TypeError."""
    if isinstance(s, SymInt):
        return s
    try:
        return operator.index(s)
    except TypeError:
        from ember.core._errors import _type_name
        raise TypeError(f"ember.Size() takes an iterable of 'int' (item {i} is "
                        f"'{_type_name(s)}')") from None


class Size(tuple):
    """A tuple subclass describing a tensor's shape, as ``torch.Size``."""

    __slots__ = ()
    __module__ = "ember"

    def __new__(cls, sizes=()):
        return tuple.__new__(cls, [s if type(s) is int else _size(s, i)
                                   for i, s in enumerate(sizes)])

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
