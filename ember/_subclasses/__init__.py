"""Python-level tensor types (``torch._subclasses``): ``fake_tensor.FakeTensor``."""
