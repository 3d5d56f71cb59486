"""Python-level tensor types (``torch._subclasses``): ``FakeTensor`` and ``FakeTensorMode``.

Importing this package imports SymPy (through the ShapeEnv); ``import ember`` does not.
"""
from ember._subclasses.fake_tensor import FakeTensor as FakeTensor
from ember._subclasses.fake_tensor import FakeTensorMode as FakeTensorMode

__all__ = ["FakeTensor", "FakeTensorMode"]
