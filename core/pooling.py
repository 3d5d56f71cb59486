"""Max, average and adaptive pooling in 1-d and 2-d: PyTorch's argument rules (int or tuple
sizes, stride defaulting to kernel_size, ceil_mode, unbatched inputs, its error messages)
over the 2-d pooling ops of core/_pool.pxi, which work on [N, C, H, W].  A 1-d pool runs as
a 2-d one with H = 1 (its indices are then positions along the length, as PyTorch's)."""
from ember.core import _tensor as _T
from ember.core._errors import _int_tuple, _tensor_arg

# top-level names (torch.max_pool2d, ...); nn.functional also has adaptive_max_pool2d
__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "avg_pool1d",
           "avg_pool2d", "max_pool1d", "max_pool2d"]


def _pair(value, name, op, omitted=""):
    """An int or a 1- or 2-sequence of ints as a pair; a 1-d pool's (``op`` ending in 1d)
    takes only one int, as its pair's second."""
    seq = _int_tuple(value, name, op)
    if op.endswith("1d"):
        if len(seq) != 1:
            raise RuntimeError(_one_int_message(name, op, len(seq)))
        return seq * 2
    if len(seq) not in (1, 2):
        raise RuntimeError(f"{op}: {name} must {omitted}either be a single int, or a tuple of "
                           f"two ints")
    return seq * 2 if len(seq) == 1 else seq


def _one_int_message(name, op, n):
    if op == "avg_pool1d":
        return f"avg_pool1d() argument '{name}' should contain one int (got {n})"
    forms = {"stride": "None, an int, list of ints, or", "padding": "an int, list of ints, or"}
    return (f"{op}() {name} must be {forms.get(name, 'an int, list of ints or')} tuple of "
            f"ints of size 1 but got size {n}")


def _input(input, op, nd):
    """The input as [N, C, H, W] (a batch of one when unbatched), and whether it was."""
    _tensor_arg(input, op, position=1)
    x = input
    if x.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                           f"for input")
    if any(s == 0 for s in x.shape[x.dim() - nd - 1:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(x.shape)}")
    unbatched = x.dim() == nd + 1
    if unbatched:
        x = x.unsqueeze(0)
    return (x.unsqueeze(2) if nd == 1 else x), unbatched


def _output(r, unbatched, nd):
    if nd == 1:
        r = r.squeeze(2)
    return r.squeeze(0) if unbatched else r


def _omitted(stride):
    """Whether a pool's ``stride`` is left out: None or an empty sequence (it then defaults
    to the kernel size)."""
    return stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)


def _window(op, kernel_size, stride, padding, dilation, nd):
    """kernel, stride, padding, dilation as pairs (1-d: H = 1), checked as PyTorch does."""
    k = _pair(kernel_size, "kernel_size", op)
    s = k if _omitted(stride) else \
        _pair(stride, "stride", op, "either be omitted, a single int, or a tuple of two "
              "ints; it must ")
    p = _pair(padding, "padding", op)
    d = _pair(dilation, "dilation", op)
    if nd == 1:
        k, s, p, d = (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0])
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError("stride should not be zero")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    for i in range(2):
        if p[i] < 0 or 2 * p[i] > (k[i] - 1) * d[i] + 1:
            if op == "max_pool1d":
                raise RuntimeError(f"max_pool1d() padding should be at most half of kernel "
                                   f"size, but got padding={p[1]} and kernel_size={k[1]}")
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p[i]}, kernel_size={k[i]} and dilation={d[i]}")
    return k, s, p, d


def _check_output(x, r, unbatched, nd):
    if r.shape[2] <= 0 or r.shape[3] <= 0:
        size = lambda t: "x".join(str(v) for v in t.shape[1:][-(nd + 1):])  # noqa: E731
        raise RuntimeError(f"Given input size: ({size(x.squeeze(2) if nd == 1 else x)}). "
                           f"Calculated output size: "
                           f"({size(r.squeeze(2) if nd == 1 else r)}). Output size is too "
                           f"small")


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    op = f"max_pool{nd}d"
    x, unbatched = _input(input, op, nd)
    k, s, p, d = _window(op, kernel_size, stride, padding, dilation, nd)
    out, idx = _T.max_pool2d_with_indices(x, k, s, p, d, bool(ceil_mode))
    _check_output(x, out, unbatched, nd)
    out = _output(out, unbatched, nd)
    return (out, _output(idx, unbatched, nd)) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over windows of ``kernel_size`` along the last dim of ``input`` [N, C, L]
    (or [C, L]); ``return_indices`` also gives each maximum's position along L."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over (dilated) windows of ``input`` [N, C, H, W] (or [C, H, W]), padded
    with -inf; ``ceil_mode`` keeps a last partial window that starts inside the input or its
    left padding; ``return_indices`` also gives each maximum's flat position h * W + w in
    its plane."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 2)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd):
    op = f"avg_pool{nd}d"
    x, unbatched = _input(input, op, nd)
    k, s, p, _ = _window(op, kernel_size, stride, padding, 1, nd)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    out = _T.avg_pool2d(x, k, s, p, bool(ceil_mode), bool(count_include_pad),
                        divisor_override)
    _check_output(x, out, unbatched, nd)
    return _output(out, unbatched, nd)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """The mean over windows of ``kernel_size`` along the last dim of ``input`` [N, C, L];
    ``count_include_pad`` counts zero padding in the divisor."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     None, 1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean over windows of ``input`` [N, C, H, W] (or [C, H, W]): the window sum over
    ``divisor_override`` if given, else over the window size clipped to the padded input
    (``count_include_pad``) or to the input."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2)


def _adaptive_size(output_size, x, nd, op):
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nd
    sizes = tuple(output_size)
    if len(sizes) != nd:
        raise RuntimeError(f"{op}: output_size must be {nd}")
    sizes = tuple(x.shape[x.dim() - nd + i] if v is None else int(v)
                  for i, v in enumerate(sizes))
    if any(v < 0 for v in sizes):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to "
                           f"0 but received {{{', '.join(map(str, sizes))}}}")
    return (1,) + sizes if nd == 1 else sizes


def _adaptive_input(input, op, nd):
    _tensor_arg(input, op, position=1)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    for d in range(input.dim() - nd, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    return _input(input, op, nd)


def _adaptive_avg(input, output_size, nd):
    op = f"adaptive_avg_pool{nd}d"
    x, unbatched = _adaptive_input(input, op, nd)
    size = _adaptive_size(output_size, input, nd, op)
    if all(s == 1 for s in size) and x.is_floating_point():
        # global pooling (a ResNet's head) is the mean over the window dims, as PyTorch
        # computes it: one reduction, ~10x faster than the windowed kernel
        out = x.mean(tuple(range(-nd, 0)), keepdim=True)
    else:
        out = _T._adaptive_avg_pool2d(x, size)
    return _output(out, unbatched, nd)


def adaptive_avg_pool1d(input, output_size):
    """The mean over ``output_size`` windows along the last dim of ``input`` [N, C, L],
    window i covering [floor(i L / out), ceil((i + 1) L / out))."""
    return _adaptive_avg(input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):
    """The mean over an ``output_size`` grid of windows of ``input`` [N, C, H, W] (or
    [C, H, W]); an int means a square output, a None entry keeps that input size."""
    return _adaptive_avg(input, output_size, 2)


def _adaptive_max(input, output_size, return_indices, nd):
    op = f"adaptive_max_pool{nd}d"
    x, unbatched = _adaptive_input(input, op, nd)
    out, idx = _T.adaptive_max_pool2d(x, _adaptive_size(output_size, input, nd, op))
    out = _output(out, unbatched, nd)
    return (out, _output(idx, unbatched, nd)) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The maximum over ``output_size`` adaptive windows along the last dim of ``input``."""
    return _adaptive_max(input, output_size, return_indices, 1)


def adaptive_max_pool1d_pair(input, output_size):
    """torch.adaptive_max_pool1d(input, output_size) -> (values, indices): the top-level
    form always returns the indices (nn.functional's takes ``return_indices``)."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The maximum over an ``output_size`` grid of adaptive windows of ``input`` [N, C, H, W]
    (or [C, H, W]); ``return_indices`` also gives flat positions h * W + w."""
    return _adaptive_max(input, output_size, return_indices, 2)
