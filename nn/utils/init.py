"""skip_init (``torch.nn.utils.init``): build a module without initialising its tensors."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` built on the meta device, then given uninitialised
    storage on ``kwargs['device']`` (default cpu): as if every tensor came from ``empty``.
    The class must take a ``device`` argument."""
    from ember.nn.modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
