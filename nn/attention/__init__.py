"""ember.nn.attention (``torch.nn.attention``): choosing scaled_dot_product_attention's
backend (SDPBackend and sdpa_kernel, from core/sdp_backends.py).  ember has one backend,
the math composite (fused on the CPU), which answers for the MATH and FLASH_ATTENTION
kernels of PyTorch's CPU build; restricting ``sdpa_kernel`` to other backends makes
attention raise, as PyTorch's does when no chosen kernel applies.  A package, as
PyTorch's: ``ember.nn.attention.bias`` holds the causal biases."""
from ember.core.sdp_backends import SDPBackend, sdpa_kernel

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "activate_flash_attention_impl",
           "current_flash_attention_impl", "list_flash_attention_impls",
           "register_flash_attention_impl", "restore_flash_attention_impl", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


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


from ember.nn.attention import bias  # noqa: E402, F401  (the submodule, as torch's attribute)
