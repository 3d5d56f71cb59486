"""ember's code generator for ``ember.compile`` (``torch._inductor``)."""
from ember._inductor import config as config  # noqa: E402  (torch._inductor.config)
