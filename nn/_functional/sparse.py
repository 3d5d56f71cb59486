"""embedding (torch.nn.functional.embedding): rows of ``weight`` picked by ``input``."""
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.index_ops import bincount
from ember.core.norms import norm
from ember.core.sorting import unique

from ember.autograd.grad_mode import no_grad

__all__ = ["embedding"]

_INDEX_DTYPES = ("int64", "int32")


def _scale_grad(out, scale):
    """``out`` unchanged in value, its gradient multiplied by ``scale`` (broadcast)."""
    fixed = out.detach()
    return fixed + (out - fixed) * scale


def _renorm_rows(weight, index, max_norm, norm_type):
    """Rescale, in place, the rows of ``weight`` named in ``index`` whose norm exceeds
    ``max_norm`` to norm ``max_norm`` (PyTorch's embedding_renorm_)."""
    with no_grad():
        rows = unique(index)
        picked = weight.index_select(0, rows)
        norms = norm(picked, norm_type, 1, keepdim=True)
        scale = _T.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, rows, picked * scale)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """``weight[input]``: one row of the (num_embeddings, embedding_dim) ``weight`` per index.

    ``padding_idx``'s row receives no gradient; ``max_norm`` renormalises the rows used, in
    place; ``scale_grad_by_freq`` divides each row's gradient by its count in ``input``."""
    if not isinstance(input, TensorBase) or not isinstance(weight, TensorBase):
        raise TypeError("embedding(): argument 'input' and 'weight' must be Tensors")
    if input.dtype.name not in _INDEX_DTYPES:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} "
                           f"instead (while checking arguments for embedding)")
    if weight.dim() != 2:
        raise RuntimeError(f"'weight' must be 2-D, got {weight.dim()}-D")
    if sparse:
        raise NotImplementedError("embedding(): sparse=True needs sparse gradients, which "
                                  "ember does not have; use sparse=False")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx += num
    flat = input.reshape(-1)
    if max_norm is not None:
        _renorm_rows(weight, flat, max_norm, norm_type)
    out = weight.index_select(0, flat)
    if out.requires_grad and (padding_idx is not None or scale_grad_by_freq):
        scale = None
        if scale_grad_by_freq:
            scale = 1.0 / bincount(flat, minlength=num).to(weight.dtype).index_select(0, flat)
        if padding_idx is not None:
            keep = (flat != padding_idx).to(weight.dtype)
            scale = keep if scale is None else scale * keep
        out = _scale_grad(out, scale.unsqueeze(1))
    return out.reshape(tuple(input.shape) + (weight.shape[1],))
