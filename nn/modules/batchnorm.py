"""Batch normalisation layers: BatchNorm1d/2d/3d over ``ember.nn.functional.batch_norm``,
with running statistics as buffers, and their lazy twins.  _NormBase (parameters, buffers,
state_dict versions) is shared with the instance norms."""
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name

from ember.autograd.grad_mode import no_grad

from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import _affine_parameters, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Parameters and running-statistics buffers the batch and instance norms share."""

    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, num_features, affine, bias, factory)
        if track_running_stats:
            self.register_buffer("running_mean", _T.zeros(num_features, **factory))
            self.register_buffer("running_var", _T.ones(num_features, **factory))
            self.register_buffer("num_batches_tracked",
                                 _T.zeros((), dtype=_dtype_by_name["int64"], device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Zero mean, unit variance, no batches seen."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Running stats reset; weight ones, bias zeros."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # checkpoints before version 2 have no num_batches_tracked: it starts at 0
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats \
                and key not in state_dict:
            state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                               else _T.zeros((), dtype=_dtype_by_name["int64"]))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    """The training/eval logic of the batch norms."""

    def forward(self, input):
        self._check_input_dim(input)
        return self._local(input, *self._step())

    def _step(self):
        """Count this forward; (running_mean, running_var, use_batch_stats, factor) for it."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative moving average
            factor = (1.0 / float(self.num_batches_tracked) if self.momentum is None
                      else self.momentum)
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return (self.running_mean if keep else None, self.running_var if keep else None,
                use_batch_stats, factor)

    def _local(self, input, running_mean, running_var, use_batch_stats, factor):
        return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs: ``BatchNorm1d(num_features, eps=1e-05,
    momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
    bias=True)``."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs: ``BatchNorm2d(num_features, eps=1e-05,
    momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
    bias=True)``."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs: ``BatchNorm3d(num_features, eps=1e-05,
    momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
    bias=True)``."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """num_features from the first input's dim 1; parameters and running statistics stay
    uninitialized until then."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        factory = {"device": device, "dtype": dtype}
        # affine and track_running_stats off: no tensors that are replaced right away
        super().__init__(0, eps, momentum, False, False, **factory, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(**factory)
            if bias:
                self.bias = UninitializedParameter(**factory)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**factory)
            self.running_var = UninitializedBuffer(**factory)
            self.num_batches_tracked = _T.zeros((), dtype=_dtype_by_name["int64"],
                                                device=device)

    def reset_parameters(self):
        """The norm's initialisation, once the parameters have a shape."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """num_features from ``input.shape[1]``; materialise and initialise."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None:
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """BatchNorm1d with ``num_features`` inferred: ``LazyBatchNorm1d(eps=1e-05, momentum=0.1,
    affine=True, track_running_stats=True, device=None, dtype=None)``."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """BatchNorm2d with ``num_features`` inferred: ``LazyBatchNorm2d(eps=1e-05, momentum=0.1,
    affine=True, track_running_stats=True, device=None, dtype=None)``."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """BatchNorm3d with ``num_features`` inferred: ``LazyBatchNorm3d(eps=1e-05, momentum=0.1,
    affine=True, track_running_stats=True, device=None, dtype=None)``."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose training statistics cover the batches of every rank of a process
    group: ``SyncBatchNorm(num_features, eps=1e-05, momentum=0.1, affine=True,
    track_running_stats=True, process_group=None, device=None, dtype=None, *, bias=True)``.

    In training, with ``ember.distributed`` initialised and more than one rank in
    ``process_group`` (default: the world), the per-channel mean and variance are those of
    the concatenation of every rank's batch (ranks may hold different batch sizes, even
    none), the running statistics take the global unbiased variance, and backward sums the
    input gradient's per-channel terms over the ranks, so that outputs and input gradients
    equal BatchNorm's on the concatenated batch.  In eval mode, on one rank, or without an
    initialised process group it is BatchNorm.  Inputs are (N, C, +) on any device (PyTorch
    runs it on GPUs only)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        running_mean, running_var, use_batch_stats, factor = self._step()
        group, world_size = self._sync_group() if use_batch_stats else (None, 1)
        if world_size <= 1:
            return self._local(input, running_mean, running_var, use_batch_stats, factor)
        from ._functions import SyncBatchNorm as _SyncBatchNorm
        return _SyncBatchNorm.apply(input, self.weight, self.bias, running_mean, running_var,
                                    self.eps, factor, group, world_size)

    def _sync_group(self):
        """(group, its size) to synchronise over in training, or (None, 1)."""
        if not self.training:
            return None, 1
        import ember.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            return None, 1
        group = self.process_group if self.process_group else dist.group.WORLD
        return group, dist.get_world_size(group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*D`` layer replaced by a SyncBatchNorm sharing
        its parameters and running statistics (a BatchNorm ``module`` itself comes back as
        a new SyncBatchNorm); ``process_group`` scopes the synchronisation (default: the
        world)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group,
                      bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
