"""ember.utils.hooks: RemovableHandle, what every register_*_hook returns, and the helpers
PyTorch keeps beside it (``torch.utils.hooks``)."""
import warnings

from ember.core.hooks import RemovableHandle as RemovableHandle

__all__ = ["BackwardHook", "RemovableHandle", "unserializable_hook",  # noqa: F822 (lazy)
           "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark the hook ``f`` as one that is not saved with its tensor, which silences
    warn_if_has_hooks for it; returns ``f``."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each backward hook of ``tensor`` that serialization will drop (unless
    marked with unserializable_hook)."""
    hooks = getattr(tensor, "_backward_hooks", None)
    for hook in (hooks or {}).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          f"is expected, you can decorate the function with "
                          f"@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


def __getattr__(name):
    # the module backward hooks live with ember.nn, which `import ember` does not load
    if name == "BackwardHook":
        from ember.nn.modules._backward_hook import BackwardHook
        return BackwardHook
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
