"""Tensor's methods that are built from tables (the op table's rows, the in-place forms of
composites, the dtype shorthands, ...): each table becomes a mixin class declared beside the
ops it holds, and ember.Tensor lists the mixins among its bases (core/tensor.py)."""

__all__ = ["method_table"]


def method_table(name, methods, doc):
    """A slot-less mixin class ``name`` whose attributes are ``methods`` ({name: method})."""
    return type(name, (), {"__slots__": (), "__doc__": doc, "__module__": "ember.core.tensor",
                           **methods})
