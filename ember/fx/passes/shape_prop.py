"""ShapeProp (``torch.fx.passes.shape_prop``): run a GraphModule on example inputs and
record each tensor value's shape, dtype and strides in ``node.meta['tensor_meta']``."""
from typing import NamedTuple

from ember.fx.interpreter import Interpreter
from ember.fx.node import map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    shape: tuple
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


def _extract(t):
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), None, False, {})


class ShapeProp(Interpreter):
    """Records ``tensor_meta`` (and ``type``) on every node while running the graph."""

    def run_node(self, n):
        from ember.core.tensor import Tensor
        result = super().run_node(n)
        found = []

        def meta(x):
            if isinstance(x, Tensor):
                found.append(True)
                return _extract(x)
            return x
        m = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = m
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args`` (recording metadata); returns its result."""
        return super().run(*args)
