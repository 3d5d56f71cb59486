"""torch.* spellings of nn operations (torch.dropout, torch.embedding, torch.kl_div,
torch.lstm_cell, torch.convolution, ...): ATen's argument orders and integer reduction codes
over ember.nn.functional.  Loaded on first use through the façade's ``__getattr__``."""
import ember
from ember.nn import functional as F
from ember.nn._functional import sampling as _sampling

__all__ = ["affine_grid_generator", "alpha_dropout", "alpha_dropout_", "bilinear",
           "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle",
           "constant_pad_nd", "convolution", "cosine_embedding_loss", "cosine_similarity",
           "ctc_loss", "dropout", "dropout_", "embedding", "embedding_bag", "embedding_renorm_",
           "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
           "feature_dropout_", "frobenius_norm", "grid_sampler", "grid_sampler_2d",
           "grid_sampler_3d", "group_norm", "hardshrink", "hinge_embedding_loss",
           "instance_norm", "kl_div", "margin_ranking_loss", "max_pool1d_with_indices",
           "native_channel_shuffle", "native_dropout", "native_group_norm", "native_norm",
           "norm_except_dim", "nuclear_norm", "pairwise_distance", "pdist", "poisson_nll_loss",
           "prelu", "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
           "triplet_margin_loss"]

_REDUCTIONS = ("none", "mean", "sum")       # ATen's Reduction enum: 0, 1, 2


def _reduction(code):
    if code not in (0, 1, 2):
        raise ValueError(f"{code} is not a valid value for reduction")
    return _REDUCTIONS[code]


# -- activations ------------------------------------------------------------------------------

def celu(input, alpha=1.0):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    return F.celu(input, alpha)


def celu_(input, alpha=1.0):
    """celu in place."""
    return F.celu_(input, alpha)


def selu(input):
    """scale * elu(x, alpha) with SELU's constants."""
    return F.selu(input)


def selu_(input):
    """selu in place."""
    return F.selu_(input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU (see nn.functional.rrelu)."""
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """rrelu in place."""
    return F.rrelu_(input, lower, upper, training)


def threshold(input, threshold, value):
    """input where input > threshold, else value."""
    return F.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """threshold in place."""
    return F.threshold_(input, threshold, value)


def hardshrink(input, lambd=0.5):
    """input where |input| > lambd, else 0."""
    return F.hardshrink(input, lambd)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x)."""
    return F.prelu(input, weight)


def channel_shuffle(input, groups):
    """Interleave the channels of ``groups`` groups."""
    return F.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


# -- dropout (input, p, train) ----------------------------------------------------------------

def dropout(input, p, train):
    """dropout(input, p, training=train)."""
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    """dropout in place."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """alpha_dropout(input, p, training=train)."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """alpha_dropout in place."""
    return F.alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input, p, train, inplace):
    if not train or p == 0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = ember.empty(shape, device=input.device).bernoulli_(1 - p) / (1 - p)
    return input.mul_(keep) if inplace else input * keep.to(input.dtype)


def feature_dropout(input, p, train):
    """Zero whole channels (dim 1) with probability p, scaling the rest by 1 / (1 - p)."""
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input, p, train):
    """feature_dropout in place."""
    return _feature_dropout(input, p, train, True)


def feature_alpha_dropout(input, p, train):
    """alpha_dropout of whole channels."""
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """feature_alpha_dropout in place."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def native_dropout(input, p, train):
    """(output, mask): dropout and the boolean keep mask (all True when not training)."""
    if train is False:
        return input.clone(), ember.ones_like(input, dtype=ember.bool)
    mask = ember.empty(tuple(input.shape), device=input.device).bernoulli_(1 - p).bool()
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * mask.to(input.dtype) * scale, mask


# -- embeddings -------------------------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """weight[indices] (ATen's order: the weight first; padding_idx -1 means none)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale in place the rows of ``input`` that ``indices`` names whose ``norm_type``-norm
    exceeds ``max_norm`` (by max_norm / (norm + 1e-7))."""
    with ember.no_grad():
        rows = indices.reshape(-1).unique()
        picked = input.index_select(0, rows)
        norms = ember.linalg.vector_norm(picked, norm_type, dim=1, keepdim=True)
        scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        input.index_copy_(0, rows, picked * scale.to(input.dtype))
    return input


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices) of ATen's embedding_bag (mode 0 sum,
    1 mean, 2 max); output is nn.functional.embedding_bag's."""
    names = ("sum", "mean", "max")
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                          mode=names[mode], sparse=sparse,
                          per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    n = indices.numel()
    starts = offsets[:-1] if include_last_offset else offsets
    bags = starts.numel()
    ends = ember.cat([starts[1:], ember.tensor([n], device=starts.device)])
    bag_size = (ends - starts).long()
    position = ember.arange(n, device=indices.device)
    offset2bag = (ember.searchsorted(starts, position, right=True) - 1).long()
    if mode == 0:
        return out, offset2bag.new_empty(0), ember.zeros(bags, dtype=ember.int64), \
            ember.zeros(bags, dtype=ember.int64)
    if mode == 1:
        return out, offset2bag, bag_size, bag_size.clone()
    rows = weight.index_select(0, indices.reshape(-1))
    max_indices = ember.zeros((bags, weight.shape[1]), dtype=ember.int64)
    for b in range(bags):
        lo, hi = int(starts[b]), int(ends[b])
        if hi > lo:
            which = rows[lo:hi].argmax(0)
            max_indices[b] = indices.reshape(-1)[lo:hi][which]
    return out, offset2bag, bag_size, max_indices


# -- norms, distances, convolution, sampling --------------------------------------------------

def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """Normalise each group of channels of each sample."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) of group_norm, the statistics per (sample, group)."""
    x = input.reshape(N, group, -1)
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    rstd = (var + eps).rsqrt()
    out = F.group_norm(input, group, weight, bias, eps)
    return out, mean, rstd


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """Normalise each (sample, channel) over its spatial dims."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing ``normalized_shape`` dims, times weight."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity along ``dim``."""
    return F.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim."""
    return F.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    """The p-norm distances between the rows of ``input`` (upper triangle, flattened)."""
    return F.pdist(input, p)


def bilinear(input1, input2, weight, bias=None):
    """x1^T W x2 + b per output feature."""
    return F.bilinear(input1, input2, weight, bias)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """Any-dimensional (transposed) convolution, ATen's generic entry."""
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got "
                           f"{weight.dim()}-D")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def constant_pad_nd(input, pad, value=0):
    """F.pad(input, pad, 'constant', value)."""
    return F.pad(input, pad, "constant", value)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """(values, indices) of max_pool1d."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                        ceil_mode=ceil_mode, return_indices=True)


def affine_grid_generator(theta, size, align_corners):
    """F.affine_grid(theta, size, align_corners)."""
    return _sampling.affine_grid(theta, size, align_corners)


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with ATen's integer modes (0 bilinear, 1 nearest, 2 bicubic; padding
    0 zeros, 1 border, 2 reflection)."""
    return _sampling.grid_sample(input, grid, _MODES[interpolation_mode],
                                 _PADDINGS[padding_mode], align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The Frobenius norm over ``dim``."""
    result = ember.linalg.vector_norm(input, 2, dim, keepdim)
    return result if out is None else ember.core._tensor._result_out(result, out, "frobenius_norm")


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of singular values of the matrices over ``dim`` (the last two dims)."""
    if isinstance(dim, bool):                    # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    dim = (-2, -1) if dim is None else tuple(dim)
    result = ember.linalg.matrix_norm(input, "nuc", dim, keepdim)
    return result if out is None else ember.core._tensor._result_out(result, out, "nuclear_norm")


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm over ``dim`` (all dims by default)."""
    return ember.linalg.vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``."""
    from ember.nn.utils._weight_norm_ops import norm_except_dim as _impl
    return _impl(v, pow, dim)


# -- losses with ATen's integer reductions -----------------------------------------------------

def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """BCE on logits (ATen's reduction code: 0 none, 1 mean, 2 sum)."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def kl_div(input, target, reduction=1, *, log_target=False):
    """The pointwise KL divergence (ATen's reduction code)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """nn.functional.cosine_embedding_loss with ATen's reduction code."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """nn.functional.hinge_embedding_loss with ATen's reduction code."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """nn.functional.margin_ranking_loss with ATen's reduction code."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=1):
    """nn.functional.triplet_margin_loss with ATen's reduction code."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """nn.functional.poisson_nll_loss with ATen's reduction code."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    """nn.functional.ctc_loss with ATen's reduction code."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)
