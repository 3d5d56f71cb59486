"""embedding and embedding_bag (torch.nn.functional): rows of ``weight`` picked by
``input``, one per index or reduced (sum, mean, max) over bags of indices."""
import warnings

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg
from ember.core.index_ops import bincount
from ember.core.norms import norm
from ember.core.shapes import cat
from ember.core.sorting import unique

from ember.autograd.grad_mode import no_grad

__all__ = ["embedding", "embedding_bag"]

_INDEX_DTYPES = ("int64", "int32")


def _check_index_dtype(t, arg, op):
    if t.dtype.name not in _INDEX_DTYPES:
        raise RuntimeError(f"Expected tensor for argument {arg} to have one of the following "
                           f"scalar types: Long, Int; but got {t.type()} instead (while "
                           f"checking arguments for {op})")


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
    _tensor_arg(weight, "embedding", "weight", 1)          # aten's embedding(weight, indices)
    _tensor_arg(input, "embedding", "indices", 2)
    _check_index_dtype(input, "#1 'indices'", "embedding")
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


def _bag_layout(input, offsets, include_last_offset):
    """(flat indices, starts of the bags, end of the last bag) after PyTorch's checks."""
    n = input.numel()
    if offsets.numel() and int(offsets[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got "
                           f"{int(offsets[0])}")
    if offsets.numel() and int(offsets[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(offsets[-1])}")
    if offsets.numel() > 1 and bool((offsets[1:] < offsets[:-1]).any()):
        raise RuntimeError("embedding_bag: offsets have to be non-decreasing")
    offsets = offsets.long()
    if include_last_offset:
        return offsets[:-1], int(offsets[-1]) if offsets.numel() else 0
    return offsets, n


def _bag_max(weight, input, keep, starts, end):
    """Per bag and column, the largest of the kept rows (zeros for bags with none): the
    bags padded to the longest one, so the gradient reaches the arg-max row as PyTorch's."""
    b, d = starts.shape[0], weight.shape[1]
    ends = cat([starts[1:], _T.tensor([end], device=starts.device)]) if b else starts
    lengths = (ends - starts).clamp(min=0)
    longest = int(lengths.max()) if b else 0
    if longest == 0:
        return weight.new_zeros((b, d)) + weight[:0].sum()     # zeros, still in the graph
    step = _T.arange(longest, device=starts.device)
    pos = starts.unsqueeze(1) + step
    inside = step < lengths.unsqueeze(1)
    pos = _T.where(inside, pos, 0)
    valid = inside & keep.index_select(0, pos.reshape(-1)).reshape(b, longest)
    rows = weight.index_select(0, input.index_select(0, pos.reshape(-1))).reshape(b, longest, d)
    rows = _T.where(valid.unsqueeze(2), rows, float("-inf"))
    best = rows.max(dim=1).values
    return _T.where(valid.any(1, keepdim=True), best, 0.0)


# a composite op: inside vmap its host reads of the bags (offsets, counts) run it sample by
# sample instead of raising
@composite("embedding_bag")
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of rows of ``weight`` (num_embeddings, embedding_dim),
    without building the (num_indices, embedding_dim) intermediate per bag.

    ``input`` 2-D (B, N): B bags of N indices (``offsets`` must be None); 1-D: bags start at
    ``offsets`` (with ``include_last_offset`` its last entry ends the last bag).  Empty
    bags give zeros; ``padding_idx`` entries are left out of their bag (and of the mean's
    count); ``per_sample_weights`` (same shape as input) scale the rows in mode 'sum'."""
    _tensor_arg(weight, "embedding_bag", "weight", 1)
    _tensor_arg(input, "embedding_bag", "indices", 2)
    if weight.dtype.name in _INDEX_DTYPES and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        offsets = _T.arange(0, input.numel(), max(input.shape[1], 1), dtype=input.dtype,
                            device=input.device)
        if input.shape[1] == 0:
            offsets = _T.zeros(input.shape[0], dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    _check_index_dtype(input, "#1 'indices'", "embedding_bag")
    _check_index_dtype(offsets, "#2 'offsets'", "embedding_bag")
    if sparse:
        raise NotImplementedError("embedding_bag(): sparse=True needs sparse gradients, which "
                                  "ember does not have; use sparse=False")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    if input.numel() and (int(input.min()) < 0 or int(input.max()) >= num):
        raise RuntimeError(f"embedding_bag: index out of range: indices must be in "
                           f"[0, {num}), got values in [{int(input.min())}, "
                           f"{int(input.max())}]")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                           f"tensor for argument #1 'per_sample_weights'; but type "
                           f"{weight.type()} does not equal {per_sample_weights.type()} (while "
                           f"checking arguments for embedding_bag)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    starts, end = _bag_layout(input, offsets, include_last_offset)
    input = input.long()
    n, b = input.shape[0], starts.shape[0]
    keep = _T.arange(n, device=input.device) < end    # include_last_offset leaves a tail out
    if padding_idx is not None:
        keep = keep & (input != padding_idx)
    if mode == "max":
        return _bag_max(weight, input, keep, starts, end)
    bag = (_T.searchsorted(starts, _T.arange(n, device=input.device), right=True)
           - 1).clamp(min=0)
    rows = weight.index_select(0, input)
    if scale_grad_by_freq and rows.requires_grad:
        counts = bincount(input, minlength=num).to(weight.dtype).index_select(0, input)
        rows = _scale_grad(rows, (1.0 / counts).unsqueeze(1))
    scale = keep.to(weight.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    out = rows.new_zeros((b, weight.shape[1])) + rows[:0].sum()
    if b:
        out = out.index_add(0, bag, rows * scale.unsqueeze(1))
    if mode == "mean":
        count = keep.to(weight.dtype).new_zeros(b)
        if b:
            count = count.index_add(0, bag, keep.to(weight.dtype))
        out = out / count.clamp(min=1).unsqueeze(1)
    return out
