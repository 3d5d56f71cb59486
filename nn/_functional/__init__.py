"""The pieces of ``ember.nn.functional``, one module per concern (re-exported by
nn/functional.py)."""
