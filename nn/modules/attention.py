"""MultiheadAttention (``torch.nn.MultiheadAttention``): the parameters and the layout
(batch_first) around ``nn.functional.multi_head_attention_forward``."""
from ember.core import _tensor as _T
from ember.nn import init
from ember.nn._functional.attention import (
    _canonical_mask,
    _none_or_dtype,
    multi_head_attention_forward,
)
from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention from ``query`` to ``key``/``value`` over ``num_heads`` heads:
    ``MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None)``.
    Parameters as PyTorch's: ``in_proj_weight`` (3 * embed_dim, embed_dim) when kdim and vdim
    equal embed_dim, else ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``;
    ``in_proj_bias``, ``out_proj`` and, with ``add_bias_kv``, ``bias_k``/``bias_v``."""

    __module__ = "ember.nn.modules.activation"      # PyTorch's path (pickles name it)
    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape):
            return Parameter(_T.empty(shape, **factory))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        """xavier_uniform_ on the input projections, zero biases, xavier_normal_ on
        bias_k/bias_v (PyTorch's initialisation)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """(attn_output, attn_weights or None).  query (L, N, E), key (S, N, kdim), value
        (S, N, vdim) — (N, L, E) … with ``batch_first`` — or unbatched (L, E), (S, kdim),
        (S, vdim).  ``key_padding_mask`` (N, S) and ``attn_mask`` ((L, S) or
        (N * num_heads, L, S)): bool (True = not attended) or float (added to the scores).
        ``is_causal`` is a hint that ``attn_mask`` is the causal mask."""
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if is_causal and attn_mask is None and not self._why_not_fast_path(
                query, key, value, key_padding_mask, attn_mask):
            is_causal = False       # PyTorch's fast path ignores the hint (no mask to hint at)
        if self.batch_first and is_batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def _why_not_fast_path(self, query, key, value, key_padding_mask, attn_mask):
        """Why PyTorch would not run this call on its inference fast path
        (_native_multi_head_attention), "" when it would."""
        from ember import backends, is_autocast_enabled, is_grad_enabled
        params = (self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                  self.out_proj.bias)
        tensors = [t for t in (query, key, value) + params if t is not None]
        checks = [
            (not backends.mha.get_fastpath_enabled(),
             "torch.backends.mha.get_fastpath_enabled() was not True"),
            (query.dim() != 3, "input not batched"),
            (query is not key or key is not value, "non-self attention was used"),
            (self.in_proj_bias is not None and query.dtype != self.in_proj_bias.dtype,
             "dtypes of query and self.in_proj_bias don't match"),
            (self.in_proj_weight is None, "in_proj_weight was None"),
            (self.in_proj_weight is not None and query.dtype != self.in_proj_weight.dtype,
             "dtypes of query and self.in_proj_weight don't match"),
            (self.training, "training is enabled"),
            (self.num_heads % 2 != 0, "self.num_heads is not even"),
            (not self.batch_first, "batch_first was not True"),
            (self.bias_k is not None or self.bias_v is not None, "self.bias_k was not None"),
            (self.add_zero_attn, "add_zero_attn was enabled"),
            (not self._qkv_same_embed_dim, "_qkv_same_embed_dim was not True"),
            (query.is_nested and (key_padding_mask is not None or attn_mask is not None),
             "supplying both src_key_padding_mask and src_mask at the same time is not "
             "supported with NestedTensor input"),
            (is_autocast_enabled(), "autocast is enabled"),
            (any(t.device.type not in ("cpu", "cuda") for t in tensors),
             "some Tensor argument's device is neither one of cpu or cuda"),
            (is_grad_enabled() and any(t.requires_grad for t in tensors),
             "grad is enabled and at least one of query or the input/output projection "
             "weights or biases requires_grad"),
            # without an input bias the fast path falls through to the regular one
            (self.in_proj_bias is None, "in_proj_bias was None")]
        return next((why for failed, why in checks if failed), "")

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(merged mask, mask type) as the fast path takes them: ``key_padding_mask``
        (N, L) alone is type 1; with ``attn_mask`` ((L, L) or (N * num_heads, L, L)) the
        type is 2 and the mask that expanded to (N, num_heads, L, L), plus the padding mask
        if any; (None, None) without masks.  ``query`` is (N, L, E)."""
        merged, mask_type = None, None
        if key_padding_mask is not None:
            merged, mask_type = key_padding_mask, 1
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type
