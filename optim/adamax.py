"""Adamax (Kingma & Ba, section 7: Adam with the infinity norm), PyTorch's algorithm."""
import ember

from ._updates import addcdiv_, lerp_
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["Adamax", "adamax"]


def _check_betas(betas):
    """torch's ``Invalid beta parameter at index i`` checks (ValueError)."""
    for i in (0, 1):
        ember._check_value(0.0 <= betas[i] < 1.0,
                           lambda: f"Invalid beta parameter at index {i}: {betas[i]}")


class Adamax(Optimizer):
    """Adamax: PyTorch's ``torch.optim.Adamax``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 2e-3).
        betas (tuple of two floats): decay rates of the gradient average and of the
            infinity norm (default (0.9, 0.999)).
        eps (float): added to the infinity norm (default 1e-8).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        foreach, capturable, differentiable: accepted; one per-tensor update serves all.
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg(eps, "epsilon value")
        _check_betas(betas)
        _check_nonneg(weight_decay, "weight_decay value")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def _init_state(self, p, group):
        return dict(step=_step_tensor(), exp_avg=ember.zeros_like(p),
                    exp_inf=ember.zeros_like(p))

    def _update(self, p, grad, state, group):
        beta1, beta2 = group["betas"]
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        lerp_(exp_avg, grad, 1 - beta1)
        ember.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"]), out=exp_inf)
        # a tensor lr keeps its dtype through the scalar arithmetic, as in torch
        clr = _to_scalar(group["lr"] / (1 - beta1 ** state["step"].item()))
        addcdiv_(p, exp_avg, exp_inf, -clr)


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2,
           lr, weight_decay):
    """Functional Adamax (``torch.optim.adamax.adamax``): one step of :class:`Adamax`,
    updating ``params`` and the state lists in place."""
    group = dict(lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                 maximize=maximize)
    _functional_step(Adamax, params, grads, group,
                     dict(step=state_steps, exp_avg=exp_avgs, exp_inf=exp_infs))
