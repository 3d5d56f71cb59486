"""Adafactor (Shazeer & Stern, 2018), PyTorch's ``torch.optim.Adafactor``: the second moment
of a matrix kept as row and column factors, relative step sizes."""
import ember

from .optimizer import Optimizer, _functional_step, _step_tensor, _to_scalar

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor: PyTorch's ``torch.optim.Adafactor``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): the step size cap rho (default 1e-2).
        beta2_decay (float): the second-moment decay exponent, <= 0 (default -0.8).
        eps (tuple): (eps1, eps2): eps1 keeps the second moment positive (None: the
            dtype's machine epsilon), eps2 floors the parameter scale (default (None, 1e-3)).
        d (float): the clipping threshold on the update's RMS, >= 1 (default 1.0).
        weight_decay (float): decoupled weight decay (default 0.0).
        foreach: accepted; one per-tensor update serves all.
        maximize (bool): maximize the objective instead of minimizing it."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, ember.Tensor):
            ember._check_value(lr.numel() == 1, "Tensor lr must be 1-element")
        ember._check_value(0.0 <= lr, lambda: f"Learning rate should be >= 0 but is: {lr}")
        ember._check_value(0.0 >= beta2_decay,
                           lambda: f"beta2_decay should be <= 0 but is: {beta2_decay}")
        ember._check_value(eps[0] is None or 0.0 <= eps[0],
                           lambda: f"epsilon1 should be >= 0 but is: {eps[0]}")
        ember._check_value(0.0 <= eps[1], lambda: f"epsilon2 should be >= 0 but is: {eps[1]}")
        ember._check_value(1.0 <= d, lambda: f"Clipping threshold d should be >= 1 but is: {d}")
        ember._check_value(0.0 <= weight_decay,
                           lambda: f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    __module__ = "ember.optim"          # PyTorch's (torch.optim.Adafactor)
    _GROUP_DEFAULTS = dict(foreach=None, maximize=False)

    def _grad(self, p, grad, group):
        # weight decay here is decoupled and scaled by lr, inside the update
        return -grad if group["maximize"] else grad

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state = dict(step=_step_tensor())
        if p.grad.dim() > 1:
            row, col = list(p.grad.shape), list(p.grad.shape)
            row[-1] = 1
            col[-2] = 1
            state["row_var"] = p.grad.new_zeros(row)
            state["col_var"] = p.grad.new_zeros(col)
        else:
            state["variance"] = ember.zeros_like(p.grad)
        return state

    def _update(self, p, grad, state, group):
        lr = _to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = ember.finfo(p.dtype).eps
        step = state["step"].item()
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(ember.norm(grad, dim=-1, keepdim=True).square_().div_(
                grad.shape[-1]), one_minus_beta2)
            col_var.lerp_(ember.norm(grad, dim=-2, keepdim=True).square_().div_(
                grad.shape[-2]), one_minus_beta2)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            state["variance"].lerp_(grad * grad, one_minus_beta2)
            estimate = state["variance"].clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        p.add_(update, alpha=-alpha / denom)


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None,
              grad_scale=None, found_inf=None, has_complex=False, *, d, lr, beta2_decay,
              weight_decay, eps1, eps2, maximize):
    """Functional Adafactor (``torch.optim._adafactor.adafactor``): one step of
    :class:`Adafactor`, updating ``params`` and the state lists in place (a parameter of
    more than one dimension uses its ``row_vars``/``col_vars`` entries, others their
    ``variances`` entry; the unused ones may be None)."""
    group = dict(lr=lr, beta2_decay=beta2_decay, eps=(eps1, eps2), d=d,
                 weight_decay=weight_decay, maximize=maximize)
    _functional_step(Adafactor, params, grads, group,
                     dict(step=state_steps, row_var=row_vars, col_var=col_vars,
                          variance=variances), grad_scale, found_inf)
