"""linear_cross_entropy: cross entropy of a linear map's logits, optionally in row chunks
whose logits are recomputed in backward (activation checkpointing), so the whole
(rows, classes) logits tensor never lives at once."""
from ember.core._errors import _tensor_arg
from ember.nn._functional.linear import linear
from ember.nn._functional.loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def _logits(input, weight, bias):
    """linear() over a (C, d_1, ..., d_K, in) weight: logits (N, C, d_1, ..., d_K)."""
    if weight.dim() == 2:
        return linear(input, weight, bias)
    trailing = tuple(weight.shape[1:-1])
    flat_bias = None if bias is None else bias.reshape(-1)
    out = linear(input, weight.reshape(-1, weight.shape[-1]), flat_bias)
    return out.reshape((input.shape[0], weight.shape[0]) + trailing)


def _chunk_loss(input, weight, target, bias, class_weight, ignore_index, label_smoothing):
    return cross_entropy(_logits(input, weight, bias), target, weight=class_weight,
                         ignore_index=ignore_index, reduction="sum",
                         label_smoothing=label_smoothing)


def _mean_denominator(target, class_weight, ignore_index, rows):
    if target.is_floating_point():          # class probabilities: a mean over the rows
        return rows * (target[0, 0].numel() if target.dim() > 2 else 1)
    keep = target != ignore_index
    if class_weight is None:
        return keep.sum()
    return class_weight.gather(0, target.masked_fill(~keep, 0).reshape(-1)).mul(
        keep.reshape(-1)).sum()


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; with
    ``options`` (a LinearCrossEntropyOptions) the batch runs in chunks whose logits are
    recomputed during backward instead of kept."""
    _tensor_arg(input, "linear_cross_entropy", "input", position=1)
    if ignore_index is None:
        ignore_index = -100
    rows = input.shape[0] if input.dim() == 2 else 1
    chunk = rows
    if options is not None and input.dim() == 2 and reduction != "none":
        chunk = options._chunk_rows(rows, linear_weight.shape[0], input.shape[-1])
    if chunk >= rows:
        return cross_entropy(_logits(input, linear_weight, linear_bias), target, weight=weight,
                             ignore_index=ignore_index, reduction=reduction,
                             label_smoothing=label_smoothing)
    from ember.utils.checkpoint import checkpoint
    total = None
    for start in range(0, rows, chunk):
        part = checkpoint(_chunk_loss, input[start:start + chunk], linear_weight,
                          target[start:start + chunk], linear_bias, weight, ignore_index,
                          label_smoothing, use_reentrant=False)
        total = part if total is None else total + part
    if reduction == "sum":
        return total
    return total / _mean_denominator(target, weight, ignore_index, rows)
