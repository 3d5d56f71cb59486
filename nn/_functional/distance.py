"""Distances between tensors (torch.nn.functional): cosine_similarity, pairwise_distance
and pdist, as composites of differentiable ember ops."""
from ember.core._errors import _tensor_arg
from ember.core.norms import vector_norm

import ember

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim`` of the broadcast
    inputs, each input divided by its norm first (keeps the result in [-1, 1])."""
    _tensor_arg(x1, "cosine_similarity", "x1", 1)
    _tensor_arg(x2, "cosine_similarity", "x2", 2)
    dtype = ember.promote_types(x1.dtype, x2.dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{ember.empty(0, dtype=dtype).type()[6:-6]}")
    x1, x2 = ember.broadcast_tensors(x1.to(dtype), x2.to(dtype))
    n1 = vector_norm(x1, 2, dim, True)
    n2 = vector_norm(x2, 2, dim, True)
    # the clamp changes the value only: the norms' gradients pass it, as PyTorch's do
    n1 = n1 + (n1.clamp_min(eps) - n1).detach()
    n2 = n2 + (n2.clamp_min(eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dim of the broadcast inputs."""
    _tensor_arg(x1, "pairwise_distance", "x1", 1)
    _tensor_arg(x2, "pairwise_distance", "x2", 2)
    dim = max(x1.dim(), x2.dim()) - 1
    diff = x1 - x2 + eps
    if diff.dim() == 0:             # 0-d inputs: the norm of one number
        return diff.abs()
    return vector_norm(diff, p, dim, keepdim)


def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-D ``input``, for each pair i < j in
    row-major order (N (N - 1) / 2 values)."""
    _tensor_arg(input, "pdist", "input", 1)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = ember.triu_indices(n, n, 1, device=input.device)
    return vector_norm(input[i] - input[j], p, 1)
