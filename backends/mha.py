"""``ember.backends.mha`` (``torch.backends.mha``): whether nn.MultiheadAttention and
nn.TransformerEncoderLayer may take PyTorch's inference fast path.  ember computes the
same attention either way; what the fast path changes is visible (it ignores the
``is_causal`` hint), so the modules consult this flag as PyTorch's do."""

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fast path of MultiheadAttention and TransformerEncoder is enabled (it
    may still not run unless every condition on the inputs holds)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Enable or disable the fast path."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
