"""Margin, embedding, likelihood and CTC loss layers over ``ember.nn.functional``, with
PyTorch's constructor arguments (the deprecated size_average/reduce pair included)."""
from .. import functional as F
from .loss import _Loss, _WeightedLoss

__all__ = ["CTCLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
           "MarginRankingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
           "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss"]


class _MarginLoss(_Loss):
    """A loss whose only option besides the reduction is ``margin``."""

    __constants__ = ["margin", "reduction"]
    _fn = None

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """max(0, -y (x1 - x2) + margin): ``MarginRankingLoss(margin=0.0, size_average=None,
    reduce=None, reduction='mean')``."""

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) for y = 1, max(0, cos(x1, x2) - margin) for y = -1:
    ``CosineEmbeddingLoss(margin=0.0, size_average=None, reduce=None, reduction='mean')``."""

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """x for y = 1, max(0, margin - x) for y = -1: ``HingeEmbeddingLoss(margin=1.0,
    size_average=None, reduce=None, reduction='mean')``."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-y x)): ``SoftMarginLoss(size_average=None, reduce=None,
    reduction='mean')``."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class sigmoid cross entropy averaged over the classes:
    ``MultiLabelSoftMarginLoss(weight=None, size_average=None, reduce=None,
    reduction='mean')``."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: ``MultiMarginLoss(p=1, margin=1.0, weight=None,
    size_average=None, reduce=None, reduction='mean')``."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)) with the p-norm distance:
    ``TripletMarginLoss(margin=1.0, p=2.0, eps=1e-06, swap=False, size_average=None,
    reduce=None, reduction='mean')``."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """TripletMarginLoss with any distance function:
    ``TripletMarginWithDistanceLoss(*, distance_function=None, margin=1.0, swap=False,
    reduction='mean')``."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function or F.pairwise_distance
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood: ``PoissonNLLLoss(log_input=True, full=False,
    size_average=None, eps=1e-08, reduce=None, reduction='mean')``."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with predicted variances:
    ``GaussianNLLLoss(*, full=False, eps=1e-06, reduction='mean')``."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification: ``CTCLoss(blank=0, reduction='mean',
    zero_infinity=False)``."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
