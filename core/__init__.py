"""ember's Cython core: dtypes, devices, dispatch keys, the dispatcher and the Tensor.

The public names are re-exported by the ``ember`` façade; this package stays importable
on its own (no plugin, no heavy import)."""


def dispatch_trace(op, *args):
    """Which kernel a call of ``op`` (an Op or its name) with ``args`` reaches: a list of
    (dispatch key, what happens there), highest priority first.

    >>> dispatch_trace("add", a, b)[-1]
    ('CPU', "backend 'cpu' primitive kernels from plugin 'cpu'")
    """
    from ember.core import _dispatch, _state
    from ember.core._tensor import TensorBase

    if isinstance(op, str):
        op = _dispatch.get_op(op)
    keys = 0
    for a in args:
        if isinstance(a, TensorBase):
            keys |= a._keys
    included, excluded = _state._get_tls_keys()
    return op.trace((keys | included) & ~excluded)
