"""NAdam (Dozat, 2016: Adam with Nesterov momentum), PyTorch's single-tensor algorithm."""
import ember

from ._updates import addcdiv_, addcmul_, lerp_
from .adamax import _check_betas
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """NAdam: PyTorch's ``torch.optim.NAdam``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 2e-3).
        betas (tuple of two floats): decay rates of the running averages of the gradient
            and of its square (default (0.9, 0.999)).
        eps (float): added to the denominator (default 1e-8).
        weight_decay (float): weight decay (default 0).
        momentum_decay (float): the ``psi`` of the momentum schedule (default 4e-3).
        decoupled_weight_decay (bool): decay the parameter (AdamW-style, "NAdamW") instead
            of adding the L2 penalty to the gradient.
        foreach, capturable, differentiable: accepted; one per-tensor update serves all.
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg(eps, "epsilon value")
        _check_betas(betas)
        _check_nonneg(weight_decay, "weight_decay value")
        _check_nonneg(momentum_decay, "momentum_decay value")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                           decoupled_weight_decay=False)
    _SCALAR_STATE = ("step", "mu_product")
    _CAPTURABLE_WHAT = "params, mu_products and state_steps"

    def _init_state(self, p, group):
        # mu_product is a scalar tensor like step, so the product rounds as torch's does
        return dict(step=_step_tensor(), mu_product=_step_tensor().fill_(1.0),
                    exp_avg=ember.zeros_like(p), exp_avg_sq=ember.zeros_like(p))

    def _update(self, p, grad, state, group):
        beta1, beta2 = group["betas"]
        # a tensor lr stays a tensor so the scalar arithmetic rounds in its dtype, as in
        # torch
        lr, psi = group["lr"], group["momentum_decay"]
        step = state["step"].item()
        bias_correction2 = 1 - beta2 ** step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        mu_product = state["mu_product"].mul_(mu).item()
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt_().add_(group["eps"])
        addcdiv_(p, grad, denom, _to_scalar(-lr * (1.0 - mu) / (1.0 - mu_product)))
        addcdiv_(p, exp_avg, denom, _to_scalar((-lr * mu_next) / (1.0 - mu_product * mu_next)))


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps):
    """Functional NAdam (``torch.optim.nadam.nadam``): one step of :class:`NAdam`,
    updating ``params`` and the state lists (``mu_products`` included) in place."""
    group = dict(lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                 momentum_decay=momentum_decay, maximize=maximize,
                 decoupled_weight_decay=decoupled_weight_decay)
    _functional_step(NAdam, params, grads, group,
                     dict(step=state_steps, mu_product=mu_products, exp_avg=exp_avgs,
                          exp_avg_sq=exp_avg_sqs))
