"""Parameter and Buffer: the tensors a Module registers (``torch.nn.parameter``)."""
from ember.core.tensor import Tensor

__all__ = ["Buffer", "Parameter"]


def _empty():
    from ember.core._tensor import empty
    return empty(0)


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as its attribute.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage and is a leaf;
    results of ops on a Parameter are plain Tensors, as in PyTorch."""

    __module__ = "ember.nn.parameter"

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty()
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        param = Tensor._make_subclass(cls, data)
        param.requires_grad = bool(requires_grad)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass            # everything happened in __new__; Tensor.__init__ would re-parse args

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        import copy
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result

    def __reduce_ex__(self, protocol):
        # the data pickles as a plain tensor; the class, the flag and attributes ride along
        return (_rebuild_parameter, (self.data, self.requires_grad, dict(self.__dict__)))


def _rebuild_parameter(data, requires_grad, state):
    param = Parameter(data, requires_grad)
    param.__dict__.update(state)
    return param


class _BufferMeta(type):
    # a Buffer is a plain Tensor marked `_is_buffer`: isinstance() looks for the mark
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute:
    ``Buffer(data=None, *, persistent=True)`` (persistent buffers go into state_dict)."""

    __module__ = "ember.nn.parameter"

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty()
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
