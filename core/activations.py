"""Activation functions as composites of primitive ops, so every device has them: gelu,
softplus, silu, mish, hardtanh, elu, leaky_relu, hardshrink, prelu (what
``ember.nn.functional`` re-exports) and logit.  Where a backend fills the optional
`activation` entry (core/_activation.pxi) and nothing but autograd sees the call, the
pointwise ones run as its one kernel each way instead.  Signatures, defaults and errors
follow torch.nn.functional / torch."""
import functools
import math

from ember.core import _autograd as _ag
from ember.core import _fused
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core.elementwise import _opmath

__all__ = ["logit"]           # the rest are nn.functional names, not top-level torch ones

_F = _T.table_functions()     # erf, expm1, log1p, ...: the table-generated unary functions


def _float_input(x, op, kernel=None):
    """x checked as op's Tensor argument, of a floating dtype (else PyTorch's message,
    which names the kernel)."""
    _tensor_arg(x, op, position=1)
    if not x.is_floating_point():
        raise NotImplementedError(f'"{kernel or op}" not implemented for '
                                  f"'{_scalar_name(x)}'")
    return x


def _inplace(input, r, inplace):
    return input.copy_(r) if inplace and r is not input else r


def _into(input, x, inplace):
    """The fused kernel's ``out`` for an in-place form: input itself, when the activation
    reads input (no clone for autograd): nothing to copy back."""
    return input if inplace and x is input else None


def _in_opmath(inplace_at=None):
    """The decorated activation of a float16/bfloat16 tensor computed in float32 and rounded
    once to its dtype, as PyTorch's kernels compute them (their opmath type): a composite's
    steps in the narrow dtype round after each op (silu in bfloat16 differed from PyTorch in
    a quarter of its elements).  ``inplace_at``: the position of the ``inplace`` argument."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(input, *args, **kwargs):
            if not isinstance(input, _T.TensorBase) or _opmath(input.dtype) == input.dtype:
                return fn(input, *args, **kwargs)
            inplace = kwargs.pop("inplace", False)
            if inplace_at is not None and len(args) >= inplace_at:
                inplace = args[inplace_at - 1]
                args = args[:inplace_at - 1] + args[inplace_at:]
            r = fn(input.float(), *args, **kwargs)
            return input.copy_(r) if inplace else r.to(input.dtype)
        return wrapper
    return decorate


# --- the backend's fused kernels (core/_activation.pxi), and their derivatives in
# differentiable ops for a recorded backward (create_graph) and forward AD ---

def _fused_activation(name, x, *params, out=None):
    """Activation ``name`` of ``x`` as the backend's one kernel (and one graph node), or None
    where it does not apply (the caller's composite runs): see core/_activation.pxi.
    ``out``: x itself (see _into), written in place where nothing records it."""
    for p in params:                # numbers only: a tensor parameter takes the composite
        if type(p) is not float and type(p) is not int:
            return None
    return _fused._activation(name, x, *params, out=out)


_SIXTH = 0.1666666716337204       # PyTorch's hardsigmoid slope, float32(1/6) even for double


def _between(x, lo, hi):
    return (x >= lo) & (x <= hi)


DERIVATIVES = {           # (x, grad, p0, p1, p2) -> grad * f'(x), abi.h's formulas
    "leaky_relu": lambda x, g, p0, p1, p2: _T.where(x > 0, g, g * p0),
    "hardtanh": lambda x, g, p0, p1, p2: _T.where((x <= p0) | (x >= p1), 0.0, g),
    "hardsigmoid": lambda x, g, p0, p1, p2: _T.where((x > -3) & (x < 3), g * _SIXTH, 0.0),
    "hardswish": lambda x, g, p0, p1, p2: _T.where(
        x <= -3, 0.0, _T.where(x < 3, g * (x / 3 + 0.5), g)),
    "silu": lambda x, g, p0, p1, p2: _silu_slope(x) * g,
    "elu": lambda x, g, p0, p1, p2: _T.where(
        x <= 0, g * (p0 * p1 * p2) * _T.exp(_T.where(x <= 0, x, 0.0) * p2), g * p1),
    "softplus": lambda x, g, p0, p1, p2: _T.where(x * p0 > p1, g, g * _T.sigmoid(x * p0)),
    "log_sigmoid": lambda x, g, p0, p1, p2: g * _T.sigmoid(-x),
    "hardshrink": lambda x, g, p0, p1, p2: _T.where(_between(x, -p0, p0), 0.0, g),
    "softshrink": lambda x, g, p0, p1, p2: _T.where(_between(x, -p0, p0), 0.0, g),
    "mish": lambda x, g, p0, p1, p2: _mish_slope(x) * g,
}


def _silu_slope(x):
    s = _T.sigmoid(x)
    return s * (1 + x * (1 - s))


def _mish_slope(x):
    t = _T.tanh(_softplus(x, 1, 20))
    return t + x * _T.sigmoid(x) * (1 - t * t)


def _source(input, inplace):
    """What an activation computes from: with ``inplace`` and autograd recording, a clone, as
    the composite's nodes save their input and the copy back into ``input`` would bump the
    version they saved (PyTorch's in-place ops likewise save the original ``self``)."""
    if inplace and input.requires_grad and _ag.is_grad_enabled():
        return input.clone()
    return input


def gelu(input, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; approximate='tanh' uses
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate == "none":
        x = _float_input(input, "gelu", "GeluKernelImpl")
        try:    # one kernel each way (abi.h's GELU codes; float16/bfloat16 in float32 there)
            return _T._gelu(x)
        except NotImplementedError:  # a backend without them: the composite
            pass
    return _gelu_composite(input, approximate)


@_in_opmath()
def _gelu_composite(input, approximate):
    x = _float_input(input, "gelu", "GeluKernelImpl")
    if approximate == "none":
        if x.requires_grad and _ag.is_grad_enabled():
            return _gelu_function().apply(x)
        return x * _gelu_cdf(x)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + _T.tanh(inner))
    raise RuntimeError("approximate argument must be either none or tanh.")


_SQRT_HALF = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU = []


def _gelu_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, updated in place after the first op."""
    return _F["erf"](x * _SQRT_HALF).add_(1).mul_(0.5)


def _gelu_function():
    """The exact gelu as one graph node (ember.autograd.Function, made at first use: the
    autograd package imports the core): as a composite its backward ran ~11 elementwise
    ops, this runs 7 in place, with Phi(x) saved from the forward."""
    if not _GELU:
        from ember.core.function import Function, differentiating_backward

        class GeluBackward(Function):
            @staticmethod
            def forward(ctx, x):
                cdf = _gelu_cdf(x)
                ctx.save_for_backward(x, cdf)
                return x * cdf

            @staticmethod
            def backward(ctx, g):
                x, cdf = ctx.saved_tensors
                if differentiating_backward(x):     # from x alone, not the saved Phi(x)
                    pdf = _T.exp(x * x * -0.5) * _INV_SQRT_2PI
                    return g * ((1 + _F["erf"](x * _SQRT_HALF)) * 0.5 + x * pdf)
                # d/dx x Phi(x) = Phi(x) + x phi(x)
                return (x * x).mul_(-0.5).exp_().mul_(x).mul_(_INV_SQRT_2PI).add_(cdf).mul_(g)

        _GELU.append(GeluBackward)
    return _GELU[0]


@_in_opmath()
def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    x = _float_input(input, "softplus")
    r = _fused_activation("softplus", x, beta, threshold)
    return _softplus(x, beta, threshold) if r is None else r


def _softplus(x, beta, threshold):
    bx = x * beta
    # the log1p branch sees bx capped at the threshold: where() sends zero gradient to the
    # branch it does not pick, and exp(bx) = inf there would make that zero nan (a where,
    # not a minimum, whose tie would halve the gradient at bx == threshold)
    soft = _F["log1p"](_T.exp(_T.where(bx > threshold, threshold, bx))) / beta
    return _T.where(bx > threshold, x, soft)


@_in_opmath(1)
def silu(input, inplace=False):
    """x * sigmoid(x)."""
    x = _source(_float_input(input, "silu"), inplace)
    r = _fused_activation("silu", x, out=_into(input, x, inplace))
    return _inplace(input, x * _T.sigmoid(x) if r is None else r, inplace)


@_in_opmath(1)
def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    x = _source(_float_input(input, "mish"), inplace)
    r = _fused_activation("mish", x, out=_into(input, x, inplace))
    return _inplace(input, x * _T.tanh(_softplus(x, 1, 20)) if r is None else r, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped into [min_val, max_val]; its gradient passes only where
    min_val < x < max_val, and nan passes (PyTorch's hardtanh_backward)."""
    _tensor_arg(input, "hardtanh", position=1)
    if input.dtype.name == "bool":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not input.is_floating_point():          # the bounds take the input's integer dtype
        min_val, max_val = int(min_val), int(max_val)
    x = _source(input, inplace)
    r = _fused_activation("hardtanh", x, min_val, max_val, out=_into(input, x, inplace))
    return _inplace(input, _hardtanh(x, min_val, max_val) if r is None else r, inplace)


def _hardtanh(x, lo, hi):
    # masks, not max/min: their ties would split the gradient at the bounds, and where()
    # saves only the (bool) masks, so an in-place copy back into x stays differentiable
    return _T.where(x <= lo, lo, _T.where(x >= hi, hi, x))


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha (exp(x) - 1)."""
    x = _source(_float_input(input, "elu", "elu_cpu"), inplace)
    return _inplace(input, _elu_kernel(x, alpha, out=_into(input, x, inplace)), inplace)


def _elu_kernel(x, alpha, scale=1.0, input_scale=1.0, name="elu", out=None):
    """scale * x where x > 0, else scale * alpha * expm1(x * input_scale): PyTorch's one
    kernel behind elu, selu and celu, which computes half inputs in float32.  ``out``: x
    itself, for the in-place forms."""
    half = _opmath(x.dtype) != x.dtype
    v = x.float() if half else x
    r = _fused_activation(name, v, alpha, scale, input_scale, out=None if half else out)
    if r is not None:
        return r.to(x.dtype) if half else r
    pos = v > 0
    # the exp branch where() discards is fed 0, not x: for large x it would overflow to inf
    # and its backward's 0 * inf would put NaN into the gradient
    arg = _T.where(pos, 0, v)
    neg = _F["expm1"](arg if input_scale == 1.0 else arg * input_scale) * (alpha * scale)
    r = _T.where(pos, v if scale == 1.0 else v * scale, neg)
    return r.to(x.dtype) if half else r


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    x = _source(_float_input(input, "leaky_relu"), inplace)
    r = _fused_activation("leaky_relu", x, negative_slope, out=_into(input, x, inplace))
    return _inplace(input, _T.where(x > 0, x, x * negative_slope) if r is None else r,
                    inplace)


def logit(input, eps=None):
    """log(p / (1 - p)), p = input clamped into [eps, 1 - eps] when eps is given (integer
    inputs give the default float dtype)."""
    _tensor_arg(input, "logit", position=1)
    x = input if input.is_floating_point() else input.to(_T._state_default_dtype())
    if _ag._tracked(x):
        return _logit_function().apply(x, eps)
    return _logit(x, eps)


def _logit(x, eps):
    p = x if eps is None else _T._minimum_scalar(_T._maximum_scalar(x, eps), 1 - eps)
    return _T.log(p / (1 - p))


def _logit_slope(x, eps):
    """d logit / dx as PyTorch's: 1 / (x (1 - x)), so inf at 0 and 1; with ``eps``, 0
    outside [eps, 1 - eps] (the clamp) and the full slope at its ends; without, NaN outside
    [0, 1]."""
    slope = 1 / (x * (1 - x))
    if eps is None:
        return _T.where((x < 0) | (x > 1), math.nan, slope)
    return _T.where((x < eps) | (x > 1 - eps), 0.0, slope)


_LOGIT = []


def _logit_function():
    """logit as one node with PyTorch's derivative (made at first use: ember.autograd
    imports the core); the composite's clamp halved the gradient at eps and 1 - eps."""
    if not _LOGIT:
        from ember.core.function import Function

        class Logit(Function):
            _node_name = "LogitBackward0"

            @staticmethod
            def forward(ctx, x, eps):
                ctx.save_for_backward(x)
                ctx.eps = eps
                return _logit(x, eps)

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * _logit_slope(x, ctx.eps), None

            @staticmethod
            def jvp(ctx, t, _):
                x, = ctx.saved_tensors
                return t * _logit_slope(x, ctx.eps)
        _LOGIT.append(Logit)
    return _LOGIT[0]


def hardshrink(input, lambd=0.5):
    """input where |input| > lambd, else 0."""
    _tensor_arg(input, "hardshrink", position=1)
    r = _fused_activation("hardshrink", input, lambd)
    # NaN is not inside [-lambd, lambd]: it passes, as in PyTorch
    return _T.where(_between(input, -lambd, lambd), 0.0, input) if r is None else r


@composite("prelu")
def prelu(input, weight):
    """max(0, x) + weight * min(0, x), ``weight`` one number or one per channel (dim 1)."""
    _tensor_arg(input, "prelu", position=1)
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
        weight = weight.reshape((1, channels) + (1,) * (input.dim() - 2))
    else:
        weight = weight.reshape(())
    return _T.where(input > 0, input, weight * input)
