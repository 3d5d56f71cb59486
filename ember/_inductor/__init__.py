"""ember's code generator for ``ember.compile`` (``torch._inductor``)."""
