"""Small global switches of the façade, each readable back: float32 matmul precision and
warn-always.  (Print options live with the formatter, determinism in determinism.py.)"""
__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision", "set_warn_always",
           "is_warn_always_enabled"]

_PRECISIONS = ("highest", "high", "medium")
_state = {"warn_always": False}


def set_float32_matmul_precision(precision):
    """How float32 matmuls may trade precision for speed: "highest" (full float32), "high"
    or "medium" (a backend may use TF32/bfloat16 internally).  The CPU plugin always
    computes in float32; accelerator plugins read it as ``ember_ctx.matmul_precision``."""
    if precision not in _PRECISIONS:
        raise ValueError(f"Invalid float32 matmul precision {precision!r}: expected one of "
                         f"{', '.join(repr(p) for p in _PRECISIONS)}")
    from ember.core import _state as _c_state  # kept in C: kernels read it from ember_ctx
    _c_state._set_matmul_precision(_PRECISIONS.index(precision))


def get_float32_matmul_precision():
    """The current float32 matmul precision ("highest" by default)."""
    from ember.core import _state as _c_state
    return _PRECISIONS[_c_state._get_matmul_precision()]


def set_warn_always(b):
    """When True, warnings PyTorch shows once per process are shown every time."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    """Whether set_warn_always(True) is in effect."""
    return _state["warn_always"]
