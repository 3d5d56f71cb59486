"""Compiler backends of ``ember.compile``: a backend takes a captured GraphModule and
example inputs and returns a callable that computes the same outputs."""
