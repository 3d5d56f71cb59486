"""``DataParallel``: with no GPU (PyTorch looks for CUDA and XPU) the wrapped module simply
runs; with one device the module and inputs move there.  Splitting a batch over several
devices needs scatter/gather kernels no ember plugin offers yet, and says so."""
from ember.nn.modules import Module

__all__ = ["DataParallel"]

_DATA_PARALLEL_TYPES = ("cuda", "xpu")


def _available_device_type():
    import ember
    for t in _DATA_PARALLEL_TYPES:
        if ember.get_device_module(t).is_available():
            return t
    return None


class DataParallel(Module):
    """Run ``module`` over the batch split along ``dim`` on ``device_ids``; state_dict keys
    carry the ``module.`` prefix, as PyTorch's."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        device_type = _available_device_type()
        if device_type is None:
            self.device_ids = []
            return
        import ember
        if device_ids is None:
            device_ids = list(range(ember.get_device_module(device_type).device_count()))
        self.device_ids = [d.index if hasattr(d, "index") else int(d) for d in device_ids]
        self.output_device = self.device_ids[0] if output_device is None else output_device
        self.src_device_obj = ember.device(device_type, self.device_ids[0])
        if len(self.device_ids) > 1:
            raise NotImplementedError(
                "DataParallel over several devices needs scatter/replicate/gather, which "
                "ember does not implement: use DistributedDataParallel (one process per "
                "device) instead")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        dev = self.src_device_obj
        return self.module(*_to_device(inputs, dev), **_to_device(kwargs, dev))


def _to_device(x, dev):
    """The tensors in ``x`` (nested tuples, lists and dicts) moved to ``dev``."""
    import ember
    if isinstance(x, ember.Tensor):
        return x.to(dev)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v, dev) for v in x)
    if isinstance(x, dict):
        return {k: _to_device(v, dev) for k, v in x.items()}
    return x
