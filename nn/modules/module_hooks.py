"""Module hooks: forward (pre-)hooks, full backward (pre-)hooks, registration hooks, and
the __call__ that runs them.  Every register_* returns a RemovableHandle."""
import itertools
import warnings
from collections import OrderedDict

from ember.core.hooks import RemovableHandle

__all__ = ["register_module_buffer_registration_hook", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

# global hooks (every module runs them before its own); OrderedDicts so handles can
# hold weak references to them
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_registration_hooks = {"buffer": OrderedDict(), "module": OrderedDict(),
                              "parameter": OrderedDict()}

# per-module hook tables, created by Module.__init__ (and __setstate__ for old pickles)
_TABLES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
           "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
           "_backward_pre_hooks", "_backward_hooks", "_state_dict_hooks",
           "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
           "_load_state_dict_post_hooks")


def _add(table, hook, prepend=False, extra=None, flags=()):
    """Put ``hook`` into ``table`` under a fresh handle; ``flags`` are side tables that
    mark the hook (with_kwargs, always_call) and forget it on remove()."""
    handle = RemovableHandle(table, extra_dict=extra)
    table[handle.id] = hook
    for side in flags:
        side[handle.id] = True
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook):
    """A forward pre-hook ``hook(module, args)`` run by every module before its own."""
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook ``hook(module, args, output)`` (``hook(module, args, kwargs, output)``
    with ``with_kwargs``) run by every module before its own."""
    flags = ((_global_forward_hooks_always_called,) if always_call else ()) + \
        ((_global_forward_hooks_with_kwargs,) if with_kwargs else ())
    return _add(_global_forward_hooks, hook, extra=[_global_forward_hooks_always_called,
                                                    _global_forward_hooks_with_kwargs],
                flags=flags)


def register_module_full_backward_hook(hook):
    """A backward hook ``hook(module, grad_input, grad_output)`` for every module."""
    return _add(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook ``hook(module, grad_output)`` for every module, run before the
    module's own."""
    return _add(_global_backward_pre_hooks, hook)


def register_module_backward_hook(hook):
    """The legacy name of register_module_full_backward_hook (PyTorch deprecates it)."""
    return register_module_full_backward_hook(hook)


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` runs on every register_buffer; may return a
    replacement."""
    return _add(_global_registration_hooks["buffer"], hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` runs on every child registration."""
    return _add(_global_registration_hooks["module"], hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` runs on every register_parameter."""
    return _add(_global_registration_hooks["parameter"], hook)


def _run_registration_hooks(kind, module, name, value):
    for hook in _global_registration_hooks[kind].values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _HookMixin:
    """The hook half of Module."""

    def _init_hooks(self, setattr_):
        for table in _TABLES:
            setattr_(table, OrderedDict())
        setattr_("_is_full_backward_hook", None)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        runs before forward and may return new args (or ``(args, kwargs)``)."""
        return _add(self._forward_pre_hooks, hook, prepend,
                    extra=self._forward_pre_hooks_with_kwargs,
                    flags=(self._forward_pre_hooks_with_kwargs,) if with_kwargs else ())

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs
        after forward and may return a new output; ``always_call`` runs it even when
        forward raised."""
        flags = ((self._forward_hooks_with_kwargs,) if with_kwargs else ()) + \
            ((self._forward_hooks_always_called,) if always_call else ())
        return _add(self._forward_hooks, hook, prepend,
                    extra=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
                    flags=flags)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients of the outputs are known and
        may return replacements."""
        return _add(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs once the gradients of the tensor
        inputs are computed; it may return a replacement for grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and "
                               "full backward hooks on a single Module. Please use only one "
                               "of them.")
        self._is_full_backward_hook = True
        return _add(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated ``hook(module, grad_input, grad_output)``, run here as a full
        backward hook: grad_input holds the gradients of the module's tensor inputs (PyTorch's
        holds those of the inputs of the module's last autograd node)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook, False)

    def _backward_hook_list(self):
        return list(_global_backward_hooks.values()) + list(self._backward_hooks.values())

    def _backward_pre_hook_list(self):
        return list(_global_backward_pre_hooks.values()) + \
            list(self._backward_pre_hooks.values())

    # __call__ ----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # Module.compile() puts the compiled call here
        compiled = self.__dict__.get("_compiled_call_impl")
        return (compiled or self._call_impl)(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _run_forward_hook(self, hook_id, hook, args, kwargs, result):
        if hook_id in self._forward_hooks_with_kwargs \
                or hook_id in _global_forward_hooks_with_kwargs:
            out = hook(self, args, kwargs, result)
        else:
            out = hook(self, args, result)
        return result if out is None else out

    def _call_with_hooks(self, args, kwargs):
        result = None
        called = set()
        forward_hooks = list(itertools.chain(_global_forward_hooks.items(),
                                             self._forward_hooks.items()))
        try:
            # a snapshot: a hook may remove itself (a lazy module's initialisation does)
            for hook_id, hook in list(itertools.chain(_global_forward_pre_hooks.items(),
                                                      self._forward_pre_hooks.items())):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if not (isinstance(out, tuple) and len(out) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {out}.")
                        args, kwargs = out
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            backward = None
            if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks \
                    or _global_backward_pre_hooks:
                from ember.nn.modules._backward_hook import BackwardHook
                backward = BackwardHook(self)
                args = backward.wrap_inputs(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in forward_hooks:
                called.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if backward is not None:
                result = backward.wrap_outputs(result)
            return result
        except Exception:
            for hook_id, hook in forward_hooks:
                always = (hook_id in self._forward_hooks_always_called
                          or hook_id in _global_forward_hooks_always_called)
                if always and hook_id not in called:
                    try:
                        result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                    except Exception as e:
                        warnings.warn(f"forward hook with ``always_call=True`` raised an "
                                      f"exception that was silenced as another error was "
                                      f"raised in forward: {e}")
            raise
