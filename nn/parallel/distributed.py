"""``DistributedDataParallel``: one replica per process; parameters and buffers start from
rank 0's, and each gradient is averaged over the process group as it is computed.  Needs an
initialised default process group (``ember.distributed.init_process_group``), else raises
PyTorch's ValueError."""
import contextlib
import importlib

from ember.nn.modules import Module

__all__ = ["DistributedDataParallel"]


def _default_group():
    dist = importlib.import_module("ember.distributed")
    if not getattr(dist, "is_initialized", lambda: False)():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return dist, dist._get_default_group()


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training over ``process_group`` (default: the
    world group).  ``broadcast_buffers``: copy rank 0's buffers before each forward;
    ``no_sync()``: accumulate gradients locally for a few steps."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        if process_group is None:
            dist, process_group = _default_group()
        else:
            dist = importlib.import_module("ember.distributed")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.device_ids = device_ids
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.process_group = process_group
        object.__setattr__(self, "_dist", dist)
        object.__setattr__(self, "_sync", True)
        self._world = dist.get_world_size(process_group)
        if init_sync:
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t.data, src=0, group=process_group)
        for p in module.parameters():
            if p.requires_grad:
                p.register_hook(self._average)

    def _average(self, grad):
        if not self._sync:
            return grad
        g = grad.clone()
        self._dist.all_reduce(g, group=self.process_group)
        return g.div_(self._world)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients computed inside stay local (accumulate, then sync on a later step)."""
        object.__setattr__(self, "_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync", True)

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers:
            for b in self.module.buffers():
                self._dist.broadcast(b.data, src=0, group=self.process_group)
        return self.module(*inputs, **kwargs)
