"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), PyTorch's single-tensor algorithm."""
from ember.core._tensor import _fused_adam

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

__all__ = ["Adam", "adam"]


def _check_tensor_for_foreach(value, name, foreach, capturable):
    """torch's refusal of a tensor ``value`` with ``foreach=True`` and
    ``capturable=False`` (ValueError); True when ``value`` is a tensor."""
    if not isinstance(value, ember.Tensor):
        return False
    ember._check_value(capturable or not foreach, lambda: (
        f"{name} as a Tensor is not supported for capturable=False and foreach=True"))
    return True


class Adam(Optimizer):
    """Adam: PyTorch's ``torch.optim.Adam``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-3).
        betas (tuple of two floats): decay rates of the running averages of the gradient and
            of its square (default (0.9, 0.999)).
        eps (float): added to the denominator (default 1e-8).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        amsgrad (bool): use the maximum of past squared-gradient averages (default False).
        foreach, fused (bool or None): accepted for compatibility; every setting runs the
            same per-tensor update (ember has no multi-tensor kernels yet).
        maximize (bool): maximize the objective instead of minimizing it.
        capturable, differentiable (bool): accepted; ``differentiable=True`` runs ``step``
            with grad mode on, and ``capturable=True`` refuses parameters on the CPU at
            ``step``, as in PyTorch.
        decoupled_weight_decay (bool): apply weight decay to the parameter (AdamW).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        # torch's multi-tensor step cannot take tensor hyperparameters unless capturable
        _check_tensor_for_foreach(lr, "lr", foreach, capturable)
        _check_lr(lr)
        _check_nonneg(eps, "epsilon value")
        for i in (0, 1):
            ember._check_value(0.0 <= betas[i] < 1.0,
                               lambda: f"Invalid beta parameter at index {i}: {betas[i]}")
        _check_nonneg(weight_decay, "weight_decay value")
        tensors = [isinstance(b, ember.Tensor) for b in betas]
        ember._check_value(all(tensors) or all(isinstance(b, float) for b in betas),
                           "betas must be either both floats or both Tensors")
        for i in (0, 1):
            if _check_tensor_for_foreach(betas[i], f"betas[{i}]", foreach, capturable):
                ember._check_value(betas[i].numel() == 1,
                                   lambda: f"Tensor betas[{i}] must be 1-element")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                           differentiable=False, fused=None, decoupled_weight_decay=False)

    def _init_state(self, p, group):
        state = dict(step=_step_tensor(), exp_avg=ember.zeros_like(p),
                     exp_avg_sq=ember.zeros_like(p))
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = ember.zeros_like(p)
        return state

    def _update_group(self, group):
        if not self._fused_update(group):
            super()._update_group(group)

    def _update(self, p, grad, state, group):
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        lr = group["lr"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        step = state["step"].item()
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        step_size = _to_scalar(lr / (1 - beta1 ** step))
        if group["amsgrad"]:
            ember.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            exp_avg_sq = state["max_exp_avg_sq"]
        denom = exp_avg_sq.sqrt().div_(bias_correction2_sqrt).add_(group["eps"])
        addcdiv_(p, exp_avg, denom, -step_size)

    def _fused_update(self, group):
        """The whole group in one call of the backend's fused step (abi.h's ``adam``), when
        it has one and every parameter is at the same step: False means "do it per tensor".
        The arithmetic is the per-tensor loop's, element for element (maximize and weight
        decay included, so the kernel takes the raw gradients)."""
        if (group["differentiable"] or group["capturable"]
                or isinstance(group["lr"], ember.Tensor)):
            # a tensor lr: the per-tensor ops round lr's arithmetic in its dtype;
            # capturable: the per-tensor walk checks the devices
            return False
        params = [p for p in group["params"] if p.grad is not None]
        states = [self._state(p, group) for p in params]
        if not params or len({float(s["step"]) for s in states}) != 1:
            return not params
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        lr = _to_scalar(group["lr"])
        step = float(states[0]["step"]) + 1
        # the fused step takes contiguous operands; a gradient that came back through a
        # transposed view (a linear layer's weight) is made so
        grads = [p.grad if p.grad.is_contiguous() else p.grad.contiguous() for p in params]
        done = _fused_adam(
            params, grads, [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [s.get("max_exp_avg_sq") for s in states], float(lr), float(beta1), float(beta2),
            float(group["eps"]), float(group["weight_decay"]), lr / (1 - beta1 ** step),
            (1 - beta2 ** step) ** 0.5, bool(group["decoupled_weight_decay"]),
            bool(group["amsgrad"]), bool(group["maximize"]))
        if done:
            for s in states:
                s["step"] += 1
        return done


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    """Functional Adam (``torch.optim.adam.adam``): one step of :class:`Adam` on
    ``params``, updating them, the moment lists and the ``state_steps`` tensors in place
    (``max_exp_avg_sqs`` is used with ``amsgrad``).  ``foreach``, ``fused``,
    ``capturable``, ``differentiable`` and ``has_complex`` are accepted; one per-tensor
    update serves them all."""
    group = dict(lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                 amsgrad=amsgrad, maximize=maximize,
                 decoupled_weight_decay=decoupled_weight_decay)
    _functional_step(Adam, params, grads, group,
                     dict(step=state_steps, exp_avg=exp_avgs, exp_avg_sq=exp_avg_sqs,
                          max_exp_avg_sq=max_exp_avg_sqs), grad_scale, found_inf)


def __getattr__(name):
    # AdamW lives in adamw.py (PyTorch's module); the old import path keeps working
    if name == "AdamW":
        from .adamw import AdamW
        return AdamW
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
