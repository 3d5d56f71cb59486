"""``ember.nn.attention.bias`` (``torch.nn.attention.bias``): causal attention biases that
scaled_dot_product_attention takes as its ``attn_mask``, the lower-right aligned one
included (``causal_lower_right``), without materialising them when it need not."""
import warnings
from enum import IntEnum

from ember.core.tensor import Tensor

import ember

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(IntEnum):
    """Where the causal triangle is anchored in an (L, S) score matrix: ``UPPER_LEFT`` is
    ``tril(ones(L, S))`` (``is_causal=True``), ``LOWER_RIGHT`` is
    ``tril(ones(L, S), diagonal=S - L)`` (the last query sees every key)."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias(Tensor):
    """A causal bias of a ``variant`` for ``seq_len_q`` queries and ``seq_len_kv`` keys,
    passed to scaled_dot_product_attention as ``attn_mask``; build it with
    causal_upper_left or causal_lower_right.  (An empty tensor itself: ``_materialize``
    gives the bool mask.)"""

    def __new__(cls, variant, seq_len_q, seq_len_kv):
        return super().__new__(cls)

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got "
                                 f"{type(variant).__name__}")
        super().__init__()
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device):
        """The upper-left aligned bool mask."""
        return ember.ones(self.seq_len_q, self.seq_len_kv, dtype=ember.bool,
                          device=device).tril()

    def _lower_right(self, device):
        """The lower-right aligned bool mask."""
        return ember.ones(self.seq_len_q, self.seq_len_kv, dtype=ember.bool,
                          device=device).tril(self.seq_len_kv - self.seq_len_q)

    def _materialize(self, device=None):
        """The bias as a bool (seq_len_q, seq_len_kv) mask, True where attention is
        allowed, on ``device`` (default the CPU)."""
        device = "cpu" if device is None else device
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        """scaled_dot_product_attention with this bias as ``attn_mask``: the upper-left
        variant (or equal lengths) is ``is_causal=True``; the lower-right one attends with
        the materialised mask (PyTorch's CPU path)."""
        from ember.nn.functional import scaled_dot_product_attention as sdpa
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if not isinstance(attn_mask.variant, CausalVariant):
            raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: "
                             f"{attn_mask.variant}")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or \
                attn_mask.variant == CausalVariant.UPPER_LEFT:
            return sdpa(query, key, value, None, dropout_p, True, scale, enable_gqa)
        return sdpa(query, key, value, attn_mask._materialize(query.device), dropout_p,
                    False, scale, enable_gqa)

    def __repr__(self):
        return repr(self._materialize())


for _cls in (CausalVariant, CausalBias):
    _cls.__module__ = "ember.nn.attention.bias"


def causal_upper_left(*size):
    """The upper-left aligned causal bias of ``size`` (seq_len_q, seq_len_kv): what
    ``is_causal=True`` applies."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size):
    """The lower-right aligned causal bias of ``size`` (seq_len_q, seq_len_kv): query i
    attends to keys up to i + seq_len_kv - seq_len_q."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
