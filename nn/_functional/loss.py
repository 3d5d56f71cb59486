"""Loss functions with PyTorch's semantics.  nll_loss and cross_entropy over class
indices run the core's explicit ops (a fused log_softmax + nll kernel on the CPU); the
others are composites of differentiable ember ops.

The margin, embedding and likelihood losses are composites too, with PyTorch's signatures,
legacy size_average/reduce handling and error messages; multilabel_margin_loss is the hinge
loss of every target class against every other class (targets listed per sample, ended by
the first -1)."""
import math
import warnings

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.activations import softplus
from ember.core.function import Function
from ember.nn._functional.distance import pairwise_distance

import ember

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "kl_div",
           "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss", "cosine_embedding_loss",
           "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss",
           "margin_ranking_loss", "multi_margin_loss", "multilabel_soft_margin_loss",
           "poisson_nll_loss", "soft_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "multilabel_margin_loss"]


_REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction, size_average=None, reduce=None):
    """The reduction name, from the legacy size_average/reduce flags when either is set;
    the legacy 'elementwise_mean' is 'mean' (each with PyTorch's deprecation warning)."""
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                      "reduction='mean' instead.", stacklevel=3)
        return "mean"
    if reduction not in _REDUCTION_CODES:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy_reduction(size_average, reduce, stacklevel=4):
    """The reduction the deprecated (size_average, reduce) pair means (None = True)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=stacklevel)
    return reduction


def _check_weight_dtype(input, weight, target=None):
    """PyTorch's class-weighted kernels read ``weight`` in the input's dtype only.  With a
    ``target`` (nll's kernel), after its shape checks: a batch or weight size mismatch is
    left to the kernel, whose error PyTorch gives first."""
    if target is not None and input.dim() > 1 and (
            target.dim() == 0 or input.shape[0] != target.shape[0] or
            weight is not None and weight.numel() != input.shape[1]):
        return
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found "
                           f"{_scalar_name(weight)}")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _hinge(z):
    """max(z, 0) with the gradient of PyTorch's clamp_min: 1 at z == 0 too (a max's tie
    would pass half).  nan passes."""
    return ember.where(z < 0, 0.0, z)


def _hinge_open(z):
    """max(z, 0) with the gradient of PyTorch's fused margin kernels (``if (z > 0)``): none
    at z == 0; nan counts as 0, as there."""
    return ember.where(z > 0, z, 0.0)


def _check_same_size(input, target, op):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{op}: using a target size ({target.shape}) that is different to the "
                      f"input size ({input.shape}). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


@composite("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C, ...) or (C,) at class
    indices ``target``, each weighted by ``weight[target]``; targets equal to
    ``ignore_index`` count for nothing.  'mean' divides by the summed weights."""
    red = _reduction(reduction, size_average, reduce)
    _tensor_arg(input, "nll_loss_nd", position=1)
    _tensor_arg(target, "nll_loss_nd", "target", position=2)
    _check_weight_dtype(input, weight, target)
    return _T.nll_loss_forward(input, target, weight, _REDUCTION_CODES[red], ignore_index)[0]


@composite("cross_entropy_loss")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits ``input`` (N, C, ...) or (C,) and ``target``: class
    indices (N, ...) or class probabilities of input's shape.  ``label_smoothing`` mixes
    the target with the uniform distribution over the C classes."""
    red = _reduction(reduction, size_average, reduce)
    _tensor_arg(input, "cross_entropy_loss", position=1)
    _tensor_arg(target, "cross_entropy_loss", "target", position=2)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if target.is_floating_point():
        return _cross_entropy_probs(input, target, weight, ignore_index, red, label_smoothing)
    _check_weight_dtype(input, weight, target)
    loss = _T._cross_entropy_forward(input, target, weight, _REDUCTION_CODES[red],
                                     ignore_index)[0]
    if label_smoothing == 0.0:
        return loss
    # the uniform part: -sum_c w_c log p_c / C per target, 0 where ignored; its 'mean' is
    # normalised like nll's (by the weights of the non-ignored targets)
    dim = 0 if input.dim() == 1 else 1
    logp = input.log_softmax(dim)
    classes = input.shape[dim]
    if weight is not None:
        shape = [1] * input.dim()
        shape[dim] = classes
        logp = logp * weight.reshape(shape)
    keep = target != ignore_index
    # masked_fill, not a product with the mask: with every target ignored 'mean' divides by
    # 0 and the infinite gradient must meet a 0, not a 0 * inf = nan (PyTorch's zeros)
    smooth = (-logp.sum(dim)).masked_fill(~keep, 0.0)
    if red == "mean":
        safe = ember.where(keep, target, 0)
        total = keep.sum() if weight is None else (weight[safe] * keep.to(weight.dtype)).sum()
        smooth = smooth.sum() / total
    else:
        smooth = _reduce(smooth, red)
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / classes)


def _cross_entropy_probs(input, target, weight, ignore_index, red, label_smoothing):
    if tuple(input.shape) != tuple(target.shape):
        raise RuntimeError(f"cross_entropy: expected target of input's shape "
                           f"{list(input.shape)} for class probabilities, got "
                           f"{list(target.shape)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    dim = 0 if input.dim() == 1 else 1
    classes = input.shape[dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = input.log_softmax(dim) * target
    if weight is not None:
        shape = [1] * input.dim()
        shape[dim] = classes
        terms = terms * weight.reshape(shape)
    loss = -terms.sum(dim)
    if red == "mean":
        return loss.sum() / (input.numel() // classes if classes else 0)
    return _reduce(loss, red)


def _weighted(loss, weight, input, red):
    """PyTorch's weighted form: loss * weight; "mean" divides by weight's sum."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if red == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, red)


@composite("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced; ``weight`` (input's shape) scales each term and "mean"
    then divides by its sum."""
    red = _reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "mse_loss")
    d = input - target
    return _reduce(d * d, red) if weight is None else _weighted(d * d, weight, input, red)


@composite("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, reduced; ``weight`` as in mse_loss."""
    red = _reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "l1_loss")
    d = (input - target).abs()
    return _reduce(d, red) if weight is None else _weighted(d, weight, input, red)


@composite("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta=0
    is l1_loss."""
    red = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_same_size(input, target, "smooth_l1_loss")
    dt = input.dtype
    if dt.name == "bfloat16" and target.dtype == dt:
        # PyTorch's kernel computes each bfloat16 element in float32, rounded once (then
        # reduces); float16 and the rest step by step, in its order: 0.5 * d * d / beta
        input, target = input.float(), target.float()
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d.to(dt), red)
    return _reduce(ember.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).to(dt), red)


@composite("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(target log(input) + (1 - target) log(1 - input)), each log clamped to >= -100 as
    PyTorch does, times ``weight`` (broadcast to input)."""
    red = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    if input.numel() and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = _BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, red)


class _BinaryCrossEntropy(Function):
    """The elementwise loss with PyTorch's derivatives: (input - target) / max(input (1 -
    input), 1e-12) for the input, finite at 0 and 1 (differentiating the clamped logs gave
    0 * inf = NaN there, so a saturated sigmoid's gradient was NaN), and log(1 - input) -
    log(input), unclamped as PyTorch's, for the target."""

    _node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        return -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))

    @staticmethod
    def backward(ctx, g):
        input, target = ctx.saved_tensors
        gi = gt = None
        if ctx.needs_input_grad[0]:
            gi = g * (input - target) / (input * (1 - input)).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:
            gt = g * ((1 - input).log() - input.log())
        return gi, gt

    @staticmethod
    def jvp(ctx, t_input, t_target):
        input, target = ctx.saved_tensors
        out = 0
        if t_input is not None:
            out = out + t_input * (input - target) / (input * (1 - input)).clamp(min=1e-12)
        if t_target is not None:
            out = out + t_target * ((1 - input).log() - input.log())
        return out


def _clamped_log(x):
    return x.log().clamp(min=-100)


@composite("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) in the stable form
    (1 - t) x + (1 + (pos_weight - 1) t) (log(1 + exp(-|x|)) + max(-x, 0))."""
    red = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    # log(1 + exp(-x)) as softplus, whose derivative -sigmoid(-x) is right at x = 0 too (the
    # split |x| / relu form gave the kinks' zero gradients there)
    softplus_neg = softplus(-input)
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, red)


@composite("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    """Pointwise KL divergence target * (log(target) - input) with ``input`` given as
    log-probabilities (``target`` too when log_target); 'batchmean' divides the sum by the
    batch size."""
    if reduction == "batchmean":
        if size_average is not None or reduce is not None:
            red = _reduction(reduction, size_average, reduce)
        else:
            red = "batchmean"
    else:
        red = _reduction(reduction, size_average, reduce)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = ember.where(positive, target, 1)     # log(1) = 0 where target is 0
        loss = target * safe.log() - target * input
    if red == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, red)


def _plain_reduction(reduction, message):
    """For the losses without the legacy flags: reject an unknown reduction with the
    op's own wording (``message`` follows the name)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction}{message}")
    return reduction


@composite("huber_loss")
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
        reduction = _reduction(reduction)
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
    return _reduce(_hinge(-target * (input1 - input2) + margin), red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1 (both terms
    where target is neither, as PyTorch does)."""
    red = _reduction(reduction, size_average, reduce)
    hinge = ember.where(target != 1, _hinge(margin - input), 0.0)
    own = ember.where(target != -1, input, 0.0)
    return _reduce(hinge + own, red)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target input)), averaged over all elements by 'mean'."""
    red = _reduction(reduction, size_average, reduce)
    z = -target * input
    # log1p(exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|)); maximum's tie passes
    # half at z == 0, which with |z|'s 0 there is the true sigmoid(0) (not clamp_min's 1)
    return _reduce(_T._maximum_scalar(z, 0.0) + (-z.abs()).exp().log1p(), red)


def _log_sigmoid(x):
    return -(_T._maximum_scalar(-x, 0.0) + (-x.abs()).exp().log1p())    # as soft_margin's


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
    neg = ember.where(target == -1, _hinge(cos - margin), 0.0)
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
    _check_weight_dtype(input, weight)
    y = target.reshape(-1, 1)
    if batch and bool(((y < 0) | (y >= classes)).any()):
        raise RuntimeError("target out of range")
    z = _hinge_open(margin - x.gather(1, y) + x)
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
    return _reduce(_hinge(margin + d_pos - d_neg), red)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(input) - target input (log_input) or input - target log(input + eps); ``full``
    adds Stirling's target log(target) - target + 0.5 log(2 pi target) where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, stacklevel=3)
    red = _plain_reduction(reduction, " is not a valid value for reduction")  # no legacy names
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
    hinge = _hinge_open(1 - x_target.unsqueeze(2) + x.unsqueeze(1))     # (N, K, C)
    keep = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (hinge * keep.to(hinge.dtype)).sum((1, 2)) / classes
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, red)
