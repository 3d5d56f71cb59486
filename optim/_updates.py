"""In-place update arithmetic the optimizers share, in PyTorch's evaluation order (so the
rounding matches torch's ``lerp_``/``addcmul_``/``addcdiv_``) and with as few ember ops as
that order allows: each op costs a few microseconds of dispatch on small tensors.

All of them run under ``ember.no_grad()`` (the optimizers' ``step``) and write ``out``."""
import ember

__all__ = ["addcdiv_", "addcmul_", "lerp_"]


def lerp_(out, end, weight):
    """``out.lerp_(end, weight)`` for a Python-number weight: ``out + w * (end - out)``
    below 0.5, ``end - (end - out) * (1 - w)`` from 0.5 on (torch's two branches)."""
    diff = ember.sub(end, out)
    if abs(weight) < 0.5:
        return out.add_(diff.mul_(weight))
    return ember.sub(end, diff.mul_(1 - weight), out=out)


def addcmul_(out, tensor1, tensor2, value=1):
    """``out.addcmul_(tensor1, tensor2, value=value)``: ``out + (value * t1) * t2``."""
    prod = ember.mul(tensor1, value) if value != 1 else ember.mul(tensor1, tensor2)
    if value != 1:
        prod.mul_(tensor2)
    return out.add_(prod)


def addcdiv_(out, tensor1, tensor2, value=1):
    """``out.addcdiv_(tensor1, tensor2, value=value)``: ``out + (value * t1) / t2``."""
    quot = ember.mul(tensor1, value).div_(tensor2) if value != 1 else ember.div(tensor1,
                                                                                 tensor2)
    return out.add_(quot)
