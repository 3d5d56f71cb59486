"""ember.utils.dlpack (``torch.utils.dlpack``): tensors exchanged with other libraries through
DLPack, either as capsules (``to_dlpack``) or as objects with ``__dlpack__``."""
import enum

from ember._torch_misc import to_dlpack as to_dlpack  # the legacy capsule export
from ember.core._tensor import from_dlpack

__all__ = ["DLDeviceType", "from_dlpack"]


class DLDeviceType(enum.IntEnum):
    """The device type codes of the DLPack standard (what ``__dlpack_device__`` reports)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
