"""ember.nn: Module, Parameter, layers and containers (``torch.nn``); the functional,
init and utils submodules load on first use."""
from ember.nn.modules import *  # noqa: F403  (Linear, ReLU, Sequential, ...)
from ember.nn.modules import Module as Module
from ember.nn.parameter import Buffer as Buffer
from ember.nn.parameter import Parameter as Parameter

_LAZY = {"functional", "init", "utils", "modules", "parameter"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return importlib.import_module(f"ember.nn.{name}")
    raise AttributeError(f"module 'ember.nn' has no attribute '{name}'")
_LAZY |= {"parallel"}
from ember.nn.parameter import UninitializedBuffer as UninitializedBuffer  # noqa: E402
from ember.nn.parameter import UninitializedParameter as UninitializedParameter  # noqa: E402
