"""The batch-norm pieces SyncBatchNorm is built of (torch.batch_norm_stats, _elemt,
_gather_stats[_with_counts], _update_stats, _backward_reduce, _backward_elemt), composed
of ember ops over the channel dim 1.  Loaded on first use."""
import ember

__all__ = ["batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
           "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
           "batch_norm_stats", "batch_norm_update_stats"]


def _dims(x):
    return [d for d in range(x.dim()) if d != 1]


def _channel(v, x):
    return v.reshape((1, -1) + (1,) * (x.dim() - 2))


def batch_norm_stats(input, eps):
    """(mean, invstd) per channel: invstd = 1 / sqrt(biased variance + eps)."""
    mean = input.mean(_dims(input))
    var = input.var(_dims(input), unbiased=False)
    return mean, (var + eps).rsqrt()


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased variance) per channel, folded into the running statistics (the running
    variance gets the unbiased estimate)."""
    dims = _dims(input)
    mean = input.mean(dims)
    var = input.var(dims, unbiased=False)
    n = input.numel() // max(input.shape[1], 1)
    with ember.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (n / max(n - 1, 1)) * momentum)
    return mean, var


def batch_norm_elemt(input, weight, bias, mean, invstd, eps, *, out=None):
    """(x - mean) * invstd * weight + bias, per channel."""
    y = (input - _channel(mean, input)) * _channel(invstd, input)
    if weight is not None:
        y = y * _channel(weight, input)
    if bias is not None:
        y = y + _channel(bias, input)
    return y if out is None else ember.core._tensor._result_out(y, out, "batch_norm_elemt")


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """The global (mean, invstd) of per-process statistics ``mean``/``invstd`` (W, C) over
    ``counts`` (W,) samples each, folded into the running statistics."""
    n = counts.to(mean.dtype).reshape(-1, 1)
    total = n.sum()
    global_mean = (mean * n).sum(0) / total
    var = invstd.pow(-2) - eps
    global_var = ((var + mean * mean) * n).sum(0) / total - global_mean * global_mean
    with ember.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(global_mean * momentum)
        if running_var is not None:
            unbiased = global_var * total / (total - 1)
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
    return global_mean, (global_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """batch_norm_gather_stats_with_counts with ``count`` samples in every process."""
    counts = ember.full((mean.shape[0],), float(count), dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel."""
    dims = _dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _channel(mean, input))).sum(dims)
    empty = grad_out.new_empty(0)
    grad_weight = sum_dy_xmu * invstd if weight_g else empty
    grad_bias = sum_dy if bias_g else empty
    return (sum_dy if input_g else empty), (sum_dy_xmu if input_g else empty), grad_weight, \
        grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """The input gradient from the (all-reduced) sums and the per-process ``count``."""
    total = count.sum().to(input.dtype)
    mean_dy = _channel(sum_dy / total, input)
    mean_dy_xmu = _channel(sum_dy_xmu / total, input)
    istd = _channel(invstd, input)
    scale = istd if weight is None else istd * _channel(weight, input)
    return (grad_out - mean_dy - (input - _channel(mean, input)) * istd * istd * mean_dy_xmu) \
        * scale
