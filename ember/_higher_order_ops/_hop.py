"""HigherOrderOperator: an operator whose arguments include functions (``torch._ops``).

``ember.cond`` and ``ember.while_loop`` are what users call; the operators here are what a
captured graph calls (``ember.ops.higher_order.cond(pred, true_graph, false_graph,
operands)``), with the branches as GraphModules and the operands flattened.
"""

__all__ = ["HigherOrderOperator", "higher_order"]


class _Namespace:
    """``ember.ops.higher_order``: the higher-order operators by name."""

    def __init__(self):
        self._ops = {}

    def __getattr__(self, name):
        try:
            return self.__dict__["_ops"][name]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' 'higher_order' object has no attribute "
                                 f"'{name}'") from None

    def __dir__(self):
        return sorted(self._ops)


higher_order = _Namespace()


class HigherOrderOperator:
    """An operator taking functions as arguments; subclasses implement ``__call__`` with
    the graph form's arguments.  Instances register under ``ember.ops.higher_order``."""

    _is_impure = False

    def __init__(self, name):
        self._name = name
        self.__name__ = self.__qualname__ = self._fx_name = name
        self._fx_qualname = f"ember.ops.higher_order.{name}"
        higher_order._ops[name] = self

    def name(self):
        return self._name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")

    def __repr__(self):
        return self._fx_qualname

    def __reduce__(self):
        return (getattr, (higher_order, self._name))
