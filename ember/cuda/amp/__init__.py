"""``ember.cuda.amp``: PyTorch's deprecated spellings of ``ember.amp.autocast('cuda')`` and
``ember.amp.GradScaler('cuda')``."""
import warnings

from ember.amp.autocast_mode import autocast as _autocast
from ember.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


class autocast(_autocast):
    """Deprecated: ``ember.amp.autocast('cuda', ...)``."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        import ember
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=ember.float16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """Deprecated: ``ember.amp.GradScaler('cuda', ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
