"""ember.autograd.variable (``torch.autograd.variable``): Variable, the name tensors had
before they carried autograd themselves; ``Variable(t)`` is ``t``."""
from ember.core._autograd import set_requires_grad
from ember.core.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """``Variable._execution_engine``: what code reaching into PyTorch's engine calls."""

    @staticmethod
    def queue_callback(callback):
        """Run ``callback()`` once the backward pass running now has run every node."""
        from ember.core._autograd import _queue_callback
        _queue_callback(callback)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: the tensor itself (flagged when asked);
    every tensor is an instance."""

    _execution_engine = _ExecutionEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from ember.core import _tensor as _T
            data = _T.empty(0)
        if requires_grad:
            set_requires_grad(data, True)
        return data
