"""Loss functions with PyTorch's semantics.  nll_loss and cross_entropy over class
indices run the core's explicit ops (a fused log_softmax + nll kernel on the CPU); the
others are composites of differentiable ember ops."""
import warnings

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core.activations import softplus

import ember

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
           "kl_div", "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss"]

_REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction, size_average=None, reduce=None):
    """The reduction name, from the legacy size_average/reduce flags when either is set."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in _REDUCTION_CODES:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


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
    return _T.nll_loss_forward(input, target, weight, _REDUCTION_CODES[red], ignore_index)[0]


@composite("cross_entropy_loss")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits ``input`` (N, C, ...) or (C,) and ``target``: class
    indices (N, ...) or class probabilities of input's shape.  ``label_smoothing`` mixes
    the target with the uniform distribution over the C classes."""
    red = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if target.is_floating_point():
        return _cross_entropy_probs(input, target, weight, ignore_index, red, label_smoothing)
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
    smooth = -logp.sum(dim) * keep.to(logp.dtype)
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
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, red)
    return _reduce(ember.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), red)


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
    log_p = input.log().clamp(min=-100)
    log_q = (1 - input).log().clamp(min=-100)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, red)


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
