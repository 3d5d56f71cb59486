"""Graphs with symbolic sizes (``dynamic=True``, or the recapture after a size changed),
fused per concrete shape.

The code generators write kernels for static sizes.  A symbolic graph's callable runs the
first call of each new set of argument shapes op by op, recording every value's concrete
shape, strides and dtype; it then compiles that specialised copy of the graph (the sizes
it computes become constants) and runs later calls with those shapes through it.  Past
``LIMIT`` shapes, new ones run op by op: a training loop's last, smaller batch gets its own
kernels, a stream of distinct sequence lengths does not compile forever.
"""
import copy

from ember.core._tensor import TensorBase
from ember.fx.graph_module import GraphModule
from ember.fx.interpreter import Interpreter
from ember.fx.node import map_arg

__all__ = ["LIMIT", "SpecializingGraph", "specialize"]

LIMIT = 8


def _describe(v):
    from ember._dynamo.capture import describe
    if isinstance(v, TensorBase):
        return describe(v)
    if isinstance(v, (tuple, list)):
        return type(v)(_describe(x) for x in v)
    return v


class _Recorder(Interpreter):
    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        self.values = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n] = v
        return v


def specialize(gm, args):
    """Run ``gm`` on ``args`` op by op; returns (its outputs, a static copy of ``gm``: every
    node's ``meta["val"]`` the description of the value it had, and every number it had
    (a SymInt placeholder, size arithmetic) a constant where it is read)."""
    graph = copy.deepcopy(gm.graph)
    module = GraphModule(gm, graph)
    rec = _Recorder(module)
    out = rec.run(*args)
    numbers = {}
    for node in graph.nodes:
        if node.op == "output":
            continue
        v = rec.values.get(node)
        node.meta["val"] = _describe(v)
        if isinstance(v, (bool, int, float)):
            numbers[node] = v
    for node in graph.nodes:
        if node.op != "placeholder":
            node.args = map_arg(node.args, lambda n: numbers.get(n, n))
            node.kwargs = map_arg(node.kwargs, lambda n: numbers.get(n, n))
    rec.values.clear()
    graph.eliminate_dead_code()
    return out, GraphModule(gm, graph)


class SpecializingGraph:
    """The callable ``compile_fx`` returns for a graph with symbolic sizes: compiled
    (``compile(static_gm, args)``) once per concrete shape of its arguments, op by op for
    the first call of each shape and past ``LIMIT`` shapes."""

    def __init__(self, gm, compile):
        self.gm, self.compile = gm, compile
        self.compiled = {}

    @staticmethod
    def _key(args):
        return tuple((tuple(a.shape), a.stride(), a.dtype, a.device)
                     if isinstance(a, TensorBase) else a for a in args)

    def __call__(self, *args):
        key = self._key(args)
        fn = self.compiled.get(key)
        if fn is not None:
            return fn(*args)
        if len(self.compiled) >= LIMIT:
            return self.gm.forward(*args)
        out, static = specialize(self.gm, args)
        self.compiled[key] = self.compile(static, args)
        return out
