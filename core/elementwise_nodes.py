"""Autograd nodes of elementwise composites whose PyTorch derivative is not what the chain
rule through their composition gives: hypot (g * x / result, NaN at the origin, where the
overflow-safe composite would give 0), copysign (g * result / input for the input, NaN
at inf/NaN; a zero gradient, not None, for ``other``) and clamp (the bounds included, not
split at a tie as maximum's rule would).  core/elementwise.py calls them."""
import math

from ember.core import _tensor as _T
from ember.core._tensor import TensorBase, where
from ember.core.function import Function, differentiating_backward


class Hypot(Function):
    """sqrt(x^2 + y^2) scaled by the larger magnitude, so it does not overflow; ``y`` may
    be a number."""

    _node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, x, y):
        a, b = _T._abs(x), _T._abs(y)
        hi, lo = _T.maximum(a, b), _T.minimum(a, b)
        r = hi * _T.sqrt(1 + _T.square(lo / _T.where(hi == 0, 1.0, hi)))
        r = _T.where((a == math.inf) | (b == math.inf), math.inf, r)   # inf beats NaN (C)
        ctx.save_for_backward(x, y if isinstance(y, TensorBase) else None, r)
        return r

    @staticmethod
    def backward(ctx, g):
        x, y, r = ctx.saved_tensors
        return g * x / r, (None if y is None else g * y / r)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y, r = ctx.saved_tensors
        t = 0 if tx is None else tx * x
        return (t if ty is None else t + ty * y) / r


class _Copysign(Function):
    """|a| with the sign bit of ``b`` (a tensor, or a number)."""

    @staticmethod
    def forward(ctx, a, b):
        from ember.core.elementwise import signbit
        negative = signbit(b) if isinstance(b, TensorBase) else math.copysign(1.0, b) < 0
        mag = _T._abs(a)
        r = _T.where(negative, -mag, mag) if isinstance(negative, TensorBase) else \
            (-mag if negative else mag)
        ctx.save_for_backward(a, r)
        return r

    @staticmethod
    def backward(ctx, g):
        a, r = ctx.saved_tensors
        gb = _T.zeros_like(g) if ctx.needs_input_grad[1] else None
        return g * _T.where(a == 0, 0.0, r / a), gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, r = ctx.saved_tensors
        return None if ta is None else ta * _T.where(a == 0, 0.0, r / a)


# torch's node names: Backward0 for a tensor ``other``, Backward1 for a number
CopysignTensor = type("Copysign", (_Copysign,), {"_node_name": "CopysignBackward0"})
CopysignNumber = type("Copysign", (_Copysign,), {"_node_name": "CopysignBackward1"})


def _number_bounds(lo, hi):
    """(lo, hi) for the fused kernel (abi.h's ACTIVATION_CLAMP, -inf/inf for no bound) when
    both are None or plain non-NaN numbers; None otherwise (a NaN bound makes the result
    NaN, which the kernel's comparisons would not)."""
    if any(b is not None and (type(b) not in (int, float) or b != b) for b in (lo, hi)):
        return None
    try:
        return (-math.inf if lo is None else float(lo)), (math.inf if hi is None else float(hi))
    except OverflowError:                 # an int past double's range: the composite's say
        return None


def _clamp_pass(x, lo, hi, out=None):
    """The activation entry's one clamp pass of x into [lo, hi] (numbers): written into
    ``out`` where the entry can write there, else a new tensor; None where it does not
    apply."""
    r = _T._activation_kernel("clamp", x, None, lo, hi, out=out) if out is not None else None
    return r if r is not None else _T._activation_kernel("clamp", x, None, lo, hi)


def _clamp_kernels(x, lo, hi, out=None):
    bounds = _number_bounds(lo, hi)
    if bounds is not None:                # one pass instead of a maximum and a minimum
        r = _clamp_pass(x, *bounds, out=out)
        if r is not None:
            return r
    r = x
    if lo is not None:
        r = _T._maximum_scalar(r, lo)
    if hi is not None:
        r = _T._minimum_scalar(r, hi)
    return r


def _clamp_gradients(x, lo, hi, g):
    """torch's clamp_backward / clamp_backward_min_max: the input's gradient passes where
    lo <= x <= hi (bounds included: maximum's rule would halve it at a tie), a tensor
    bound's where x lies beyond it (min's only while min < max)."""
    bounds = _number_bounds(lo, hi)
    if bounds is not None and not differentiating_backward(x, g):   # one pass
        gx = _T._activation_kernel("clamp", x, g, *bounds)
        if gx is not None:
            return gx, None, None
    ge = None if lo is None else x >= lo
    le = None if hi is None else x <= hi
    keep = le if ge is None else ge if le is None else ge & le
    gx = where(keep, g, 0.0)
    glo = ghi = None
    if isinstance(lo, TensorBase):
        past = x < lo if hi is None else (x < lo) & (lo < hi)
        glo = where(past, g, 0.0)
    if isinstance(hi, TensorBase):
        past = x > hi if lo is None else (x > hi) | (hi < lo)
        ghi = where(past, g, 0.0)
    return gx, glo, ghi


class _Clamp(Function):
    """clamp's node (one subclass per torch node name, _CLAMP_NODES)."""

    @staticmethod
    def forward(ctx, x, lo, hi, kind):
        ctx.save_for_backward(x, *(b for b in (lo, hi) if isinstance(b, TensorBase)))
        ctx.lo, ctx.hi, ctx.kind = lo, hi, kind
        return _clamp_kernels(x, lo, hi)

    @staticmethod
    def _operands(ctx):
        x, *bounds = ctx.saved_tensors
        lo = bounds.pop(0) if isinstance(ctx.lo, TensorBase) else ctx.lo
        hi = bounds.pop(0) if isinstance(ctx.hi, TensorBase) else ctx.hi
        return x, lo, hi

    @staticmethod
    def backward(ctx, g):
        return (*_clamp_gradients(*_Clamp._operands(ctx), g), None)

    @staticmethod
    def jvp(ctx, tx, tlo, thi, _):
        x, lo, hi = _Clamp._operands(ctx)
        if not (isinstance(lo, TensorBase) or isinstance(hi, TensorBase)):
            return _clamp_gradients(x, lo, hi, tx)[0]      # number bounds: elementwise
        tlo = 0.0 if tlo is None else tlo
        thi = 0.0 if thi is None else thi
        # torch's clamp_jvp, and clamp_min/clamp_max's own (ties take the input's)
        if ctx.kind == "clamp_min":
            return where(x >= lo, tx, tlo)
        if ctx.kind == "clamp_max":
            return where(x <= hi, tx, thi)
        if hi is None:
            return where(x > lo, tx, tlo)
        if lo is None:
            return where(x < hi, tx, thi)
        return where(lo > hi, thi, where(x < lo, tlo, where(x > hi, thi, tx)))


# torch's node names: Backward0 for tensor bounds of clamp, Backward1 for number bounds
# (the reverse for clamp_min / clamp_max)
_CLAMP_NODES = {
    (kind, tensors): type(title, (_Clamp,), {"_node_name": f"{title}Backward{number}"})
    for kind, title, numbers in (("clamp", "Clamp", (1, 0)), ("clamp_min", "ClampMin", (0, 1)),
                                 ("clamp_max", "ClampMax", (0, 1)))
    for tensors, number in ((False, numbers[0]), (True, numbers[1]))}
