"""Rprop: resilient backpropagation (Riedmiller & Braun), PyTorch's algorithm."""
import ember

from .optimizer import Optimizer, _check_lr, _functional_step, _step_tensor, _to_scalar

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Rprop: PyTorch's ``torch.optim.Rprop``.

    Each element's step size grows by ``etas[1]`` while its gradient keeps its sign and
    shrinks by ``etas[0]`` when it flips (that step is skipped), within ``step_sizes``;
    the parameter moves by the step size against the gradient's sign.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): initial step size (default 1e-2).
        etas (tuple): (decrease, increase) factors, 0 < etaminus < 1 < etaplus
            (default (0.5, 1.2)).
        step_sizes (tuple): (minimal, maximal) step size (default (1e-6, 50)).
        capturable, foreach, differentiable: accepted; one per-tensor update serves all.
            (``capturable=True`` refuses parameters on the CPU at ``step``, as torch.)
        maximize (bool): maximize the objective instead of minimizing it."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        ember._check_value(0.0 < etas[0] < 1.0 < etas[1],
                           lambda: f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def _init_state(self, p, group):
        lr = _to_scalar(group["lr"])
        if p.is_complex():      # the update sees real and imaginary parts as two reals
            lr = complex(lr, lr)
        return dict(step=_step_tensor(), prev=ember.zeros_like(p),
                    step_size=ember.full_like(p, lr))

    def _update(self, p, grad, state, group):
        etaminus, etaplus = group["etas"]
        low, high = group["step_sizes"]
        prev, step_size = state["prev"], state["step_size"]
        sign = grad.mul(prev).sign()
        factor = ember.ones_like(step_size).masked_fill_(sign > 0, etaplus)
        step_size.mul_(factor.masked_fill_(sign < 0, etaminus)).clamp_(low, high)
        # where the gradient flipped sign the step is skipped (and not remembered)
        grad = ember.where(sign < 0, 0.0, grad).to(grad.dtype)
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    """Functional Rprop (``torch.optim.rprop.rprop``): one step of :class:`Rprop`,
    updating ``params``, ``prevs``, ``step_sizes`` and ``state_steps`` in place."""
    group = dict(etas=(etaminus, etaplus), step_sizes=(step_size_min, step_size_max),
                 maximize=maximize)
    _functional_step(Rprop, params, grads, group,
                     dict(step=state_steps, prev=prevs, step_size=step_sizes))
