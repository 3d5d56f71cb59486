"""scaled_dot_product_attention's backend set: ``SDPBackend`` and ``sdpa_kernel``
(re-exported by ``ember.nn.attention``) and the per-kernel toggles of
``ember.backends.cuda`` (enable_flash_sdp, math_sdp_enabled, ...), which act on the same
set, as in PyTorch.  ember has one backend, the math composite (fused on the CPU), which
answers for the MATH and FLASH_ATTENTION kernels of PyTorch's CPU build."""
import contextlib
from enum import IntEnum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(IntEnum):
    """The backends of scaled_dot_product_attention."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


SDPBackend.__module__ = "ember.nn.attention"
_enabled = [set(SDPBackend) - {SDPBackend.ERROR}]   # a stack: sdpa_kernel blocks push


def _math_enabled():
    # ember's composite (fused on the CPU) stands for both kernels PyTorch's CPU build has
    return bool({SDPBackend.MATH, SDPBackend.FLASH_ATTENTION} & _enabled[-1])


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only ``backends`` (one or a
    list of SDPBackend)."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(backends)
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend")
    _enabled.append(set(backends))
    try:
        yield {}
    finally:
        _enabled.pop()


def _toggle(backend, enabled):
    """Enable or disable one backend in the current set (a block restores it on exit)."""
    (_enabled[-1].add if enabled else _enabled[-1].discard)(backend)


def _is_enabled(backend):
    return backend in _enabled[-1]
