"""Parameter and Buffer: the tensors a Module registers (``torch.nn.parameter``)."""
import inspect

from ember.core._autograd import set_requires_grad
from ember.core.tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


def _empty():
    from ember.core._tensor import empty
    return empty(0)


def _check_data(data):
    # PyTorch calls data.detach() first: a non-tensor fails there
    if not isinstance(data, Tensor):
        raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")


class _ParameterMeta(type):
    # a tensor subclass instance made a parameter keeps its class and is marked `_is_param`:
    # isinstance(t, Parameter) looks for the mark
    def __instancecheck__(cls, instance):
        if cls is Parameter and isinstance(instance, Tensor) \
                and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that a Module registers as a parameter when assigned as its attribute.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage and is a leaf;
    results of ops on a Parameter are plain Tensors, as in PyTorch. ``data`` of a Tensor
    subclass gives an instance of that subclass marked as a parameter."""

    __module__ = "ember.nn.parameter"

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty()
        _check_data(data)
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        subclass = type(data) not in (Tensor, Parameter)
        param = Tensor._make_subclass(type(data) if subclass else cls, data)
        param.requires_grad = bool(requires_grad)
        if subclass:
            param._is_param = True
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
        _check_data(data)
        t = set_requires_grad(data.detach(), data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# --- uninitialized (lazy) parameters and buffers --------------------------------------------

# what an uninitialized tensor still allows (PyTorch's list): size, dtype/device moves,
# copy_ and type queries; every other Tensor method raises ValueError
_LAZY_ALLOWED = frozenset({"size", "copy_", "is_complex", "is_floating_point", "half", "float",
                           "double", "bfloat16", "char", "short", "int", "long", "cuda", "cpu",
                           "to", "get_device", "type", "requires_grad_"})
_LAZY_CONVERSIONS = ("to", "cpu", "cuda", "half", "float", "double", "bfloat16", "char",
                     "short", "int", "long")
_LAZY_DUNDERS = ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
                 "__mul__", "__rmul__", "__imul__", "__truediv__", "__rtruediv__",
                 "__itruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__pow__",
                 "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__",
                 "__getitem__", "__setitem__", "__lt__", "__le__", "__gt__", "__ge__",
                 "__and__", "__or__", "__xor__", "__invert__", "__len__", "__iter__",
                 "__float__", "__int__", "__bool__", "__array__")


def _refuse(name):
    def method(self, *args, **kwargs):
        raise ValueError(f"Attempted to use an uninitialized parameter in {name}. This error "
                         f"happens when you are using a `LazyModule` or explicitly "
                         f"manipulating `torch.nn.parameter.{type(self).__name__}` objects. "
                         f"When using LazyModules Call `forward` with a dummy batch to "
                         f"initialize the parameters before calling torch functions")
    method.__name__ = name
    return method


def _convert(name):
    def method(self, *args, **kwargs):
        data = self.data            # convert the (shapeless) data: ops read .shape
        moved = getattr(Tensor, name)(data, *args, **kwargs)
        if moved.dtype == data.dtype and moved.device == data.device:
            return self
        return self._uninitialized_like(moved.device, moved.dtype)
    method.__name__ = name
    return method


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: no data (an empty tensor
    that only remembers device and dtype) until ``materialize(shape)``; using one in an op
    raises ValueError, as PyTorch's ``__torch_function__`` guard does."""

    def materialize(self, shape, device=None, dtype=None):
        """Give this tensor storage of ``shape`` (uninitialised values; ``device`` and
        ``dtype`` default to the ones it was created with) and turn it, in place, into a
        ``cls_to_become`` (Parameter or Tensor), so references to it stay valid."""
        data = self.data
        self.data = _T_empty(shape, device=data.device if device is None else device,
                             dtype=data.dtype if dtype is None else dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            data = self.data
            memo[id(self)] = self._uninitialized_like(data.device, data.dtype)
        return memo[id(self)]


for _name in _LAZY_DUNDERS:
    setattr(UninitializedTensorMixin, _name, _refuse(_name))
for _name in dir(Tensor):
    if (not _name.startswith("_") and _name not in _LAZY_ALLOWED
            and _name not in UninitializedTensorMixin.__dict__      # its own (share_memory_)
            and callable(getattr(Tensor, _name)) and not isinstance(
                inspect.getattr_static(Tensor, _name), (property, type(Tensor.dtype)))):
        setattr(UninitializedTensorMixin, _name, _refuse(_name))
for _name in _LAZY_CONVERSIONS:
    setattr(UninitializedTensorMixin, _name, _convert(_name))


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


def _T_empty(*args, **kwargs):
    from ember.core._tensor import empty
    return empty(*args, **kwargs)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's weight):
    ``UninitializedParameter(requires_grad=True, device=None, dtype=None)``. Only dtype and
    device moves are allowed until ``materialize`` makes it a regular Parameter."""

    __module__ = "ember.nn.parameter"
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        param = Tensor._make_subclass(cls, _T_empty(0, device=device, dtype=dtype))
        param.requires_grad = bool(requires_grad)
        return param

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def _uninitialized_like(self, device, dtype):
        return type(self)(self.requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy norm's running statistics):
    ``UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)``;
    ``materialize`` makes it a regular Tensor."""

    __module__ = "ember.nn.parameter"
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        buf = Tensor._make_subclass(cls, _T_empty(0, device=device, dtype=dtype))
        buf.requires_grad = bool(requires_grad)
        buf.persistent = persistent
        buf._is_buffer = True
        return buf

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def _uninitialized_like(self, device, dtype):
        return type(self)(self.requires_grad, device, dtype, self.__dict__.get("persistent",
                                                                             True))
