"""Anomaly detection: record each op's forward stack, and fail on NaN gradients naming
the op that produced them."""
from ember.core import _autograd as _ag

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Context manager (and decorator) turning anomaly detection on; ``check_nan``: also fail
    on a NaN gradient."""

    def __init__(self, check_nan=True):
        import warnings
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = _ag._set_anomaly_enabled(True, bool(self.check_nan))

    def __exit__(self, *exc):
        _ag._set_anomaly_enabled(*self._prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Set anomaly detection on or off (a call, or a context manager restoring it);
    ``check_nan``: while on, also fail on a NaN gradient."""

    def __init__(self, mode, check_nan=True):
        self._prev = _ag._set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _ag._set_anomaly_enabled(*self._prev)
