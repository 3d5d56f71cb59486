"""Module.state_dict / load_state_dict with PyTorch's key names, metadata, hooks and error
text; subclasses customise through _save_to_state_dict / _load_from_state_dict."""
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ember.core._autograd import set_requires_grad
from ember.core.tensor import Tensor

from ember.autograd.grad_mode import no_grad

__all__ = ["_IncompatibleKeys"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it missed and the keys it did not use."""

    __module__ = "ember.nn.modules.module"       # where PyTorch (and pickles) find it
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _quoted(keys):
    return ", ".join(f'"{k}"' for k in keys)


def _load_tree(module, local_state, prefix, metadata, assign, missing, unexpected, errors):
    """load_state_dict's walk over ``module`` and its descendants (a module function: a
    nested one calling itself would be a reference cycle)."""
    local_metadata = dict(metadata.get(prefix[:-1], {})) if metadata else {}
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(local_state, prefix, local_metadata, True, missing,
                                 unexpected, errors)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            _load_tree(child, {k: v for k, v in local_state.items()
                               if k.startswith(child_prefix)}, child_prefix, metadata, assign,
                       missing, unexpected, errors)
    keys = _IncompatibleKeys(missing, unexpected)
    for hook in module._load_state_dict_post_hooks.values():
        if hook(module, keys) is not None:
            raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` "
                                 "are not expected to return new values, if incompatible_keys "
                                 "need to be modified, it should be done inplace.")


class _StateDictMixin:
    """The state_dict half of Module."""

    def get_extra_state(self):
        """Extra picklable state saved under ``<prefix>_extra_state`` (override together
        with set_extra_state)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should "
                           "never be called.")

    def set_extra_state(self, state):
        """Restore what get_extra_state returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should "
                           "never be called.")

    def _has_extra_state(self, method):
        from ember.nn.modules.module import Module
        return getattr(type(self), method) is not getattr(Module, method)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before this module's state_dict."""
        from ember.nn.modules.module_hooks import _add
        return _add(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after it; it edits the
        state_dict in place and must return None."""
        from ember.nn.modules.module_hooks import _add
        # as PyTorch: the mark on the function tells state_dict() to refuse a return value
        hook._from_public_api = True
        return _add(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        # the private form: a value the hook returns replaces the root's state_dict
        from ember.nn.modules.module_hooks import _add
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return _add(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        from ember.nn.modules.module_hooks import _add
        return _add(self._load_state_dict_pre_hooks, lambda *a: hook(self, *a))

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        from ember.nn.modules.module_hooks import _add
        wrapped = (lambda *a: hook(self, *a)) if with_module else hook
        return _add(self._load_state_dict_pre_hooks, wrapped)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after load_state_dict; it may edit the
        key lists in place."""
        from ember.nn.modules.module_hooks import _add
        return _add(self._load_state_dict_post_hooks, hook)

    # saving ----------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Put this module's own parameters and persistent buffers into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer under its dotted name
        (detached unless ``keep_vars``), with per-module ``_metadata``."""
        if args:                       # the old positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is None:
                continue
            if getattr(hook, "_from_public_api", False):
                raise RuntimeError("state_dict post-hook must return None")
            destination = result
        return destination

    # loading ---------------------------------------------------------------------------
    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries of ``state_dict`` (keys under ``prefix``) into its
        parameters and persistent buffers, appending to the three lists."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items()
                     if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            if param.dim() == 0 and value.shape == (1,):    # checkpoints of 0.3-era scalars
                value = value[0]
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            if param.is_meta and not value.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                              f"to a meta parameter in the current model, which is a no-op. "
                              f"(Did you mean to pass `assign=True` to assign items in the "
                              f"state dictionary to their corresponding key in the module "
                              f"instead of copying them in place?)", stacklevel=2)
            try:
                with no_grad():
                    if assign:
                        self._assign_loaded(name, param, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f'dimensions in the model are {param.size()} and whose '
                                  f'dimensions in the checkpoint are {value.size()}, an '
                                  f'exception occurred : {ex.args}.')
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                if (head not in self._modules) if dot else (head not in local):
                    unexpected_keys.append(key)

    def _assign_loaded(self, name, current, value):
        from ember.nn.parameter import Parameter
        if isinstance(current, Parameter):
            if isinstance(value, Parameter):
                set_requires_grad(value, current.requires_grad)
            else:
                value = Parameter(value, requires_grad=current.requires_grad)
        setattr(self, name, value)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module and its
        descendants (or, with ``assign``, adopt the given tensors). With ``strict``,
        missing or unexpected keys raise RuntimeError; returns
        ``_IncompatibleKeys(missing_keys, unexpected_keys)``."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)

        _load_tree(self, dict(state_dict), "", metadata, assign, missing, unexpected, errors)
        if strict:
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:"
                               "\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)
