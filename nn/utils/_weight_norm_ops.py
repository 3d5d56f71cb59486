"""norm_except_dim and _weight_norm (``torch.norm_except_dim``, ``torch._weight_norm``): the
weight-norm reparametrization w = g * v / ||v||, the norm over every dim but ``dim``."""
__all__ = ["_weight_norm", "norm_except_dim"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim except ``dim`` (kept, size 1 elsewhere);
    ``dim=-1``: the norm of the whole tensor."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().reshape(v.shape[0], -1).norm(pow, 1).reshape(
            (v.shape[0],) + (1,) * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().reshape(-1, v.shape[-1]).norm(pow, 0).reshape(
            (1,) * (v.dim() - 1) + (v.shape[-1],))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """v * (g / ||v||), the norm taken over every dim except ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))
