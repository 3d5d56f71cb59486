"""Autograd functions behind layers that communicate (PyTorch's torch.nn.modules._functions):
SyncBatchNorm's batch statistics and input gradient over the ranks of a process group."""
import ember
from ember.autograd import Function

__all__ = ["SyncBatchNorm"]

_HALF = ("float16", "bfloat16")


def _channel(v, x):
    """A per-channel (C,) vector shaped to broadcast over ``x`` (N, C, *)."""
    return v.reshape((1, -1) + (1,) * (x.dim() - 2))


def _dims(x):
    return [d for d in range(x.dim()) if d != 1]


def _global_stats(x, world_size, process_group):
    """(count, mean, sum of squared deviations) per channel over every rank's ``x``, in
    float64.  Each rank contributes its own (count, mean, squared deviations) and they are
    merged as in Chan et al.'s parallel variance: E[x^2] - E[x]^2 would cancel in float32, and
    the ranks' batches may differ in size (or be empty)."""
    import ember.distributed as dist
    c = x.shape[1]
    n = x.numel() // c
    mine = ember.zeros(2 * c + 1, dtype=ember.float64, device=x.device)
    if n:
        var, mean = ember.var_mean(x, _dims(x), correction=0)
        mine[0] = n
        mine[1:c + 1] = mean.double()
        mine[c + 1:] = var.double() * n
    every = mine.new_empty(world_size * (2 * c + 1))
    dist.all_gather_into_tensor(every, mine, group=process_group)
    every = every.view(world_size, 2 * c + 1)
    counts, means, m2s = every[:, :1], every[:, 1:c + 1], every[:, c + 1:]
    total = counts.sum()
    mean = (counts * means).sum(0) / total
    m2 = (m2s + counts * (means - mean) ** 2).sum(0)
    return total, mean, m2


class SyncBatchNorm(Function):
    """Batch norm whose statistics and input gradient cover the batches of every rank of
    ``process_group`` (``apply(input, weight, bias, running_mean, running_var, eps,
    momentum, process_group, world_size)``).  The weight and bias gradients stay local:
    DistributedDataParallel averages them with the others."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        compute = ember.float32 if input.dtype.name in _HALF else input.dtype
        x = input.to(compute)
        total, mean64, m2 = _global_stats(x, world_size, process_group)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean64.to(running_mean.dtype) * momentum)
        if running_var is not None:       # the unbiased variance, as BatchNorm keeps
            unbiased = m2 / (total - 1)
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        mean = mean64.to(compute)
        invstd = (m2 / total + eps).rsqrt().to(compute)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.count = total
        ctx.process_group = process_group
        ctx.bias_dtype = None if bias is None else bias.dtype
        y = (x - _channel(mean, x)) * _channel(invstd, x)
        if weight is not None:
            y = y * _channel(weight.to(compute), x)
        if bias is not None:
            y = y + _channel(bias.to(compute), x)
        return y.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        import ember.distributed as dist
        x, weight, mean, invstd = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        c = x.shape[1]
        grad_input = grad_weight = grad_bias = None
        if x.numel():
            dy = grad_output.to(x.dtype)
            dims = _dims(x)
            xmu = x - _channel(mean, x)
            sum_dy = dy.sum(dims)
            sum_dy_xmu = (dy * xmu).sum(dims)
            if need_input:
                # the sums over every rank's batch: the input gradient of batch norm on the
                # concatenated batch
                both = ember.cat([sum_dy, sum_dy_xmu])
                dist.all_reduce(both, group=ctx.process_group)
                count = ctx.count.to(x.dtype)
                mean_dy = _channel(both[:c] / count, x)
                mean_dy_xmu = _channel(both[c:] / count, x)
                istd = _channel(invstd, x)
                scale = istd if weight is None else istd * _channel(weight.to(x.dtype), x)
                grad_input = ((dy - mean_dy - xmu * istd * istd * mean_dy_xmu) * scale).to(
                    grad_output.dtype)
            if weight is not None and need_weight:
                grad_weight = (sum_dy_xmu * invstd).to(weight.dtype)
            if need_bias:
                grad_bias = sum_dy.to(ctx.bias_dtype)
        elif need_input:
            # an empty batch here still joins the reduction the other ranks make
            dist.all_reduce(ember.zeros(2 * c, dtype=x.dtype, device=x.device),
                            group=ctx.process_group)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None
