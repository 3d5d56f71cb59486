"""scaled_dot_product_attention as a composite of matmul, masking and softmax (PyTorch's
math reference semantics), differentiable through them; multi_head_attention_forward (the
projections, masks and heads of nn.MultiheadAttention) on top of it."""
import math
import warnings

from ember.core import sdp_backends
from ember.core._dispatch import composite
from ember.core.conv import _C_NAMES
from ember.nn._functional.dropout import dropout
from ember.nn._functional.linear import linear
from ember.nn._functional.padding import pad
from ember.nn.attention.bias import CausalBias

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
    if isinstance(attn_mask, CausalBias):
        return attn_mask._dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                   enable_gqa)
    if not sdp_backends._math_enabled():        # sdpa_kernel ruled out ember's kernels
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. "
                           "(ember computes attention with the math and flash kernels only)")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at "
                           "least 2 dims")
    if is_causal and attn_mask is not None:
        if not _flash_cpu_takes(query, key, value, attn_mask, dropout_p, enable_gqa):
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
        # PyTorch's CPU flash kernel (its default) applies both: the mask within the
        # (top-left) causal triangle
        causal = ember.ones((query.shape[-2], key.shape[-2]), dtype=ember.bool,
                            device=query.device).tril()
        attn_mask = (attn_mask & causal if attn_mask.dtype == ember.bool else
                     ember.where(causal, attn_mask, float("-inf")))
        is_causal = False
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"scaled_dot_product_attention: dropout_p must be in [0, 1], got "
                           f"{dropout_p}")
    if attn_mask is not None and attn_mask.dtype not in (ember.bool, ember.float32,
                                                         query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_C_NAMES[attn_mask.dtype.name]} "
                           f"and  query.dtype: {_C_NAMES[query.dtype.name]} instead.")
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
    # the scale on the smaller operand (query [.., L, E], not the scores [.., L, S])
    scores = (query * factor) @ key.transpose(-2, -1)
    if is_causal:
        # an additive -inf above the diagonal, as PyTorch's math path: one broadcast add
        # with a pass-through gradient instead of a masked_fill forward and backward
        attn_mask = ember.full((L, S), float("-inf"), dtype=scores.dtype,
                               device=query.device).triu(1)
    if attn_mask is not None:
        if attn_mask.dtype == ember.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    if attn_mask is not None and not is_causal:
        # PyTorch's _safe_softmax: a row masked throughout attends to nothing (zeros, zero
        # gradients) instead of softmax's nan; its scores become finite before the softmax,
        # or the backward would still meet the nan
        dead = (scores == float("-inf")).all(-1, keepdim=True)
        weights = scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)
    else:
        weights = scores.softmax(-1)
    if dropout_p > 0.0:
        keep = ember.bernoulli(ember.full(weights.shape, 1.0 - dropout_p, dtype=weights.dtype,
                                          device=weights.device))
        weights = weights * keep / (1.0 - dropout_p) if dropout_p < 1.0 else weights * 0
    return weights @ value


def _flash_cpu_takes(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch would run this call on its CPU flash kernel, the one that honours an
    attn_mask together with is_causal (its math kernel rejects the pair): the kernel
    enabled, 4-D inputs of one batch size and head dim, a unit last stride, no dropout, as
    many key as query heads (or a divisor, with enable_gqa), and a mask of (L or 1, S or 1)
    or (B or 1, H or 1, L or 1, S or 1) that needs no gradient."""
    qkv = (query, key, value)
    if not sdp_backends._is_enabled(sdp_backends.SDPBackend.FLASH_ATTENTION) or dropout_p > 0.0 or \
            any(t.dim() != 4 or t.stride(-1) != 1 for t in qkv) or attn_mask.requires_grad:
        return False
    (b, h, L, e), (bk, hk, S, ek) = query.shape, key.shape
    if not (b == bk == value.shape[0] and e == ek == value.shape[-1] and hk == value.shape[1]):
        return False
    if hk != h and not (enable_gqa and hk and h % hk == 0):
        return False
    m = attn_mask.shape
    if attn_mask.dim() not in (2, 4) or m[-2] not in (L, 1) or m[-1] not in (S, 1):
        return False
    return attn_mask.dim() == 2 or (m[0] in (1, b) and m[1] in (1, h))


# ---- multi-head attention (torch.nn.functional.multi_head_attention_forward) ----------

__all__ += ["multi_head_attention_forward"]


def _none_or_dtype(input):
    """``input``'s dtype, or None for None (what _canonical_mask compares against)."""
    if input is None:
        return None
    if isinstance(input, ember.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as an additive float mask of ``target_type`` (-inf
    where True); float masks pass through.  Other dtypes are rejected, as PyTorch does."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != ember.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      f"Use same type for both instead.")
    if not is_float:
        mask = ember.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-D query) or not (2-D); AssertionError, as
    PyTorch, for any other combination of dims."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    kind, want = ("batched (3-D)", 3) if batched else ("unbatched (2-D)", 2)
    if key.dim() != want or value.dim() != want:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {want}-D "
                             f"but found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != want - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{want - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{tuple(attn_mask.shape)}")
    return batched


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """The query, key and value projections with separate weights (and biases)."""
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection_packed(q, k, v, w, b=None):
    """The query, key and value projections with one packed weight ``w`` (3 E, E) and bias
    ``b`` (3 E): one matmul for self-attention (q is k is v), two when k is v."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            return tuple(p.contiguous() for p in linear(q, w, b).unflatten(-1, (3, E)).unbind(-2))
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unbind(-2)
        return (linear(q, w_q, b_q),) + tuple(p.contiguous() for p in kv)
    b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    return _in_projection(q, k, v, *w.chunk(3), b_q, b_k, b_v)


def _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, num_heads):
    """attn_mask as (1 or bsz * num_heads, L, S)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        want = (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {want}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _pad_last(mask):
    """One more (unmasked) source position for bias_k/bias_v or the zero attention."""
    return None if mask is None else pad(mask, (0, 1))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over sequence-first inputs: query (L, N, E) or (L, E), key
    (S, N, kdim), value (S, N, vdim).  Projects with ``in_proj_weight``/``in_proj_bias``
    (or ``q/k/v_proj_weight`` when ``use_separate_proj_weight``), optionally appends
    ``bias_k``/``bias_v`` and a zero position (``add_zero_attn``), attends per head
    with ``attn_mask`` ((L, S) or (N * num_heads, L, S); bool True = masked, or float
    added) and ``key_padding_mask`` ((N, S)), then applies ``out_proj_weight``/``out_proj_bias``.
    Returns (attn_output (L, N, E), attn_weights (N, L, S) averaged over heads, or
    (N, num_heads, L, S) without ``average_attn_weights``; None without ``need_weights``).
    ``static_k``/``static_v`` ((N * num_heads, S, head_dim)) replace the projected key/value."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # run as a batch of one and drop that dim at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # attention itself applies the causal mask: the explicit one is only a hint
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False           # merged with the padding mask: no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     f"is None")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        weights = in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    q, k, v = _in_projection(query, key, value, *weights, *biases)

    if attn_mask is not None:
        attn_mask = _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = ember.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ember.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # heads into the batch dim: (N * num_heads, L or S, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads_first(k, static_k, bsz, num_heads, head_dim, "k")
    v = _heads_first(v, static_v, bsz, num_heads, head_dim, "v")
    if add_zero_attn:
        zeros = ember.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = ember.cat([k, zeros], dim=1), ember.cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        # scale q first, as PyTorch does (same rounding)
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = attn_mask + scores
        attn = scores.softmax(-1)
        if dropout_p > 0.0:
            attn = dropout(attn, p=dropout_p)
        out = attn @ v                                  # (N * num_heads, L, head_dim)
        attn = attn.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn = attn.mean(dim=1)
    else:
        if attn_mask is not None:
            attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                         else attn_mask.reshape(bsz, num_heads, attn_mask.shape[-2], src_len))
        out = scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim),
            k.reshape(bsz, num_heads, src_len, head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal)
        out = out.reshape(bsz * num_heads, tgt_len, head_dim)
        attn = None
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz,
                                                              out_proj_weight.shape[0])
    if not is_batched:
        out = out.squeeze(1)
        attn = None if attn is None else attn.squeeze(0)
    return out, attn


def _heads_first(x, static, bsz, num_heads, head_dim, name):
    """Projected key/value (S, N, E) as (N * num_heads, S, head_dim), or ``static``."""
    if static is None:
        return x.reshape(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * num_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static
