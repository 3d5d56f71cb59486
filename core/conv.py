"""conv1d and conv2d: PyTorch's argument rules (int/tuple/'valid'/'same' padding, unbatched
inputs, channel, group and dtype checks, its error messages) over the ``convolution`` op
(core/_conv.pxi), which works on [N, C, H, W] with pairs of ints.  A 1-d convolution runs as
a 2-d one with H = 1."""
from ember.core import _tensor as _T
from ember.core._errors import _int_tuple, _tensor_arg
from ember.core.mode_keys import autocast_active

__all__ = ["conv1d", "conv2d"]

# PyTorch's ScalarType names, which its dtype errors quote
_SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                 "float64": "Double", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_C_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
            "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _expand(value, n, name):
    """An int or a sequence of 1 or n ints as an n-tuple."""
    seq = _int_tuple(value, name)
    if len(seq) == 1:
        return seq * n
    if len(seq) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(seq)}")
    return seq


def _same_padding(weight, stride, dilation, nd):
    """'same': (left padding per dim, extra right padding per dim)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, extra = [], []
    for i in range(nd):
        total = dilation[i] * (weight.shape[2 + i] - 1)
        left.append(total // 2)
        extra.append(total - 2 * (total // 2))
    return tuple(left), extra


def _pad_right(x, extra):
    """x with `extra[i]` zeros appended to spatial dim i (the odd part of 'same' padding)."""
    from ember.core.shapes import cat

    for i, e in enumerate(extra):
        if e:
            shape = list(x.shape)
            shape[2 + i] = e
            x = cat([x, _T.zeros(shape, dtype=x.dtype, device=x.device)], 2 + i)
    return x


def _steps(stride, dilation, nd):
    """``stride`` and ``dilation`` as ``nd`` values each, checked positive (PyTorch's
    errors)."""
    stride, dilation = _expand(stride, nd, "stride"), _expand(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    return stride, dilation


def _check(x, weight, bias, groups, nd, name):
    if x.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(x.shape)}")
    if weight.dim() != nd + 2:
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-"
                           f"dimensional weight {list(weight.shape)}, but got "
                           f"{x.dim()}-dimensional input of size {list(x.shape)} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if autocast_active():
        return
    if x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR_NAMES[x.dtype.name]} but found "
                           f"{_SCALAR_NAMES[weight.dtype.name]}")
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(f"Input type ({_C_NAMES[x.dtype.name]}) and bias type "
                           f"({_C_NAMES[bias.dtype.name]}) should be the same")


def _check_shapes(x, weight, bias, padding, dilation, groups, nd):
    cout = weight.shape[0]
    if cout % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"[{list(weight.shape)}] instead")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           f"channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {cout} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    padded = [x.shape[2 + i] + 2 * padding[i] for i in range(nd)]
    kernel = [dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(nd)]
    if any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                           f"than actual input size")


def _conv_args(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """The checked arguments of a conv{nd}d call (PyTorch's rules): the input batched and
    with 'same''s odd extra padding applied, stride/padding/dilation as nd-tuples, groups,
    and whether the input was unbatched."""
    x = _tensor_arg(input, name, "input")
    weight = _tensor_arg(weight, name, "weight")
    if bias is not None:
        _tensor_arg(bias, name, "bias")
    groups = int(groups)
    _check(x, weight, bias, groups, nd, name)
    stride, dilation = _steps(stride, dilation, nd)
    extra = [0] * nd
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            padding, extra = _same_padding(weight, stride, dilation, nd)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _expand(padding, nd, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
    unbatched = x.dim() == nd + 1
    if unbatched:
        x = x.unsqueeze(0)
    x = _pad_right(x, extra)
    _check_shapes(x, weight, bias, padding, dilation, groups, nd)
    return x, weight, stride, padding, dilation, groups, unbatched


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    x, weight, stride, padding, dilation, groups, unbatched = _conv_args(
        input, weight, bias, stride, padding, dilation, groups, nd, name)
    if nd == 1:
        r = _T.convolution(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]),
                           (0, padding[0]), (1, dilation[0]), groups).squeeze(2)
    else:
        r = _T.convolution(x, weight, bias, stride, padding, dilation, groups)
    return r.squeeze(0) if unbatched else r


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation of ``input`` [N, C, L] (or unbatched [C, L]) with ``weight``
    [Cout, C / groups, k], plus ``bias`` [Cout]; ``padding`` is an int, a 1-tuple, 'valid'
    (none) or 'same' (output as long as the input; stride 1 only)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of ``input`` [N, C, H, W] (or unbatched [C, H, W]) with
    ``weight`` [Cout, C / groups, kH, kW], plus ``bias`` [Cout]; ``stride``, ``padding``
    and ``dilation`` are ints or pairs; ``padding`` may also be 'valid' or 'same' (an odd
    total padding puts the extra element on the right/bottom, as PyTorch)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")
