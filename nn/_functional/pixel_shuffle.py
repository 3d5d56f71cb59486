"""pixel_shuffle and pixel_unshuffle (channels <-> spatial blocks) and channel_shuffle
(interleave channel groups): reshape + permute."""
from ember.core._errors import _tensor_arg

__all__ = ["channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def _check(input, factor, op, arg):
    _tensor_arg(input, op, position=1)
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if int(factor) <= 0:
        raise RuntimeError(f"{op} expects a positive {arg}, but got {factor}")
    return int(factor)


def pixel_shuffle(input, upscale_factor):
    """[*, C * r^2, H, W] -> [*, C, H * r, W * r]: each channel group of r^2 becomes an
    r x r block (r = ``upscale_factor``)."""
    r = _check(input, upscale_factor, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    x = x.permute(list(range(n + 1)) + [n + 3, n + 1, n + 4, n + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H * r, W * r] -> [*, C * r^2, H, W]: the inverse of ``pixel_shuffle``."""
    r = _check(input, downscale_factor, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    n = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    x = x.permute(list(range(n + 1)) + [n + 2, n + 4, n + 1, n + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])


def channel_shuffle(input, groups):
    """[N, g * k, *] -> [N, k * g, *]: the channels of the ``groups`` groups interleaved
    (ShuffleNet)."""
    _tensor_arg(input, "channel_shuffle", position=1)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    shuffled = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return shuffled.reshape(input.shape)


native_channel_shuffle = channel_shuffle
