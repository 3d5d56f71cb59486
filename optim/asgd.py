"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky), PyTorch's algorithm."""
import ember

from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _functional_step,
    _step_tensor,
    _to_scalar,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """ASGD: PyTorch's ``torch.optim.ASGD``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-2).
        lambd (float): decay term (default 1e-4).
        alpha (float): power of the eta update (default 0.75).
        t0 (float): the step at which averaging starts (default 1e6).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        foreach, capturable, differentiable: accepted; one per-tensor update serves all.
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it.
    The running average is in ``state['ax']``."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg(weight_decay, "weight_decay value")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _SCALAR_STATE = ("step", "eta", "mu")
    _CAPTURABLE_WHAT = "params, mus, etas, and state_steps"

    def _init_state(self, p, group):
        dtype = _step_tensor().dtype
        return dict(step=_step_tensor(),
                    eta=ember.tensor(float(_to_scalar(group["lr"])), dtype=dtype),
                    mu=ember.ones((), dtype=dtype), ax=ember.zeros_like(p))

    def _update(self, p, grad, state, group):
        step = state["step"].item()
        lambd, lr = group["lambd"], _to_scalar(group["lr"])
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        mu = state["mu"].item()
        ax = state["ax"]
        if mu != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        state["eta"].fill_(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"].fill_(1 / max(1, step - group["t0"]))


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    """Functional ASGD (``torch.optim.asgd.asgd``): one step of :class:`ASGD`, updating
    ``params``, the averages ``axs`` and the scalar tensors ``mus``, ``etas`` and
    ``state_steps`` in place."""
    group = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                 maximize=maximize)
    _functional_step(ASGD, params, grads, group,
                     dict(step=state_steps, eta=etas, mu=mus, ax=axs))
