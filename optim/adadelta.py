"""Adadelta (Zeiler, 2012), PyTorch's single-tensor algorithm."""
import ember

from ._updates import addcmul_
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta: PyTorch's ``torch.optim.Adadelta``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): scale of the delta before it is applied (default 1.0).
        rho (float): decay rate of the running averages of squared gradients and squared
            deltas (default 0.9).
        eps (float): added inside the square roots (default 1e-6).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        foreach, capturable, differentiable: accepted; one per-tensor update serves all
            (``differentiable=True`` runs ``step`` with grad mode on).
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        ember._check_value(0.0 <= rho <= 1.0, lambda: f"Invalid rho value: {rho}")
        _check_nonneg(eps, "epsilon value")
        _check_nonneg(weight_decay, "weight_decay value")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone"]    # torch's, without xla

    def _init_state(self, p, group):
        return dict(step=_step_tensor(), square_avg=ember.zeros_like(p),
                    acc_delta=ember.zeros_like(p))

    def _update(self, p, grad, state, group):
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
        p.add_(delta, alpha=-_to_scalar(group["lr"]))


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    """Functional Adadelta (``torch.optim.adadelta.adadelta``): one step of
    :class:`Adadelta`, updating ``params`` and the state lists in place."""
    group = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
    _functional_step(Adadelta, params, grads, group,
                     dict(step=state_steps, square_avg=square_avgs, acc_delta=acc_deltas))
