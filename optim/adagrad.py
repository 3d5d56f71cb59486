"""Adagrad (Duchi et al.) with learning-rate decay, as PyTorch computes it."""
import ember

from ._updates import addcdiv_, addcmul_
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad: PyTorch's ``torch.optim.Adagrad``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-2).
        lr_decay (float): learning-rate decay per step (default 0).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        initial_accumulator_value (float): starting value of the squared-gradient sums.
        eps (float): added to the denominator (default 1e-10).
        foreach, fused: accepted; one per-tensor update serves all settings.
        maximize (bool): maximize the objective instead of minimizing it.
        differentiable (bool): run ``step`` with grad mode on, as in PyTorch.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonneg(lr_decay, "lr_decay value")
        _check_nonneg(weight_decay, "weight_decay value")
        _check_nonneg(initial_accumulator_value, "initial_accumulator_value value")
        _check_nonneg(eps, "epsilon value")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # state exists from the start (as in PyTorch), so share_memory() can reach it
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = self._init_state(p, group)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False, fused=None)

    def _init_state(self, p, group):
        init = group["initial_accumulator_value"]
        if p.is_complex():      # the update sees real and imaginary parts as two reals
            init = complex(init, init)
        return dict(step=_step_tensor(), sum=ember.full_like(p, init))

    def _update(self, p, grad, state, group):
        step = state["step"].item()
        clr = _to_scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        std = addcmul_(state["sum"], grad, grad).sqrt().add_(group["eps"])
        addcdiv_(p, grad, std, -clr)


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """Functional Adagrad (``torch.optim.adagrad.adagrad``): one step of :class:`Adagrad`,
    updating ``params``, ``state_sums`` and ``state_steps`` in place."""
    group = dict(lr=lr, weight_decay=weight_decay, lr_decay=lr_decay, eps=eps,
                 maximize=maximize)
    _functional_step(Adagrad, params, grads, group, dict(step=state_steps, sum=state_sums),
                     grad_scale, found_inf)
