"""Tensor layouts (``ember.layout``, ``ember.strided``): every ember tensor is strided
(dense); the sparse layouts are not implemented."""

__all__ = ["layout", "strided"]


class layout:
    """The type of the layout constants (``torch.layout``)."""
    __slots__ = ("_name",)
    __module__ = "ember"

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name               # pickles as the module-level constant


strided = layout("strided")
