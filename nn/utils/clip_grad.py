"""Gradient clipping (``torch.nn.utils.clip_grad``): by total norm or by value."""
import math

from ember.core import _tensor as _T
from ember.core.elementwise import clamp
from ember.core.norms import vector_norm
from ember.core.shapes import stack
from ember.core.tensor import Tensor

from ember.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` taken together (as if concatenated)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _T.tensor(0.0)           # PyTorch: a CPU zero when there is nothing to clip
    groups = {}     # PyTorch takes the norms per (device, dtype) group, in first-seen order
    for t in tensors:
        groups.setdefault((str(t.device), t.dtype), []).append(t)
    first_device = tensors[0].device
    with no_grad():
        # each norm in its own dtype; stack promotes them, so a half first grad neither
        # overflows nor rounds the others. The outer norm is taken even of one norm
        # (norm_type 0 counts the nonzero norms, not the elements)
        norms = [vector_norm(t, norm_type).to(first_device)
                 for group in groups.values() for t in group]
        total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm anyway, "
                           f"set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients of ``parameters`` in place so that their total norm is at most
    ``max_norm``; returns the total norm before clipping (a tensor)."""
    parameters = _as_list(parameters)           # once: it may be a generator
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    if grads:
        clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by max_norm / (total_norm + 1e-6)
    when that is below 1 (``total_norm`` as get_total_norm computes it)."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))      # coef stays float32, as in PyTorch


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """The deprecated name of clip_grad_norm_."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.copy_(clamp(p.grad, -clip_value, clip_value))
