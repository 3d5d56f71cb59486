"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from ember.core._tensor import _fused_sgd

import ember

from .optimizer import Optimizer, _check_lr, _check_nonneg, _functional_step, _to_scalar

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """SGD: PyTorch's ``torch.optim.SGD``.

    Args:
        params: parameters or parameter groups.
        lr (float or Tensor): learning rate (default 1e-3).
        momentum (float): momentum factor (default 0).
        dampening (float): dampening for momentum (default 0).
        weight_decay (float): L2 penalty added to the gradient (default 0).
        nesterov (bool): Nesterov momentum (needs momentum > 0 and zero dampening).
        maximize (bool): maximize the objective instead of minimizing it.
        foreach, fused (bool or None): accepted for compatibility; every setting runs the
            backend's fused step when it has one (abi.h's ``sgd``: one pass per parameter,
            the per-tensor ops' bits), else the per-tensor update.
        differentiable (bool): run ``step`` with grad mode on, as in PyTorch.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        # torch's SGD tests ``x < 0``, which a NaN passes
        _check_lr(lr, nan_ok=True)
        _check_nonneg(momentum, "momentum value", nan_ok=True)
        _check_nonneg(weight_decay, "weight_decay value", nan_ok=True)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        ember._check_value(not nesterov or (momentum > 0 and dampening == 0),
                           "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    # group keys an older state_dict may lack (Optimizer.__setstate__ fills them)
    _GROUP_DEFAULTS = dict(nesterov=False, maximize=False, foreach=None, differentiable=False,
                           fused=False)
    _REAL_VIEWS = False         # linear in the gradient: complex tensors update as they are

    def _init_state(self, p, group):
        # a momentum buffer only (made from the first gradient), as torch: no step count
        return {} if group["momentum"] != 0 else None

    def _update_group(self, group):
        if not self._fused_update(group):
            super()._update_group(group)

    def _fused_update(self, group):
        """The group's parameters in the backend's fused step (abi.h's ``sgd``): those with
        a momentum buffer in one call, those making theirs (it starts as the gradient) in
        another; a parameter the kernel does not take gets the per-tensor update.  False:
        do the whole group per tensor."""
        if group["differentiable"] or isinstance(group["lr"], ember.Tensor):
            return False            # a tensor lr: the ops round its arithmetic in its dtype
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return True
        momentum = float(_to_scalar(group["momentum"]))
        # contiguous operands: a gradient through a transposed view (a linear layer's
        # weight) is made so
        grads = [p.grad if p.grad.is_contiguous() else p.grad.contiguous() for p in params]
        hyper = (float(_to_scalar(group["lr"])), momentum, float(group["dampening"]),
                 float(group["weight_decay"]), bool(group["nesterov"]),
                 bool(group["maximize"]))
        if momentum == 0:
            return _fused_sgd(params, grads, [None] * len(params), *hyper, False)
        states = [self._state(p, group) for p in params]
        left = []
        for first in (False, True):
            idx = [i for i, s in enumerate(states) if (s.get("momentum_buffer") is None) == first]
            if not idx:
                continue
            bufs = [ember.empty_like(params[i], memory_format=ember.contiguous_format) if first
                    else states[i]["momentum_buffer"] for i in idx]
            if _fused_sgd([params[i] for i in idx], [grads[i] for i in idx], bufs, *hyper,
                          first):
                for i, b in zip(idx, bufs):
                    states[i]["momentum_buffer"] = b
            else:
                left += [params[i] for i in idx]
        self._walk(group, left, [p.grad for p in left], [self._state(p, group) for p in left])
        return True

    def _update(self, p, grad, state, group):
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-_to_scalar(group["lr"]))


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize):
    """Functional SGD (``torch.optim.sgd.sgd``): one step of :class:`SGD` on ``params``
    from the gradients ``d_p_list``; a None entry of ``momentum_buffer_list`` is replaced by
    the buffer the step makes (when ``momentum`` is nonzero)."""
    group = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                 nesterov=nesterov, maximize=maximize)
    _functional_step(SGD, params, d_p_list, group,
                     dict(momentum_buffer=momentum_buffer_list), grad_scale, found_inf)
