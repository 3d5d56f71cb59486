"""The built-in DistributedDataParallel communication hooks (PyTorch's
``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``).  ``state`` is the process
group to average over (None: the world).

The compress hooks round the gradients to float16/bfloat16 before they are averaged and
write the result back in the bucket's dtype: PyTorch's numerics.  ember's MPI reductions
carry half types as float32 (MPI has no bfloat16), so they do not halve the bytes sent."""
import ember

__all__ = ["allreduce_hook", "bf16_compress_hook", "bf16_compress_wrapper",
           "fp16_compress_hook", "fp16_compress_wrapper"]


def _group(process_group):
    return process_group if process_group is not None else ember.distributed.group.WORLD


def _allreduce_fut(process_group, tensor):
    """Average ``tensor`` over the group in place: a Future of it."""
    group = _group(process_group)
    tensor.div_(group.size())
    work = ember.distributed.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """Average the bucket over the group (what DDP does without a hook)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer

    work = ember.distributed.all_reduce(compressed, group=group, async_op=True)
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket cast to float16 (divided by the group size first), then cast
    back to the bucket's dtype."""
    return _compress_hook(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Average the bucket cast to bfloat16 (divided by the group size first), then cast
    back to the bucket's dtype."""
    return _compress_hook(ember.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapper_hook(hook_state, bucket):
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            out = bucket.buffer()
            out.copy_(fut.value())
            return out
        return fut.then(decompress)
    return wrapper_hook


def fp16_compress_wrapper(hook):
    """``hook`` run on the bucket cast to float16, its result cast back:
    ``fp16_compress_wrapper(allreduce_hook)`` is ``fp16_compress_hook``."""
    wrapped = _compress_wrapper(ember.float16, hook)
    wrapped.__name__ = wrapped.__qualname__ = "fp16_compress_wrapper_hook"
    return wrapped


def bf16_compress_wrapper(hook):
    """``hook`` run on the bucket cast to bfloat16, its result cast back."""
    wrapped = _compress_wrapper(ember.bfloat16, hook)
    wrapped.__name__ = wrapped.__qualname__ = "bf16_compress_wrapper_hook"
    return wrapped
