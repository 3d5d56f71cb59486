"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
import ember

from .optimizer import Optimizer, _check_lr, _check_nonneg, _to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD: PyTorch's ``torch.optim.SGD``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-3).
        momentum (float): momentum factor (default 0).
        dampening (float): dampening for momentum (default 0).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        nesterov (bool): Nesterov momentum (needs momentum > 0 and zero dampening).
        maximize (bool): maximize the objective instead of minimizing it.
        foreach, fused (bool or None): accepted for compatibility; every setting runs the
            same per-tensor update (ember has no multi-tensor kernels yet).
        differentiable (bool): run ``step`` with grad mode on, as in PyTorch.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        _check_nonneg(momentum, "momentum value")
        _check_nonneg(weight_decay, "weight_decay value")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        ember._check_value(not nesterov or (momentum > 0 and dampening == 0),
                           "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(nesterov=False, maximize=False, foreach=None, differentiable=False,
                           fused=False)

    def _init_state(self, p, group):
        # a momentum buffer only (made from the first gradient), as torch: no step count
        return {} if group["momentum"] != 0 else None

    def _update(self, p, grad, state, group):
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-_to_scalar(group["lr"]))
