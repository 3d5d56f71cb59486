"""scaled_dot_product_attention as a composite of matmul, masking and softmax (PyTorch's
math reference semantics), differentiable through them."""
import math

from ember.core._dispatch import composite

import ember

__all__ = ["scaled_dot_product_attention"]


@composite("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value over the last two dims (L target, S
    source positions).  ``attn_mask``: bool (True = take part) or float (added), broadcast
    to (..., L, S); ``is_causal``: a lower-triangular mask; ``scale`` defaults to
    1 / sqrt(E); ``dropout_p`` drops attention weights (scaled by 1 / (1 - p));
    ``enable_gqa``: key/value heads (dim -3) are shared by groups of query heads."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at "
                           "least 2 dims")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"scaled_dot_product_attention: dropout_p must be in [0, 1], got "
                           f"{dropout_p}")
    L, S, E = query.shape[-2], key.shape[-2], query.shape[-1]
    if key.shape[-1] != E:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same "
                           f"embedding size, got {E} and {key.shape[-1]}")
    if enable_gqa and query.dim() >= 3:
        hq, hk = query.shape[-3], key.shape[-3]
        if hk == 0 or hq % hk or value.shape[-3] != hk:
            raise RuntimeError(f"scaled_dot_product_attention: {hq} query heads are not a "
                               f"multiple of {hk} key/value heads")
        key = key.repeat_interleave(hq // hk, dim=-3)
        value = value.repeat_interleave(hq // hk, dim=-3)
    factor = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        attn_mask = ember.ones((L, S), dtype=ember.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype == ember.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        keep = ember.bernoulli(ember.full(weights.shape, 1.0 - dropout_p, dtype=weights.dtype,
                                          device=weights.device))
        weights = weights * keep / (1.0 - dropout_p) if dropout_p < 1.0 else weights * 0
    return weights @ value
