"""ember.types (``torch.types``): the type aliases PyTorch's annotations use."""
import os
from typing import IO, Any, Sequence, Union

from ember.core._device import device as _device
from ember.core._dtype import dtype as _dtype
from ember.core._size import Size
from ember.core.tensor import Tensor

__all__ = ["Device", "FileLike", "Number", "Size", "Storage", "Tensor"]

Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_size = Union[Size, list, tuple]
_dtype = _dtype
Storage = Any           # ember.UntypedStorage / TypedStorage
