"""Higher-order operators (``torch._higher_order_ops``): control flow that ``ember.compile``
and ``ember.export`` keep in one graph.  ``cond`` and ``while_loop`` are also ``ember.cond``
and ``ember.while_loop``; the graph forms are ``ember.ops.higher_order.<name>``."""
from ember._higher_order_ops._hop import HigherOrderOperator as HigherOrderOperator
from ember._higher_order_ops.cond import cond as cond
from ember._higher_order_ops.while_loop import while_loop as while_loop

__all__ = ["HigherOrderOperator", "cond", "while_loop"]
