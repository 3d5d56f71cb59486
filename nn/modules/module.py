"""Module: the base class of every layer and model (``torch.nn.Module``).

Parameters, buffers and submodules live in three ordered dicts that ``__setattr__`` /
``__getattr__`` maintain; everything else (walking, conversion, state_dict, repr) is
built on those. Hooks and state_dict loading are in module_hooks.py / module_state.py."""
import itertools
import warnings
from typing import Any, TypeVar

from ember.core.tensor import Tensor
from ember.nn.modules import module_hooks as _hooks
from ember.nn.modules import module_state as _state
from ember.nn.modules.module_hooks import (  # noqa: F401  (PyTorch's module attributes)
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_buffer_registration_hooks,
    _global_forward_hooks,
    _global_forward_hooks_always_called,
    _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks,
    _global_module_registration_hooks,
    _global_parameter_registration_hooks,
    _WrappedHook,
)
from ember.nn.modules.module_state import (  # noqa: F401
    _EXTRA_STATE_KEY_SUFFIX,
    _IncompatibleKeys,
)
from ember.nn.parameter import Buffer, Parameter

from ember.autograd.grad_mode import no_grad

__all__ = ["Module", "register_module_backward_hook", "register_module_buffer_registration_hook",
           "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

register_module_forward_hook = _hooks.register_module_forward_hook
register_module_forward_pre_hook = _hooks.register_module_forward_pre_hook
register_module_backward_hook = _hooks.register_module_backward_hook
register_module_full_backward_hook = _hooks.register_module_full_backward_hook
register_module_full_backward_pre_hook = _hooks.register_module_full_backward_pre_hook
register_module_buffer_registration_hook = _hooks.register_module_buffer_registration_hook
register_module_module_registration_hook = _hooks.register_module_module_registration_hook
register_module_parameter_registration_hook = \
    _hooks.register_module_parameter_registration_hook


T = TypeVar("T", bound="Module")


def __getattr__(name):
    # rebound by module_hooks when a global backward hook is registered: read it there
    if name == "_global_is_full_backward_hook":
        return _hooks._global_is_full_backward_hook
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def _has_any_global_hook():
    return bool(_global_backward_pre_hooks or _global_backward_hooks
                or _global_forward_pre_hooks or _global_forward_hooks
                or _global_forward_hooks_always_called or _global_forward_hooks_with_kwargs)


def _forward_unimplemented(self, *input):
    """The computation; every subclass overrides it (call the module, not forward)."""
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              f'"forward" function')


def _typename(obj):
    from ember import typename
    return typename(obj)


_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "copy", "memory_format"})
_TO_OVERLOADS = ((), ("device",), ("device", "dtype"), ("dtype",), ("tensor",))


def _check_to_arguments(args, kwargs):
    """TypeError, as PyTorch's argument parser raises, for a call that matches none of
    to(device=None, dtype=None, non_blocking=False, copy=False), to(dtype, ...),
    to(tensor, ...)."""
    from ember import device, dtype

    def kind(a):
        if isinstance(a, Tensor):
            return "tensor"
        if isinstance(a, dtype):
            return "dtype"
        if isinstance(a, (str, int, device)) and not isinstance(a, bool):
            return "device"
        return None

    def name(a):
        return {"tensor": "Tensor", "dtype": "ember.dtype"}.get(kind(a), type(a).__name__)
    # None stands for the device or the dtype of to(device, dtype)
    kinds = [("device", "dtype")[i] if a is None and i < 2 else kind(a)
             for i, a in enumerate(args)]
    flags = 0
    while len(kinds) > 1 and isinstance(args[len(kinds) - 1], bool):
        kinds.pop()                  # non_blocking and copy, after the first argument
        flags += 1
    if tuple(kinds) in _TO_OVERLOADS and kwargs.keys() <= _TO_KEYWORDS:
        if flags > 1 or "copy" in kwargs:
            raise RuntimeError(".to() does not accept copy argument")
        return
    got = [name(a) for a in args] + [f"{k}={name(v)}" for k, v in kwargs.items()]
    raise TypeError("to() received an invalid combination of arguments - got (" +
                    ", ".join(got) + (", " if kwargs else "") + "), but expected one of:\n"
                    " * (ember.device device = None, ember.dtype dtype = None, bool "
                    "non_blocking = False, bool copy = False, *, ember.memory_format "
                    "memory_format = None)\n * (ember.dtype dtype, bool non_blocking = False, "
                    "bool copy = False, *, ember.memory_format memory_format = None)\n * (Tensor "
                    "tensor, bool non_blocking = False, bool copy = False, *, "
                    "ember.memory_format memory_format = None)\n")


def _addindent(text, spaces):
    """Indent every line of ``text`` but the first (nested reprs)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module(_hooks._HookMixin, _state._StateDictMixin):
    """Base class for all neural network modules; subclasses define ``forward``.

    Assigning a Parameter, a Buffer or a Module as an attribute registers it, so that
    parameters(), state_dict(), to() and friends see it."""

    __module__ = "ember.nn.modules.module"
    dump_patches = False
    _version = 1
    call_super_init = False
    training: bool
    # bumped by every attribute assignment on any Module: ember.compile's guards re-check
    # the Module attributes a captured graph depends on only when it has moved
    _attribute_epoch = 0

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        # object.__setattr__: our __setattr__ reads these dicts, so they come first
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        self._init_hooks(setattr_)
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented
    T_destination = TypeVar("T_destination", bound=dict[str, Any])

    def _slow_forward(self, *input, **kwargs):
        # PyTorch's forward under JIT tracing; ember has no tracer state, so plain forward
        return self.forward(*input, **kwargs)

    # registration ----------------------------------------------------------------------
    def _check_name(self, kind, name, own):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"" +
                           (f", got: {name}" if kind == "module" else ""))
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in own:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """Register ``tensor`` (or None) as buffer ``name``; non-persistent buffers are left
        out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(torch Tensor or None required)")
        tensor = _hooks._run_registration_hooks("buffer", self, name, tensor)
        Module._attribute_epoch += 1
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Register ``param`` (a Parameter, or None) as parameter ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                                f"'{name}' (torch.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                                 f"parameters must be created explicitly. To express '{name}' "
                                 f"as a function of another Tensor, compute the value in the "
                                 f"forward() method.")
        Module._attribute_epoch += 1
        if param is not None:       # registration hooks see real parameters only
            param = _hooks._run_registration_hooks("parameter", self, name, param)
        self._parameters[name] = param

    def add_module(self, name, module):
        """Register ``module`` (or None) as child ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        Module._attribute_epoch += 1
        self._modules[name] = _hooks._run_registration_hooks("module", self, name, module)

    def register_module(self, name, module):
        """Alias of add_module."""
        self.add_module(name, module)

    def __getattr__(self, name):
        # only reached when normal lookup fails: parameters, buffers and children
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _forget(self, name, *stores):
        for store in stores:
            store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __setattr__(self, name, value):
        Module._attribute_epoch += 1
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, d, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, d, self._parameters, self._buffers)
            self._modules[name] = _hooks._run_registration_hooks("module", self, name, value)
        elif d.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                f"(torch.nn.Module or None expected)")
            self._modules[name] = _hooks._run_registration_hooks("module", self, name, value)
        elif isinstance(value, Buffer) or (d.get("_buffers") is not None
                                           and name in self._buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                f"(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.__dict__.get("persistent", True)
            else:
                persistent = name not in self._non_persistent_buffers_set
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, d, self._parameters, self._modules)
            self.register_buffer(name, value, persistent)
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name):
        Module._attribute_epoch += 1
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        super().__delattr__(name)

    def __dir__(self):
        keys = itertools.chain(dir(type(self)), self.__dict__, self._parameters,
                               self._modules, self._buffers)
        # attribute names only: Sequential's children are named "0", "1", ...
        return sorted({k for k in keys if not k[0].isdigit()})

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)     # a compiled call does not pickle
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_hooks(lambda k, v: self.__dict__.setdefault(k, v))
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # lookup by dotted path -------------------------------------------------------------
    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ("" is self)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _get_leaf(self, target, is_kind, kind):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        value = getattr(mod, name)
        if not is_kind(mod, name, value):
            raise AttributeError(f"`{name}` is not {kind}")
        return value

    def get_parameter(self, target):
        """The parameter at dotted path ``target`` (e.g. "net.0.weight")."""
        # a parameter registered as None is no Parameter
        return self._get_leaf(target, lambda mod, name, value: isinstance(value, Parameter),
                              "an nn.Parameter")

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        return self._get_leaf(target, lambda mod, name, value: name in mod._buffers,
                              "a buffer")

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        # only a submodule is replaced, never a parameter or a plain attribute
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    # walking ---------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, parameter) pairs; a parameter shared by several modules comes once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        """The parameters of this module (and, with ``recurse``, of its descendants)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, buffer) pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        """The buffers of this module (and, with ``recurse``, of its descendants)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self):
        """(name, module) for each direct child, each module once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        """The direct children."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for self and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self):
        """self and every descendant, each once."""
        for _, module in self.named_modules():
            yield module

    def apply(self, fn):
        """Call ``fn`` on every child (recursively), then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # modes and gradients ---------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode on self and every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: to None, or to zeros in place."""
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    # conversion ------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Convert every parameter (in place: ``param.data = fn(param)``, so optimizers
        holding it still see it), its gradient, and every buffer."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if applied is not param:
                param.data = applied
            grad = param.grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if grad_applied is not grad:
                    grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers: to(device), to(dtype) (floating-point
        tensors only), to(tensor), to(device, dtype, non_blocking); ``memory_format`` lays
        out the 4-D and 5-D ones (channels_last)."""
        from ember.core._tensor import _parse_to
        _check_to_arguments(args, kwargs)
        kwargs = dict(kwargs)
        kwargs.pop("non_blocking", None)
        kwargs.pop("copy", None)
        memory_format = kwargs.pop("memory_format", None)
        # to(device, dtype, non_blocking); to(None) is the current device
        args = tuple(a for a in args if a is not None and not isinstance(a, bool))
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development "
                              "whose design may change, and some modules might not work as "
                              "expected when using complex tensors as parameters or buffers. "
                              "Please file an issue at https://github.com/pytorch/pytorch/"
                              "issues/new?template=bug-report.yml if a complex module does not "
                              "work as expected.", stacklevel=2)

        def convert(t):
            cast = dtype is not None and (t.is_floating_point() or t.is_complex())
            to = [a for a in (device, dtype if cast else None) if a is not None]
            try:
                if memory_format is not None and t.dim() in (4, 5):   # conv weights and such
                    return t.to(*to, memory_format=memory_format)
                return t.to(*to)
            except NotImplementedError as e:
                if str(e) != "Cannot copy out of meta tensor; no data!":
                    raise
                raise NotImplementedError(f"{e} Please use torch.nn.Module.to_empty() instead "
                                          f"of torch.nn.Module.to() when moving module from "
                                          f"meta to a different device.") from None
        return self._apply(convert)

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        """Cast floating-point parameters and buffers to float32."""
        from ember import float32
        return self._cast_floating(float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64."""
        from ember import float64
        return self._cast_floating(float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16."""
        from ember import float16
        return self._cast_floating(float16)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16."""
        from ember import bfloat16
        return self._cast_floating(bfloat16)

    def type(self, dst_type):
        """Cast every parameter and buffer (integer ones included) to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """Move every parameter and buffer to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move every parameter and buffer to a CUDA device."""
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self):
        """Move every parameter and buffer into shared memory (``Tensor.share_memory_``), as
        Hogwild training with torch.multiprocessing does; returns self."""
        return self._apply(lambda t: t.share_memory_())

    def compile(self, *args, **kwargs):
        """Compile this Module's calls with ``ember.compile`` (arguments as its): the Module
        itself is unchanged (its state_dict keys too), its ``__call__`` runs compiled."""
        from ember.compiler import _compile
        self._compiled_call_impl = _compile.compile(self._call_impl, *args, **kwargs)

    def xpu(self, device=None):
        """Move every parameter and buffer to an XPU device."""
        return self._apply(lambda t: t.xpu(device))

    def ipu(self, device=None):
        """Move every parameter and buffer to an IPU device (ember has no IPU backend: like a
        PyTorch build without one, it raises once there is a tensor to move)."""
        def move(t):
            raise RuntimeError("PyTorch is not linked with support for ipu devices")
        return self._apply(move)

    def mtia(self, device=None):
        """Move every parameter and buffer to an MTIA device (ember has no MTIA backend: like
        a PyTorch build without one, it raises once there is a tensor to move)."""
        def move(t):
            raise AssertionError("Torch not compiled with MTIA enabled.")
        return self._apply(move)

    def _replicate_for_data_parallel(self):
        # a shallow copy that shares children and buffers and owns no parameters
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    def to_empty(self, *, device, recurse=True):
        """Move parameters and buffers to ``device`` without copying their values (what
        materialises a model built on the meta device)."""
        from ember.core._tensor import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # repr ------------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses; subclasses override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {_addindent(repr(module), 2)}"
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
