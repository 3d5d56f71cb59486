"""ember.fft: PyTorch's torch.fft.  ember has no complex dtype yet: the transforms with a
complex result raise NotImplementedError; the real ones (fftfreq, rfftfreq, fftshift,
ifftshift, and irfft*/hfft* of real inputs) work (see ember.core.fft)."""
from ember.core.fft import *  # noqa: F403
from ember.core.fft import __all__ as __all__
