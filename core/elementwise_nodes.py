"""Autograd nodes of elementwise composites whose PyTorch derivative is not what the chain
rule through their composition gives: hypot (g * x / result, NaN at the origin, where the
overflow-safe composite would give 0) and copysign (g * result / input for the input, NaN
at inf/NaN; a zero gradient, not None, for ``other``).  core/elementwise.py calls them."""
import math

from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.function import Function


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
