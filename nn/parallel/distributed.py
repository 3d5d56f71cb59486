"""``DistributedDataParallel``: one replica of a module per process.  Parameters and buffers
start as rank 0's; gradients are averaged over the process group in buckets during backward
(see _reducer), so every replica takes the same optimizer step.  Needs an initialised default
process group (``ember.distributed.init_process_group``), else raises PyTorch's ValueError.

``register_comm_hook`` replaces the averaging of each bucket; ``join()`` trains on uneven
inputs (the ranks that run out shadow the others' collectives)."""
import contextlib
import inspect

from ember.distributed.algorithms.join import Join, Joinable, JoinHook, _JoinConfig
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
    """Broadcast ``tensors`` from rank ``src`` of ``group``, one flat message per dtype and
    device."""
    by_kind = {}
    for t in tensors:
        by_kind.setdefault((t.dtype, str(t.device)), []).append(t)
    with ember.no_grad():
        for ts in by_kind.values():
            flat = ember.cat([t.detach().reshape(-1) for t in ts])
            dist.broadcast(flat, group=group, group_src=src)
            at = 0
            for t in ts:
                n = t.numel()
                t.detach().copy_(flat[at:at + n].view(t.shape))
                at += n


class _DDPJoinHook(JoinHook):
    """DistributedDataParallel under ``join()``: a rank without inputs shadows the buffer
    broadcast and the gradient reductions of each iteration of the others, then takes the
    final model from a rank that was among the last to join."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        if ddp._will_sync_buffers():
            ddp._sync_buffers(ddp._find_common_rank(False))
        should_sync = ddp._global_grad_sync(joined=True)
        ddp.require_forward_param_sync = should_sync
        if should_sync:
            ddp._reducer.shadow()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        src = ddp._find_common_rank(is_last_joiner)
        tensors = list(ddp._reducer.params)
        if ddp.broadcast_buffers:
            tensors += ddp._module_buffers
        _broadcast_coalesced(_distributed(), tensors, ddp.process_group, src)


class DistributedDataParallel(Module, Joinable):
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
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True
        self._join_work = None
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
        self._notify_join(grad_sync)
        self.require_forward_param_sync = ember.is_grad_enabled()
        if self._will_sync_buffers():
            self._sync_buffers(self._find_common_rank(True) if self._join_config.enable
                               else 0)
        if self._join_config.enable:
            self._global_grad_sync(joined=False)
        if self.device_ids:           # a device module: inputs move to its device first
            dev = ember.device(self._device_type, self.device_ids[0])
            inputs, kwargs = _to_device(inputs, dev), _to_device(kwargs, dev)
        out = self.module(*inputs, **kwargs)
        if grad_sync:
            self._reducer.prepare_for_backward(out)
        return out

    # communication hooks
    def register_comm_hook(self, state, hook):
        """Reduce each gradient bucket with ``hook(state, bucket)`` instead of averaging it:
        ``bucket`` is an ``ember.distributed.GradBucket`` (its gradients not divided by the
        world size), and the hook returns an ``ember.futures.Future`` of one tensor of the
        bucket's size, the reduced gradients (``Work.get_future()`` gives one for a
        collective).  Register once, before training; the built-in hooks are in
        ``ember.distributed.algorithms.ddp_comm_hooks.default_hooks``."""
        self._check_comm_hook(hook)
        self._reducer.register_comm_hook(state, hook)

    @staticmethod
    def _check_comm_hook(hook):
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        bucket = sig.parameters.get("bucket")
        if bucket is not None and bucket.annotation not in (
                inspect.Parameter.empty, ember.distributed.GradBucket):
            raise ValueError("Communication hook: bucket annotation should be "
                             "dist.GradBucket.")
        if sig.return_annotation not in (inspect.Signature.empty,
                                         ember.futures.Future[ember.Tensor]):
            raise ValueError("Communication hook: return annotation should be "
                             "ember.futures.Future[ember.Tensor].")

    # uneven inputs
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """A context manager for training on uneven inputs: a rank that runs out of inputs
        keeps matching the others' collectives (zero gradients) until all have, then takes
        the final model from a rank among the last to finish.  Gradients are divided by the
        initial world size (``divide_by_initial_world_size``, default) or by the number of
        ranks still training; ``throw_on_early_termination`` raises on every rank instead."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """The JoinHook of this module (``divide_by_initial_world_size``, default True)."""
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        if self.device_ids:
            return ember.device(self._device_type, self.device_ids[0])
        return ember.device(self._device_type)

    @property
    def join_process_group(self):
        return self.process_group

    def _notify_join(self, grad_sync):
        """Under join(): tell the joined ranks this one trains on (they count the ranks
        still training with the same all-reduce; the count divides the gradients)."""
        if self._join_work is not None:       # keep the last one alive until it completed
            self._join_work.wait()
            self._join_work = None
        work = Join.notify_join_context(self)
        if work is not None:
            self._join_work = work
            if grad_sync:
                self._reducer.divisor = (work, work._join_count)
                self._reducer.divide_by_initial_world_size = \
                    self._divide_by_initial_world_size

    def _global_grad_sync(self, joined):
        """Whether any rank syncs gradients this iteration (one all-reduce every rank
        makes under join())."""
        flag = ember.ones(1) if not joined and self.require_backward_grad_sync \
            else ember.zeros(1)
        ember.distributed.all_reduce(flag, group=self.process_group)
        return flag.item() != 0

    def _find_common_rank(self, candidate):
        """The largest group rank among the ranks passing ``candidate=True``."""
        dist = _distributed()
        rank = ember.tensor([dist.get_rank(self.process_group) if candidate else -1])
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        return int(rank.item())

    def _will_sync_buffers(self):
        return bool(self.require_forward_param_sync and self.broadcast_buffers
                    and self._module_buffers)

    def _sync_buffers(self, src):
        _broadcast_coalesced(_distributed(), self._module_buffers, self.process_group, src)

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module, params_and_buffers_to_ignore):
        """Leave these parameter/buffer names out of synchronisation (set before wrapping)."""
        module._ddp_params_and_buffers_to_ignore = list(params_and_buffers_to_ignore)


def _first_difference(mine, theirs):
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            return f"parameter {i}: {a} vs {b}"
    return "different numbers of parameters"
