"""Lazy modules (``torch.nn.modules.lazy``): layers whose input size is inferred from the
first batch.  A lazy module holds UninitializedParameters; a forward pre-hook materialises
them from the first input, then the module turns into its ``cls_to_become`` (LazyLinear
into Linear, ...).  The parameters change in place, so an optimizer built before that first
forward holds the same (now materialised) objects."""
import itertools

from ember.autograd.grad_mode import no_grad

from ..parameter import UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyLinear", "LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules whose parameters are shaped by the first input.

    A subclass creates UninitializedParameter/UninitializedBuffer entries and implements
    ``initialize_parameters(*args, **kwargs)`` (materialise them from the forward's
    arguments); ``cls_to_become`` names the class the module becomes afterwards.  A
    state_dict saved before or after initialisation loads into either kind of module."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # uninitialized entries go in as they are (detach() would drop their laziness)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        """load_state_dict pre-hook: an uninitialized entry takes the shape of the
        initialized tensor being loaded into it."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                if not is_lazy(state_dict[key]):
                    with no_grad():
                        param.materialize(state_dict[key].shape)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # an uninitialized entry loaded into an uninitialized one: nothing to copy
        both = {prefix + name for name, t in itertools.chain(self._parameters.items(),
                                                             self._buffers.items())
                if is_lazy(t) and is_lazy(state_dict.get(prefix + name))}
        if both:
            state_dict = {k: v for k, v in state_dict.items() if k not in both}
        seen = len(missing_keys)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)
        missing_keys[seen:] = [k for k in missing_keys[seen:] if k not in both]

    def initialize_parameters(self, *args, **kwargs):
        """Materialise the parameters from the forward's arguments (subclasses)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialise from the first batch, drop both hooks and
        become ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is ``input.shape[-1]`` of the first input:
    ``LazyLinear(out_features, bias=True, device=None, dtype=None)``; becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)         # no tensors that are replaced right away
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """Linear's initialisation, once the parameters have a shape."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """in_features from the input's last dim; materialise and initialise."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input's channel dim (batched or unbatched)."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """in_channels from the input; materialise and initialise weight and bias."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                shape = (self.out_channels, self.in_channels // self.groups)
                if self.transposed:         # [in, out / groups, *k]
                    shape = (self.in_channels, self.out_channels // self.groups)
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = len(self.kernel_size) + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


def _lazy_conv(name, base, transposed):
    """LazyConv{1,2,3}d / LazyConvTranspose{1,2,3}d: ``base`` without ``in_channels``."""
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding,
                                     groups, False, dilation, padding_mode, device=device,
                                     dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups,
                                     False, padding_mode, device=device, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)
    doc = (f"A {base.__name__} whose ``in_channels`` comes from the first input: "
           f"``{name}(out_channels, kernel_size, ...)`` with {base.__name__}'s other "
           f"arguments; becomes a {base.__name__}.")
    # PyTorch's module path, so pickles and safe-globals lists name them as it does
    return type(name, (_LazyConvXdMixin, base), {
        "__init__": __init__, "cls_to_become": base, "__doc__": doc,
        "__module__": "ember.nn.modules.conv", "__qualname__": name})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, True)
LazyLinear.__module__ = "ember.nn.modules.linear"
