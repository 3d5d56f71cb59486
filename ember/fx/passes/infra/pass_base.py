"""PassBase and PassResult (``torch.fx.passes.infra.pass_base``)."""
from collections import namedtuple

__all__ = ["PassBase", "PassResult"]


class PassResult(namedtuple("PassResult", ["graph_module", "modified"])):
    """What a pass returns: the (possibly new) GraphModule and whether it changed."""

    __slots__ = ()


class PassBase:
    """A graph pass: ``requires`` checks its input, ``call`` does the work and returns a
    PassResult, ``ensures`` checks the result; calling the pass runs the three."""

    def __call__(self, graph_module):
        self.requires(graph_module)
        res = self.call(graph_module)
        self.ensures(graph_module)
        return res

    def call(self, graph_module):
        raise NotImplementedError(f"{type(self).__name__}.call")

    def requires(self, graph_module):
        pass

    def ensures(self, graph_module):
        pass
