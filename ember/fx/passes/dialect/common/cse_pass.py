"""Common subexpression elimination (``torch.fx.passes.dialect.common.cse_pass``)."""
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import map_arg
from ember.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = ["CSEPass"]


def _hashable(a):
    if isinstance(a, (list, tuple)):
        return (type(a).__name__,) + tuple(_hashable(x) for x in a)
    if isinstance(a, dict):
        return ("dict",) + tuple((k, _hashable(v)) for k, v in a.items())
    if isinstance(a, slice):
        return ("slice", _hashable(a.start), _hashable(a.stop), _hashable(a.step))
    hash(a)
    return (type(a), a)


class CSEPass(PassBase):
    """Replace nodes that compute the same thing as an earlier node (same target, same
    arguments, no side effects) by that node.

    Args:
        banned_ops: targets never merged (e.g. random ops whose repeated calls differ).
    """

    def __init__(self, banned_ops=None):
        self.banned_ops = set(banned_ops or ())

    def call(self, graph_module):
        new_graph = Graph()
        env, seen = {}, {}
        modified = False
        for n in graph_module.graph.nodes:
            if n.op in ("placeholder", "output", "get_attr") or n.is_impure() \
                    or n.target in self.banned_ops:
                env[n] = new_graph.node_copy(n, lambda x: env[x])
                continue
            args = map_arg(n.args, lambda x: env[x])
            kwargs = map_arg(n.kwargs, lambda x: env[x])
            try:
                key = (n.op, n.target, _hashable(args), _hashable(kwargs))
            except TypeError:           # an unhashable constant argument: keep the node
                env[n] = new_graph.node_copy(n, lambda x: env[x])
                continue
            if key in seen:
                env[n] = seen[key]
                modified = True
                continue
            env[n] = seen[key] = new_graph.node_copy(n, lambda x: env[x])
        return PassResult(GraphModule(graph_module, new_graph), modified)
