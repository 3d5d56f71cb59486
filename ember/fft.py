"""ember.fft: PyTorch's torch.fft (see ember.core.fft): the discrete Fourier transforms
over complex64/complex128, the frequency helpers and the shifts."""
from ember.core.fft import *  # noqa: F403
from ember.core.fft import __all__ as __all__
from ember.core.tensor import Tensor as Tensor  # noqa: E402  (torch.fft lists Tensor too)

__all__ = sorted([*__all__, "Tensor"])
