"""ember.nn: Module, Parameter, layers and containers (``torch.nn``); the functional,
init and utils submodules load on first use."""
from ember.nn.modules import *  # noqa: F403  (Linear, ReLU, Sequential, ...)
from ember.nn.modules import Module as Module
from ember.nn.parameter import Buffer as Buffer
from ember.nn.parameter import Parameter as Parameter

_LAZY = {"functional", "init", "utils", "modules", "parameter", "attention", "common_types",
         "grad"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return importlib.import_module(f"ember.nn.{name}")
    if name == "DataParallel":              # ember.nn.parallel's, on first use
        from ember.nn.parallel import DataParallel
        return DataParallel
    raise AttributeError(f"module 'ember.nn' has no attribute '{name}'")
_LAZY |= {"parallel"}
from ember.nn.parameter import UninitializedBuffer as UninitializedBuffer  # noqa: E402
from ember.nn.parameter import UninitializedParameter as UninitializedParameter  # noqa: E402


def factory_kwargs(kwargs):
    """The factory arguments (device, dtype, memory_format) of ``kwargs`` as one dict, a
    ``factory_kwargs`` entry merged in; TypeError for any other key or a duplicate."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    if not kwargs.keys() <= simple | {"factory_kwargs"}:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - simple - {'factory_kwargs'}}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
