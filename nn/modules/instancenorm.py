"""Instance normalisation layers (``torch.nn.modules.instancenorm``): InstanceNorm1d/2d/3d
over ``ember.nn.functional.instance_norm``, sharing _NormBase with the batch norms, and
their lazy twins."""
import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Per-sample, per-channel normalisation; inputs without a batch dim are accepted."""

    _no_batch_dim = None               # the input's dims without the batch dim

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D "
                             f"input (got {input.dim()}D input)")

    def _get_no_batch_dim(self):
        return self._no_batch_dim

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # checkpoints without a version (before 0.4) may carry running stats the module no
        # longer tracks by default: report them and drop them
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var")
                    if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with "
                    f"track_running_stats=False. If state_dict is a checkpoint saved before "
                    f"0.4.0, this may be expected because {klass} does not track running "
                    f"stats by default since 0.4.0. Please remove these keys from state_dict. "
                    f"If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the "
                    f"documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          f"You can silence this warning by not passing in num_features, "
                          f"which is not used because affine=False", stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L) inputs: ``InstanceNorm1d(num_features,
    eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None,
    dtype=None)``."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) inputs: ``InstanceNorm2d(num_features,
    eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None,
    dtype=None)``."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) inputs:
    ``InstanceNorm3d(num_features, eps=1e-05, momentum=0.1, affine=False,
    track_running_stats=False, device=None, dtype=None)``."""

    _no_batch_dim = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """InstanceNorm1d with ``num_features`` from the first input's dim 1:
    ``LazyInstanceNorm1d(eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
    device=None, dtype=None)``."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """InstanceNorm2d with ``num_features`` inferred (see LazyInstanceNorm1d)."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """InstanceNorm3d with ``num_features`` inferred (see LazyInstanceNorm1d)."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
