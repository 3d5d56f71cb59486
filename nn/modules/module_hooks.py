"""Module hooks: forward (pre-)hooks, full backward (pre-)hooks, registration hooks, and
the __call__ that runs them.  Every register_* returns a RemovableHandle."""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict

from ember.core.hooks import RemovableHandle
from ember.core.tensor import Tensor

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
# None until a global backward hook is registered: then whether it was a full one
_global_is_full_backward_hook = None
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_registration_hooks = {"buffer": _global_buffer_registration_hooks,
                              "module": _global_module_registration_hooks,
                              "parameter": _global_parameter_registration_hooks}

# per-module hook tables, created by Module.__init__ (and __setstate__ for old pickles)
_TABLES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
           "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
           "_backward_pre_hooks", "_backward_hooks", "_state_dict_hooks",
           "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
           "_load_state_dict_post_hooks")


def _add(table, hook, prepend=False, extra=None, flags=()):
    """Put ``hook`` into ``table`` under a fresh handle; ``flags`` are side tables that
    mark the hook (with_kwargs, always_call) and forget it on remove()."""
    # a list even for one side table: RemovableHandle skips a lone dict that is empty
    extra = extra if extra is None or isinstance(extra, list) else [extra]
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


def _set_global_full(full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_full_backward_hook(hook):
    """A backward hook ``hook(module, grad_input, grad_output)`` for every module."""
    _set_global_full(True)
    return _add(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook ``hook(module, grad_output)`` for every module, run before the
    module's own."""
    return _add(_global_backward_pre_hooks, hook)


def register_module_backward_hook(hook):
    """PyTorch's deprecated global backward hook: as Module.register_backward_hook, for
    every module."""
    _set_global_full(False)
    return _add(_global_backward_hooks, hook)


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
        """PyTorch's deprecated ``hook(module, grad_input, grad_output)``: a hook on the
        autograd node that made the module's (first) output, so grad_input holds the
        gradients of that node's inputs (use register_full_backward_hook for the module's)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook, False)

    def _get_backward_hooks(self):
        """(full backward hooks, legacy backward hooks) that a call of this module runs."""
        full, legacy = [], []
        for flag, table in ((_global_is_full_backward_hook, _global_backward_hooks),
                            (self._is_full_backward_hook, self._backward_hooks)):
            if flag is True:
                full += table.values()
            elif flag is False:
                legacy += table.values()
        return full, legacy

    def _get_backward_pre_hooks(self):
        return list(_global_backward_pre_hooks.values()) + \
            list(self._backward_pre_hooks.values())

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn):
        """PyTorch's FutureWarnings for legacy backward hooks that miss some gradients."""
        def warn(what, missing, advice=" Please use register_full_backward_hook to get the "
                                       "documented behavior."):
            warnings.warn(f"Using {what} is deprecated and will be removed in future "
                          f"versions. This hook will be missing some {missing}.{advice}",
                          FutureWarning, stacklevel=4)

        def tensors(value):
            if isinstance(value, Tensor):
                return (value,)
            if isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value):
                return value
            return None
        result, inputs = tensors(result), tensors(inputs)
        if result is None:
            return warn("non-full backward hooks on a Module that does not return a single "
                        "Tensor or a tuple of Tensors", "of the grad_output")
        if inputs is None:
            return warn("non-full backward hooks on a Module that does not take as input a "
                        "single Tensor or a tuple of Tensors", "of the grad_input")
        out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
            return warn("a non-full backward hook when outputs are nested in python data "
                        "structure", "grad_output", "")
        if len(out_fns) > 1:
            return warn("a non-full backward hook when outputs are generated by different "
                        "autograd Nodes", "grad_output")
        if {i.grad_fn for i in inputs if i.grad_fn is not None} != \
                {f for f, _ in grad_fn.next_functions}:
            warn("a non-full backward hook when the forward contains multiple autograd Nodes",
                 "grad_input")

    def _register_legacy_backward_hooks(self, hooks, args, result):
        var = result
        while not isinstance(var, Tensor):      # the first tensor, as PyTorch finds it
            var = next(v for v in var.values() if isinstance(v, Tensor)) \
                if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(_WrappedHook(hook, self))
            self._maybe_warn_non_full_backward_hook(args, result, grad_fn)

    # __call__ ----------------------------------------------------------------------------
    # Module.compile() puts the compiled call here
    _compiled_call_impl = None

    def _wrapped_call_impl(self, *args, **kwargs):
        compiled = self._compiled_call_impl
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

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
        # the backward hooks are the ones registered when forward runs (PyTorch's rule)
        full_hooks, legacy_hooks = self._get_backward_hooks() \
            if self._backward_hooks or _global_backward_hooks else ((), ())
        pre_hooks = self._get_backward_pre_hooks() \
            if self._backward_pre_hooks or _global_backward_pre_hooks else ()
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
            if full_hooks or pre_hooks:
                from ember.nn.modules._backward_hook import BackwardHook
                backward = BackwardHook(self, full_hooks, pre_hooks)
                args = backward.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in forward_hooks:
                called.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if backward is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(f"For backward hooks to be called, module output should be "
                                  f"a Tensor or a tuple of Tensors but received "
                                  f"{type(result)}", stacklevel=3)
                result = backward.setup_output_hook(result)
            if legacy_hooks:
                self._register_legacy_backward_hooks(legacy_hooks, args, result)
            return result
        except Exception:
            for hook_id, hook in forward_hooks:
                local = hook_id in self._forward_hooks_always_called
                if (local or hook_id in _global_forward_hooks_always_called) \
                        and hook_id not in called:
                    try:
                        result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                    except Exception as e:
                        warnings.warn(f"{'' if local else 'global '}module forward hook with "
                                      f"``always_call=True`` raised an exception that was "
                                      f"silenced as another error was raised in forward: {e}",
                                      stacklevel=3)
            raise


class _WrappedHook:
    """``hook`` called with ``module`` (held weakly) as its first argument; picklable."""

    __module__ = "ember.nn.modules.module"

    def __init__(self, hook, module=None):
        functools.update_wrapper(self, hook)
        self.hook = hook
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])
