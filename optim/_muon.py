"""Muon (Jordan et al.): momentum SGD whose update is orthogonalized by a Newton-Schulz
iteration, for 2-d parameters; PyTorch's ``torch.optim.Muon``."""
import math

import ember

from .optimizer import Optimizer, _to_scalar

__all__ = ["Muon"]

_ADJUST = (None, "original", "match_rms_adamw")


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix with grad's singular vectors: ``ns_steps`` steps
    of the quintic iteration X <- aX + (bA + cA^2)X, A = XX^T, in bfloat16 (as PyTorch)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    x = x.div(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = ember.addmm(gram, gram, gram, beta=b, alpha=c)
        x = ember.addmm(x, gram_update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon: PyTorch's ``torch.optim.Muon`` (2-d parameters only).

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-3).
        weight_decay (float): decoupled weight decay (default 0.1).
        momentum (float): momentum factor (default 0.95).
        nesterov (bool): Nesterov momentum (default True).
        ns_coefficients (tuple): the Newton-Schulz coefficients (a, b, c).
        eps (float): floor of the norm the update is divided by (default 1e-7).
        ns_steps (int): Newton-Schulz steps (default 5).
        adjust_lr_fn (str or None): 'original' (default) or 'match_rms_adamw' scaling of
            the learning rate by the parameter's shape."""

    __module__ = "ember.optim"          # PyTorch's (torch.optim.Muon)

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                 adjust_lr_fn=None):
        if isinstance(lr, ember.Tensor):
            ember._check_value(lr.numel() == 1, "Tensor lr must be 1-element")
        ember._check_value(0.0 <= lr, lambda: f"Learning rate should be >= 0 but is: {lr}")
        ember._check_value(0.0 <= momentum,
                           lambda: f"momentum should be >= 0 but is: {momentum}")
        ember._check_value(0.0 <= weight_decay,
                           lambda: f"weight decay should be >= 0 but is: {weight_decay}")
        ember._check_value(adjust_lr_fn in _ADJUST, lambda: f"Adjust learning rate function "
                           f"{adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                ember._check_value(p.dim() == 2, lambda: f"Muon only supports 2D parameters "
                                   f"whereas we found a parameter with size: {p.size()}")

    def _grad(self, p, grad, group):
        return grad                     # decay is decoupled, in the update

    def _init_state(self, p, group):
        if p.is_complex():
            raise ValueError("Complex parameters are not supported")
        return dict(momentum_buffer=ember.zeros_like(p.grad))

    def _update(self, p, grad, state, group):
        ember._check_value(grad.dim() == 2, "Param gradient must be a 2D matrix")
        lr, momentum = _to_scalar(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                             group["ns_steps"], group["eps"])
        adjusted = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update, alpha=-adjusted)
