"""RAdam (Liu et al., 2019: Adam with a rectified adaptive learning rate), PyTorch's
single-tensor algorithm."""
import ember

from ._updates import addcmul_, lerp_
from .adamax import _check_betas
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """RAdam: PyTorch's ``torch.optim.RAdam``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-3).
        betas (tuple of two floats): decay rates of the running averages of the gradient
            and of its square (default (0.9, 0.999)).
        eps (float): added to the denominator (default 1e-8).
        weight_decay (float): weight decay (default 0).
        decoupled_weight_decay (bool): decay the parameter (AdamW-style) instead of adding
            the L2 penalty to the gradient.
        foreach, capturable, differentiable: accepted; one per-tensor update serves all.
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg(eps, "epsilon value")
        _check_betas(betas)
        _check_nonneg(weight_decay, "weight_decay value")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False, capturable=False,
                           decoupled_weight_decay=False)

    def _init_state(self, p, group):
        return dict(step=_step_tensor(), exp_avg=ember.zeros_like(p),
                    exp_avg_sq=ember.zeros_like(p))

    def _update(self, p, grad, state, group):
        beta1, beta2 = group["betas"]
        rho_inf = 2 / (1 - beta2) - 1          # the longest approximated SMA
        step = state["step"].item()
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg.div(bias_correction1).mul_(_to_scalar(group["lr"]))
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:     # the variance is tractable: rectify the adaptive lr
            adaptive = ember.div(bias_correction2 ** 0.5,
                                 exp_avg_sq.sqrt().add_(group["eps"]))
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            update.mul_(adaptive).mul_(rect)
        p.sub_(update)


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    """Functional RAdam (``torch.optim.radam.radam``): one step of :class:`RAdam`,
    updating ``params`` and the state lists in place."""
    group = dict(lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                 maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
    _functional_step(RAdam, params, grads, group,
                     dict(step=state_steps, exp_avg=exp_avgs, exp_avg_sq=exp_avg_sqs))
