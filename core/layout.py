"""Tensor layouts (``ember.layout``, ``ember.strided``): every ember tensor is strided
(dense); the sparse layouts are not implemented."""

__all__ = ["layout", "strided"]


class _NamedConstant:
    """A named constant of the ember namespace (layouts, memory formats): shown and pickled
    as ``ember.<name>``."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name               # pickles as the module-level constant


class layout(_NamedConstant):
    """The type of the layout constants (``torch.layout``)."""
    __slots__ = ()
    __module__ = "ember"


strided = layout("strided")
