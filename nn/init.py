"""ember.nn.init: in-place parameter initialisers (``torch.nn.init``).

Every initialiser fills its tensor under no_grad, accepts ``generator=`` where it draws
random numbers, and returns the tensor (a meta tensor's, which has no values, unfilled)."""
import math
import warnings

from ember.autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_",
           "kaiming_uniform_", "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_",
           "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
           # PyTorch's deprecated spellings
           "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal",
           "orthogonal", "sparse", "uniform", "xavier_normal", "xavier_uniform"]

_LINEAR_GAIN = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                "conv_transpose2d", "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (``param``: leaky_relu's negative slope)."""
    if nonlinearity in _LINEAR_GAIN:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight shaped (out, in, *kernel)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# PyTorch's private helpers, which some code calls directly; the public fills use them
def _no_grad_uniform_(tensor, a, b, generator=None):
    """Fill ``tensor`` with samples of U(a, b) under no_grad."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    """Fill ``tensor`` with samples of N(mean, std^2) under no_grad."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _no_grad_fill_(tensor, val):
    """Fill ``tensor`` with ``val`` under no_grad."""
    with no_grad():
        return tensor.fill_(val)


def _no_grad_zero_(tensor):
    """Fill ``tensor`` with 0 under no_grad."""
    with no_grad():
        return tensor.zero_()


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b)."""
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std^2)."""
    return _no_grad_normal_(tensor, mean, std, generator)


def constant_(tensor, val):
    """Fill with ``val``."""
    return _no_grad_fill_(tensor, val)


def ones_(tensor):
    """Fill with 1."""
    return _no_grad_fill_(tensor, 1.0)


def zeros_(tensor):
    """Fill with 0."""
    return _no_grad_zero_(tensor)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ember.core.factories import eye
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-D convolution weight so the convolution is the identity (per group)."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    centre = tuple(s // 2 for s in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, tensor.shape[1])):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def _empty_noop(tensor):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op")
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    if _empty_noop(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan) (He et al., 2015)."""
    if _empty_noop(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def _accepted(n, propose, accept):
    """``n`` draws of ``propose(k)`` (a 1-d tensor of k candidates), those ``accept``
    (-> bool mask) rejects redrawn, only they, until none is left."""
    out = propose(n)
    pending = (~accept(out)).nonzero().reshape(-1)
    while pending.numel():
        c = propose(pending.numel())
        ok = accept(c)
        out[pending[ok]] = c[ok]
        pending = pending[~ok]
    return out


# Uniform proposals cover [a, b] only this many decay lengths from the density's peak:
# beyond, the density is below e^-36 (~2e-16) of the peak
_TAIL_LENGTHS = 36


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    """Fill ``tensor`` with samples of N(mean, std^2) restricted to [a, b] under no_grad,
    by rejection: normal draws outside [a, b] are redrawn when the interval holds much of
    the mass; otherwise uniform draws on [a, b] are accepted with probability
    density / peak density, which stays exact however far in a tail the interval lies."""
    if tensor.is_meta:
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=3)
    from ember.core import _tensor as _T
    if not tensor.is_floating_point():
        raise NotImplementedError(f"\"trunc_normal_\" not implemented for "
                                  f"'{_T._st_name(tensor.dtype)}'")

    def cdf(x):                 # the standard normal CDF
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    def fresh(k):
        return _T.empty(k, dtype=tensor.dtype, device=tensor.device)

    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            # compare with the bounds as the dtype holds them, as the draws are
            lo, hi = (_T.tensor(v, dtype=tensor.dtype).item() for v in (a, b))
            values = _accepted(tensor.numel(),
                               lambda k: fresh(k).normal_(mean, std, generator=generator),
                               lambda c: (c >= lo) & (c <= hi))
        else:
            peak = min(max(mean, a), b)
            # the density decays like exp(-d/length) away from the peak (Gaussian-fast
            # when the peak is the mean)
            length = std if peak == mean else min(std, std * std / abs(peak - mean))
            low = max(a, peak - _TAIL_LENGTHS * length)
            high = min(b, peak + _TAIL_LENGTHS * length)

            def accept(c):
                c = c if c.element_size() >= 4 else c.float()
                # log(density(c) / density(peak)), factored to keep far tails accurate
                log_ratio = -0.5 * ((c - peak) / std) * ((c + peak - 2 * mean) / std)
                u = _T.empty(c.shape, dtype=c.dtype, device=c.device)
                return u.uniform_(0.0, 1.0, generator=generator).log_() <= log_ratio

            values = _accepted(tensor.numel(),
                               lambda k: fresh(k).uniform_(low, high, generator=generator),
                               accept)
        return tensor.copy_(values.reshape(tuple(tensor.shape)))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples of N(mean, std^2) restricted to [a, b] (values outside are
    redrawn)."""
    return _no_grad_trunc_normal_(tensor, mean, std, a, b, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample, with the
    signs fixed so the result is uniformly distributed (Saxe et al., 2013); dims past the
    first are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    from ember.core import _tensor as _T
    from ember.core.shapes import diag

    from ember.linalg import qr
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        sample = _T.empty((rows, cols), dtype=tensor.dtype, device=tensor.device)
        sample.normal_(0.0, 1.0, generator=generator)
        if rows < cols:
            sample = sample.t()
        q, r = qr(sample)
        q = q * diag(r, 0).sign()
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q) if tensor.is_contiguous() else \
            tensor.copy_(q.reshape(tuple(tensor.shape)))
        return tensor.mul_(gain)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor drawn from N(0, std^2) with a ``sparsity`` fraction of every column
    set to zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ember.core.sorting import randperm
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        _no_grad_normal_(tensor, 0.0, std, generator)
        for col in range(cols):
            zero_rows = randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def _deprecated(method):
    """PyTorch's old name for ``method`` (without the trailing underscore), with a warning."""
    new = method.__name__
    old = new[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
                      FutureWarning, stacklevel=2)
        return method(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"Deprecated: use ``{new}``.\n\n{method.__doc__ or ''}"
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
