"""ember.nn.attention (``torch.nn.attention``): choosing scaled_dot_product_attention's
backend.  ember has one backend, the math composite (fused on the CPU), which answers for
the MATH and FLASH_ATTENTION kernels of PyTorch's CPU build; restricting ``sdpa_kernel`` to
other backends makes attention raise, as PyTorch's does when no chosen kernel applies."""
import contextlib
from enum import IntEnum

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "activate_flash_attention_impl",
           "current_flash_attention_impl", "list_flash_attention_impls",
           "register_flash_attention_impl", "restore_flash_attention_impl", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The backends of scaled_dot_product_attention."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


SDPBackend.__module__ = "ember.nn.attention"
_enabled = [set(SDPBackend) - {SDPBackend.ERROR}]


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


_flash_impls = {}
_active_flash = [None]


def register_flash_attention_impl(impl, *, register_fn):
    """Register a flash-attention implementation under ``impl`` (ember's attention does not
    dispatch to it: it is kept for ``activate_flash_attention_impl``)."""
    _flash_impls[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Make a registered flash-attention implementation the current one."""
    if impl not in _flash_impls:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Registered impls: "
                         f"{list_flash_attention_impls()}")
    _flash_impls[impl]()
    _active_flash[0] = impl


def list_flash_attention_impls():
    return sorted(_flash_impls)


def current_flash_attention_impl():
    return _active_flash[0]


def restore_flash_attention_impl(_raise_warn=True):
    _active_flash[0] = None
