"""Distance layers (``torch.nn.modules.distance``) over nn.functional's distances."""
from ember.nn._functional import distance as _D
from ember.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``: ``CosineSimilarity(dim=1,
    eps=1e-08)``."""

    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return _D.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm of x1 - x2 + eps over the last dim: ``PairwiseDistance(p=2.0, eps=1e-06,
    keepdim=False)``."""

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return _D.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
