"""Tensor methods whose implementations live above the core (nn.functional, the STFT,
histograms): the façade installs them on ember.Tensor at import, and each loads its module
on first call."""

__all__ = ["install"]


def hardshrink(self, lambd=0.5):
    """input where |input| > lambd, else 0."""
    from ember.nn import functional as F
    return F.hardshrink(self, lambd)


def prelu(self, weight):
    """max(0, x) + weight * min(0, x)."""
    from ember.nn import functional as F
    return F.prelu(self, weight)


def histogram(self, bins, *, range=None, weight=None, density=False):
    """ember.histogram(self, ...)."""
    from ember._histograms import histogram as _histogram
    return _histogram(self, bins, range=range, weight=weight, density=density)


def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """ember.stft(self, ...)."""
    from ember._stft import stft as _stft
    return _stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                 onesided, return_complex, align_to_window)


def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """ember.istft(self, ...)."""
    from ember._stft import istft as _istft
    return _istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                  length, return_complex)


def hash_tensor(self, dim=None, *, keepdim=False, mode=0):
    """ember.hash_tensor(self, ...)."""
    from ember._hash_tensor import hash_tensor as _hash
    return _hash(self, dim, keepdim=keepdim, mode=mode)


def i0(self):
    """ember.special.i0(self): the modified Bessel function of order 0."""
    from ember.core.bessel import i0 as _i0
    return _i0(self)


def igamma(self, other):
    """ember.igamma(self, other): the regularized lower incomplete gamma function."""
    from ember.core.incomplete_gamma import igamma as _igamma
    return _igamma(self, other)


def igammac(self, other):
    """ember.igammac(self, other): the regularized upper incomplete gamma function."""
    from ember.core.incomplete_gamma import igammac as _igammac
    return _igammac(self, other)


def is_distributed(self):
    """False: an ember tensor is never a distributed (sharded) tensor."""
    return False


def install(Tensor):
    from ember.core.inplace_ops import _inplace
    for fn in (hardshrink, prelu, histogram, stft, istft, hash_tensor, i0, igamma, igammac,
               is_distributed):
        setattr(Tensor, fn.__name__, fn)
    for fn in (i0, igamma, igammac):
        setattr(Tensor, fn.__name__ + "_", _inplace(fn, fn.__name__ + "_"))
