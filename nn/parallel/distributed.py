"""``DistributedDataParallel``: one replica of a module per process.  Parameters and buffers
start as rank 0's; gradients are averaged over the process group in buckets during backward
(see _reducer), so every replica takes the same optimizer step.  Needs an initialised default
process group (``ember.distributed.init_process_group``), else raises PyTorch's ValueError."""
import contextlib

from ember.nn.modules import Module
from ember.nn.parallel._reducer import Reducer
from ember.nn.parallel.data_parallel import _to_device

import ember

__all__ = ["DistributedDataParallel"]

_DEFAULT_BUCKET_CAP_MB = 25


def _distributed():
    import ember.distributed as dist
    if not dist.is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return dist


def _broadcast_coalesced(dist, tensors, group, src=0):
    """Broadcast ``tensors`` from rank ``src``, one flat message per dtype and device."""
    by_kind = {}
    for t in tensors:
        by_kind.setdefault((t.dtype, str(t.device)), []).append(t)
    with ember.no_grad():
        for ts in by_kind.values():
            flat = ember.cat([t.detach().reshape(-1) for t in ts])
            dist.broadcast(flat, src=src, group=group)
            at = 0
            for t in ts:
                n = t.numel()
                t.detach().copy_(flat[at:at + n].view(t.shape))
                at += n


class DistributedDataParallel(Module):
    """Data parallelism over the ranks of ``process_group`` (default: the world).

    Args:
        module (Module): the replica.
        device_ids, output_device: None for a CPU module, as PyTorch requires.
        broadcast_buffers (bool): copy rank 0's buffers into every replica before each
            forward (default True).
        init_sync (bool): broadcast rank 0's parameters and buffers now (default True).
        process_group (ProcessGroup, optional): the ranks to average over.
        bucket_cap_mb (float, optional): the size of a gradient bucket (default 25 MB).
        find_unused_parameters (bool): find the parameters a forward's outputs do not depend
            on, so their buckets still start (default False).
        gradient_as_bucket_view (bool): ``.grad`` are views into the buckets, saving a copy
            and the memory of one set of gradients (default False).
        static_graph (bool): accepted (the graph is not re-analysed in any case).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None):
        super().__init__()
        dist = _distributed()
        if process_group is None:
            process_group = dist.group.WORLD
        ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        named = [(n, p) for n, p in module.named_parameters()
                 if p.requires_grad and n not in ignore]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {str(p.device) for _, p in named}
        if device_ids is not None and all(d.startswith("cpu") for d in devices):
            raise ValueError(
                f"DistributedDataParallel device_ids and output_device arguments only work "
                f"with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters {sorted(devices)}.")
        self.module = module
        self._device_type = next(iter(devices)).split(":")[0]
        self.device_ids = [d.index if hasattr(d, "index") else int(d) for d in device_ids] \
            if device_ids else None
        self.output_device = output_device
        self.dim = dim
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * 1024 * 1024)
        self.parameters_to_ignore = ignore
        self._module_buffers = [b for n, b in module.named_buffers() if n not in ignore]
        params = [p for _, p in named]
        self._verify_same_model(dist, params)
        if init_sync:
            _broadcast_coalesced(dist, params + self._module_buffers, process_group)
        self._reducer = Reducer(params, [n for n, _ in named], process_group,
                                self.bucket_bytes_cap, gradient_as_bucket_view,
                                find_unused_parameters)

    def _verify_same_model(self, dist, params):
        mine = [(tuple(p.shape), str(p.dtype)) for p in params]
        every = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(every, mine, group=self.process_group)
        for r, theirs in enumerate(every):
            if theirs != mine:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank "
                    f"{dist.get_rank(self.process_group)} has {len(mine)} params, while rank "
                    f"{r} has inconsistent {len(theirs)} params (or shapes/dtypes differ: "
                    f"{_first_difference(mine, theirs)}).")

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally; the first backward after it
        averages the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def forward(self, *inputs, **kwargs):
        grad_sync = ember.is_grad_enabled() and self.require_backward_grad_sync
        if grad_sync:
            self._reducer.ensure_prior_finished()
        self.require_forward_param_sync = ember.is_grad_enabled()
        if self.broadcast_buffers and self.require_forward_param_sync and self._module_buffers:
            _broadcast_coalesced(_distributed(), self._module_buffers, self.process_group)
        if self.device_ids:           # a device module: inputs move to its device first
            dev = ember.device(self._device_type, self.device_ids[0])
            inputs, kwargs = _to_device(inputs, dev), _to_device(kwargs, dev)
        out = self.module(*inputs, **kwargs)
        if grad_sync:
            self._reducer.prepare_for_backward(out)
        return out

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module, params_and_buffers_to_ignore):
        """Leave these parameter/buffer names out of synchronisation (set before wrapping)."""
        module._ddp_params_and_buffers_to_ignore = list(params_and_buffers_to_ignore)


def _first_difference(mine, theirs):
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            return f"parameter {i}: {a} vs {b}"
    return "different numbers of parameters"
