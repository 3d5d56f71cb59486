"""pad and one_hot: composites of views, cat and scatter (differentiable through them)."""
from ember.core._dispatch import composite

import ember

__all__ = ["one_hot", "pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _side(x, d, left, right, mode, value):
    """x padded (or cropped, for negative amounts) along dim d."""
    size = x.shape[d]
    if mode in ("reflect", "replicate") and min(left, right) < 0 < max(left, right):
        # PyTorch reflects and replicates the uncropped input's edges: pad, then crop
        if mode == "reflect":
            _check_reflect(x, d, left, right)
        x = _side(x, d, max(left, 0), max(right, 0), mode, value)
        return _side(x, d, min(left, 0), min(right, 0), mode, value)
    if left < 0 or right < 0:
        start, stop = max(-left, 0), size - max(-right, 0)
        if stop < start:
            raise RuntimeError(f"pad: the padding ({left}, {right}) crops dimension {d} of "
                               f"size {size} to a negative size")
        x = x.narrow(d, start, stop - start)
        size = stop - start
        left, right = max(left, 0), max(right, 0)
    if left == 0 and right == 0:
        return x
    if mode == "reflect":
        _check_reflect(x, d, left, right)
    if mode == "circular" and (left > size or right > size):
        raise RuntimeError(f"pad: padding value causes wrapping around more than once "
                           f"(padding ({left}, {right}) at dimension {d} of size {size})")
    if mode == "replicate" and size == 0:
        raise RuntimeError(f"pad: cannot replicate-pad dimension {d} of size 0")
    parts = []
    for amount, at_start in ((left, True), (right, False)):
        if amount == 0:
            parts.append(None)
            continue
        if mode == "constant":
            shape = list(x.shape)
            shape[d] = amount
            part = ember.full(shape, value, dtype=x.dtype, device=x.device)
        elif mode == "reflect":
            part = x.narrow(d, 1 if at_start else size - 1 - amount, amount).flip(d)
        elif mode == "replicate":
            shape = list(x.shape)
            shape[d] = amount
            part = x.narrow(d, 0 if at_start else size - 1, 1).expand(shape)
        else:
            part = x.narrow(d, size - amount if at_start else 0, amount)
        parts.append(part)
    return ember.cat([p for p in (parts[0], x, parts[1]) if p is not None], d)


def _check_reflect(x, d, left, right):
    if left >= x.shape[d] or right >= x.shape[d]:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({left}, {right}) at dimension "
                           f"{d} of input {list(x.shape)}")


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``: ``pad`` = (left, right) amounts for the last dim, then the one
    before it, and so on (negative amounts crop).  mode: 'constant' (``value``, default 0),
    'reflect' (mirror without the edge), 'replicate' (the edge value) or 'circular'
    (wrap around); the non-constant modes pad the last 1-3 dims of a batched or unbatched
    input."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.dim()}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        k = len(pad) // 2
        if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
            raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding "
                                      "are supported for now")
        width = input.shape[-1]
        if k == 1 and mode != "circular" and width + pad[0] + pad[1] <= 0:
            # (PyTorch's 2-d and 3-d kernels give an empty result where this one raises)
            raise RuntimeError(f"input (W: {width}) is too small. Calculated output W: "
                               f"{width + pad[0] + pad[1]}")
        out = _MODE_OPS[mode, k](input, pad, mode)        # (its shape checks come first)
        if input.dtype == ember.bool and mode != "circular":
            op = "reflection" if mode == "reflect" else "replication"
            raise NotImplementedError(f'"{op}_pad{k}d" not implemented for \'Bool\'')
        return out
    value = 0 if value is None else value
    if all(int(p) >= 0 for p in pad) and not _transformed(input):
        return _constant_padded(input, pad, value)
    return _padded(input, pad, mode, value)


def _transformed(x):
    """Whether x is a vmap wrapper or carries tangents: its pad is built from views and cat,
    which the transforms follow (the fill-and-copy path writes into a plain tensor)."""
    from ember.core import _autograd as _ag
    from ember.core import _tensor as _T
    return _T._batch_level(x) is not None or _ag._fw_scan((x,))[0] >= 0


def _constant_padded(input, pad, value):
    """A constant pad without cropping: the result filled with ``value``, ``input`` copied
    into its middle (one pass each; the cat per side copied the whole tensor per dim).  The
    copy into a view records input's gradient (the middle of the result's gradient)."""
    shape = list(input.shape)
    middle = [slice(None)] * input.dim()
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        middle[d] = slice(left, left + shape[d])
        shape[d] += left + right
    out = ember.full(shape, value, dtype=input.dtype, device=input.device)
    out[tuple(middle)] = input
    return out


def _padded(input, pad, mode, value=0):
    x = input
    for i in range(len(pad) // 2):
        x = _side(x, input.dim() - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1]), mode, value)
    return x


# PyTorch's ops for the modes that copy the input's own values, by the dims they pad (the
# names autocast's lists use: on the CPU reflection and replication pads run in float32)
_MODE_OPS = {(mode, k): composite(f"{op}_pad{k}d")(_padded)
             for mode, op in (("reflect", "reflection"), ("replicate", "replication"),
                              ("circular", "_circular")) for k in (1, 2, 3)}


@composite("one_hot")     # inside vmap: one call on every sample (ember.func._batching)
def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape tensor.shape + (num_classes,) with a 1 at each value of
    the int64 ``tensor`` (num_classes=-1: the maximum value + 1)."""
    if tensor.dtype != ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max()) + 1
        elif int(tensor.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = ember.zeros(tuple(tensor.shape) + (num_classes,), dtype=ember.int64,
                      device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)
