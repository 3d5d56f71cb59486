"""``ember.backends.cuda``: PyTorch's CUDA flags.  They import and can be set with no CUDA
plugin installed; a CUDA plugin reads them when it runs a matmul.

The scaled_dot_product_attention toggles (enable_flash_sdp, math_sdp_enabled, sdp_kernel,
...) are the backend set of ``ember.nn.attention.sdpa_kernel``, as in PyTorch, where they
apply to every device."""
import contextlib
import warnings
from enum import Enum, IntEnum

from ember.core import sdp_backends, switches
from ember.core.sdp_backends import SDPBackend, sdpa_kernel

__all__ = ["SDPAParams", "allow_fp16_bf16_reduction_math_sdp", "can_use_cudnn_attention",
           "can_use_efficient_attention", "can_use_flash_attention", "cudnn_sdp_enabled",
           "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp",
           "enable_mem_efficient_sdp", "flash_sdp_enabled", "fp16_bf16_reduction_math_sdp_allowed",
           "is_built", "is_ck_sdpa_available", "is_flash_attention_available", "math_sdp_enabled",
           "matmul", "mem_efficient_sdp_enabled", "preferred_blas_library",
           "preferred_linalg_library", "sdp_kernel"]


def is_built():
    """Whether a CUDA plugin is installed (PyTorch: whether it was built with CUDA)."""
    from ember.core._device import _backend_for_type
    b = _backend_for_type("cuda")
    return b is not None and b.plugin is not None


class cuBLASModule:
    """``ember.backends.cuda.matmul``: ``allow_tf32`` is float32 matmul precision seen as a
    flag (True: "high", False: "highest"), as in PyTorch; the reduced-precision reduction
    flags are plain settings a plugin reads."""
    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return switches.get_float32_matmul_precision() != "highest"
        if name in self._FLAGS:
            return self._values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            switches.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._FLAGS:
            self._values[name] = bool(value)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


# -- scaled_dot_product_attention's backends ---------------------------------------------

def _sdp_toggle(name, doc):
    """(enable_<kernel>_sdp(enabled), <kernel>_sdp_enabled()) over the current backend set
    of nn.attention.sdpa_kernel (a block of sdpa_kernel restores it on exit)."""
    backend = SDPBackend[name]

    def enable(enabled):
        sdp_backends._toggle(backend, enabled)

    def enabled():
        return sdp_backends._is_enabled(backend)

    enable.__doc__ = f"Enable or disable the {doc} kernel of scaled_dot_product_attention."
    enabled.__doc__ = f"Whether the {doc} kernel of scaled_dot_product_attention is enabled."
    return enable, enabled


enable_flash_sdp, flash_sdp_enabled = _sdp_toggle("FLASH_ATTENTION", "flash attention")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp_toggle("EFFICIENT_ATTENTION",
                                                                  "memory-efficient")
enable_math_sdp, math_sdp_enabled = _sdp_toggle("MATH", "math")
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp_toggle("CUDNN_ATTENTION", "cuDNN attention")


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated: within the block, scaled_dot_product_attention may use only the enabled
    kernels (``ember.nn.attention.sdpa_kernel`` with the matching SDPBackend list)."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=3)
    chosen = [(enable_flash, SDPBackend.FLASH_ATTENTION),
              (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION),
              (enable_math, SDPBackend.MATH), (enable_cudnn, SDPBackend.CUDNN_ATTENTION)]
    with sdpa_kernel([b for on, b in chosen if on]) as context:
        yield context


_reduced_precision_math_sdp = [False]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Allow the math kernel to reduce in float16/bfloat16 (a setting ember records)."""
    _reduced_precision_math_sdp[0] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    """Whether the math kernel may reduce in float16/bfloat16."""
    return _reduced_precision_math_sdp[0]


class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, which the ``can_use_*``
    checks take: ``SDPAParams(query, key, value, attn_mask, dropout, is_causal,
    enable_gqa)``."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa=False):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


def is_flash_attention_available():
    """Whether a CUDA flash-attention kernel is built in: never in ember."""
    return False


def is_ck_sdpa_available():
    """Whether ROCm's composable-kernel attention is built in: never in ember."""
    return False


def can_use_flash_attention(params, debug=False):
    """Whether the CUDA flash-attention kernel could run ``params``: ember has none."""
    return False


def can_use_efficient_attention(params, debug=False):
    """Whether the CUDA memory-efficient kernel could run ``params``: ember has none."""
    return False


def can_use_cudnn_attention(params, debug=False):
    """Whether the cuDNN attention kernel could run ``params``: ember has none."""
    return False


# -- library preferences (PyTorch's CUDA linear algebra and BLAS choices) ---------------

class _LinalgBackend(IntEnum):
    __str__ = Enum.__str__          # "_LinalgBackend.Default", as PyTorch prints it
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(IntEnum):
    __str__ = Enum.__str__
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


_preferred = {"linalg": _LinalgBackend.Default, "blas": _BlasBackend.Cublas}


def _prefer(kind, enum, backend, names):
    if backend is None:
        return _preferred[kind]
    if isinstance(backend, str):
        if backend not in names:
            raise RuntimeError(f"Unknown input value. Choose from: {', '.join(names)}.")
        backend = enum[names[backend]]
    elif not isinstance(backend, enum):
        raise RuntimeError("Unknown input value type.")
    _preferred[kind] = backend
    return backend


def preferred_linalg_library(backend=None):
    """The library CUDA linear algebra prefers ("default", "cusolver", "magma"); with
    ``backend``, set it.  A setting a CUDA plugin may read."""
    return _prefer("linalg", _LinalgBackend, backend,
                   {"default": "Default", "cusolver": "Cusolver", "magma": "Magma"})


def preferred_blas_library(backend=None):
    """The BLAS library CUDA matmuls prefer ("default", "cublas", "cublaslt", "ck"; the
    hip names too); with ``backend``, set it."""
    return _prefer("blas", _BlasBackend, backend,
                   {"default": "Default", "cublas": "Cublas", "hipblas": "Cublas",
                    "cublaslt": "Cublaslt", "hipblaslt": "Cublaslt", "ck": "Ck"})
