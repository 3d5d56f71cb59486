"""multilabel_margin_loss: the hinge loss of every target class against every other class
(targets listed per sample, ended by the first -1)."""
from ember.core._errors import _tensor_arg
from ember.nn._functional.loss import _reduce, _reduction

__all__ = ["multilabel_margin_loss"]


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample, sum over its target classes j and non-target classes i of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes; ``target`` holds class
    indices up to its first -1 (input and target (C,) or (N, C))."""
    red = _reduction(reduction, size_average, reduce)
    _tensor_arg(input, "multilabel_margin_loss", position=1)
    _tensor_arg(target, "multilabel_margin_loss", "target", position=2)
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0 and input.shape[0]):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{target.type()[6:-6] if hasattr(target, 'type') else target.dtype}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    t = target.reshape(x.shape)
    classes = x.shape[1]
    if t.numel() and bool(((t < -1) | (t >= classes)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # the targets of a sample are its entries before the first -1
    listed = (t != -1).long().cumprod(1).bool()
    index = t.masked_fill(~listed, 0)
    is_target = x.new_zeros(x.shape).scatter_add(1, index, listed.to(x.dtype)) > 0
    x_target = x.gather(1, index)                                   # (N, K)
    hinge = (1 - x_target.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)     # (N, K, C)
    keep = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (hinge * keep.to(hinge.dtype)).sum((1, 2)) / classes
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, red)
