"""RMSprop (Hinton's lecture 6e), centered and with momentum, as PyTorch computes it."""
import ember

from ._updates import addcdiv_, addcmul_, lerp_
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop: PyTorch's ``torch.optim.RMSprop``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-2).
        alpha (float): smoothing constant of the squared-gradient average (default 0.99).
        eps (float): added to the denominator (default 1e-8).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        momentum (float): momentum factor (default 0).
        centered (bool): normalise by the estimated variance instead of the raw second
            moment.
        capturable, foreach, differentiable: accepted; one per-tensor update serves all.
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        _check_nonneg(eps, "epsilon value")
        _check_nonneg(momentum, "momentum value")
        _check_nonneg(weight_decay, "weight_decay value")
        _check_nonneg(alpha, "alpha value")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(momentum=0, centered=False, foreach=None, maximize=False,
                           differentiable=False, capturable=False)

    def _init_state(self, p, group):
        state = dict(step=_step_tensor(), square_avg=ember.zeros_like(p))
        if group["momentum"] > 0:
            state["momentum_buffer"] = ember.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = ember.zeros_like(p)
        return state

    def _update(self, p, grad, state, group):
        lr, alpha = _to_scalar(group["lr"]), group["alpha"]
        square_avg = addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = addcmul_(square_avg.clone(), grad_avg, grad_avg, -1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = addcdiv_(state["momentum_buffer"].mul_(group["momentum"]), grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            addcdiv_(p, grad, avg, -lr)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """Functional RMSprop (``torch.optim.rmsprop.rmsprop``): one step of :class:`RMSprop`,
    updating ``params`` and the state lists in place (``grad_avgs`` is used when
    ``centered``, ``momentum_buffer_list`` when ``momentum > 0``)."""
    group = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                 centered=centered, maximize=maximize)
    _functional_step(RMSprop, params, grads, group,
                     dict(step=state_steps, square_avg=square_avgs, grad_avg=grad_avgs,
                          momentum_buffer=momentum_buffer_list))
