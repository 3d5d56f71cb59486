"""The margin, embedding and likelihood losses of torch.nn.functional that nn/_functional/
loss.py lacks: composites of differentiable ember ops, with PyTorch's signatures, legacy
size_average/reduce handling and error messages."""
import math
import warnings

from ember.core._tensor import TensorBase
from ember.nn._functional.distance import pairwise_distance
from ember.nn._functional.loss import _reduce, _reduction

import ember

__all__ = ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss",
           "margin_ranking_loss", "multi_margin_loss", "multilabel_soft_margin_loss",
           "poisson_nll_loss", "soft_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]


def _plain_reduction(reduction, message):
    """For the losses without the legacy flags: reject an unknown reduction with the
    op's own wording (``message`` follows the name)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction}{message}")
    return reduction


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = input - target; each
    term times ``weight`` (input's shape) when given."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=2)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("none", "mean", "sum"):
        if weight is not None:
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                             "'mean', 'sum'.")
        _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    a = d.abs()
    loss = ember.where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target (input1 - input2) + margin), target in {1, -1}; broadcasts."""
    red = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1 (both terms
    where target is neither, as PyTorch does)."""
    red = _reduction(reduction, size_average, reduce)
    hinge = ember.where(target != 1, (margin - input).clamp_min(0), 0.0)
    own = ember.where(target != -1, input, 0.0)
    return _reduce(hinge + own, red)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target input)), averaged over all elements by 'mean'."""
    red = _reduction(reduction, size_average, reduce)
    z = -target * input
    # log1p(exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|))
    return _reduce(z.clamp_min(0) + (-z.abs()).exp().log1p(), red)


def _log_sigmoid(x):
    return -((-x).clamp_min(0) + (-x.abs()).exp().log1p())


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per sample, the mean over the classes (last dim) of the binary cross entropies of
    sigmoid(input) against ``target`` in {0, 1}, times ``weight``."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    loss = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, _plain_reduction(reduction, " is not valid"))


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1;
    inputs (N, D) with target (N,), or (D,) with a 0-D target."""
    red = _reduction(reduction, size_average, reduce)
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dim() == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if target.dim() == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.dim() - 1
    # PyTorch's formula: eps 1e-12 added to both squared norms, not a clamp
    sq1 = (input1 * input1).sum(dim) + 1e-12
    sq2 = (input2 * input2).sum(dim) + 1e-12
    cos = (input1 * input2).sum(dim) / (sq1 * sq2).sqrt()
    pos = ember.where(target == 1, 1 - cos, 0.0)
    neg = ember.where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(pos + neg, red)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Per sample, sum over classes j != y of max(0, margin - x[y] + x[j])^p (times
    weight[y]), divided by the number of classes; input (N, C) or (C,)."""
    red = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    classes, batch = x.shape[1], x.shape[0]
    if target.numel() != batch or target.dim() > 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal "
                           f"to the number of input samples (batch size). Expected target "
                           f"size [{batch}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    y = target.reshape(-1, 1)
    if batch and bool(((y < 0) | (y >= classes)).any()):
        raise RuntimeError("target out of range")
    z = (margin - x.gather(1, y) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y]
    not_target = ember.arange(classes, device=y.device).reshape(1, -1) != y
    loss = (z * not_target.to(z.dtype)).sum(1) / classes
    if input.dim() < 2 and red == "none":
        loss = loss.reshape(target.shape)
    return _reduce(loss, red)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm pairwise_distance (eps added to
    the difference); ``swap`` takes d(n, p) as d(a, n) where it is smaller."""
    red = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_dims(anchor, positive, negative)

    def dist(x1, x2):
        return pairwise_distance(x1, x2, p, eps)

    return _triplet(anchor, positive, negative, dist, margin, swap, red)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any ``distance_function(x1, x2)`` (pairwise_distance by
    default)."""
    _plain_reduction(reduction, " is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance,
                    margin, swap, reduction)


def _same_dims(anchor, positive, negative):
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {anchor.dim()}D, "
                           f"positive {positive.dim()}D, and negative {negative.dim()}D "
                           f"inputs")


def _triplet(anchor, positive, negative, dist, margin, swap, red):
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ember.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), red)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(input) - target input (log_input) or input - target log(input + eps); ``full``
    adds Stirling's target log(target) - target + 0.5 log(2 pi target) where target > 1."""
    red = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        t = ember.where(big, target, 1)          # no log(0) (and no NaN gradient) below 1
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + ember.where(big, stirling, 0)
    return _reduce(loss, red)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) when ``full``), var
    clamped to >= eps for the value only (its gradient passes the clamp, as PyTorch's).
    ``var`` is input's shape, input's shape without the last dim, broadcastable with one
    mismatching dim, or a float."""
    if not isinstance(var, TensorBase):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ember.full(tuple(input.shape), float(var), dtype=input.dtype,
                         device=input.device)
    elif var.numel() and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    _plain_reduction(reduction, " is not valid")
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
