"""Stochastic weight averaging and EMA (``torch.optim.swa_utils``): AveragedModel keeps a
running average of a model's parameters, SWALR anneals to a constant SWA learning rate and
update_bn recomputes BatchNorm statistics for the averaged weights."""
import copy
import itertools
import math

import ember

from .lr_scheduler import LRScheduler, _per_group, _warn_get_lr

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """``update(averaged_params, current_params, num_averaged)``: in place, averaged =
    decay * averaged + (1 - decay) * current for every pair."""
    _check_decay(decay)

    def ema_update(averaged_param_list, current_param_list, num_averaged):
        with ember.no_grad():
            for avg, cur in zip(averaged_param_list, current_param_list):
                if avg.is_floating_point() or avg.is_complex():
                    avg.lerp_(cur, 1 - decay)
                else:
                    avg.copy_(avg * decay + cur * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """``update(averaged_params, current_params, num_averaged)``: the running mean, in
    place, of ``num_averaged + 1`` values."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with ember.no_grad():
            n = num_averaged.item() if isinstance(num_averaged, ember.Tensor) else num_averaged
            for avg, cur in zip(averaged_param_list, current_param_list):
                if avg.is_floating_point() or avg.is_complex():
                    avg.lerp_(cur, 1 / (n + 1))
                else:
                    avg.copy_(avg + (cur - avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``avg(averaged, current, num_averaged)``: decay * averaged + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with ember.no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg(averaged, current, num_averaged)``: the running mean of num_averaged + 1."""
    def swa_update(averaged_param, current_param, num_averaged):
        with ember.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(ember.nn.Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) hold the
    average of the values ``update_parameters(model)`` saw: ``AveragedModel(model,
    device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False)``; the default average
    is the equal-weight (SWA) one."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.long, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        with ember.no_grad():
            for a, m in zip(mine, theirs):
                m = m.detach().to(a.device)
                averaged.append(a.detach())
                current.append(m)
                if first:
                    a.detach().copy_(m)
            if not first:
                n = self.n_averaged
                if self.avg_fn is None:
                    (self.multi_avg_fn or get_swa_multi_avg_fn())(averaged, current, n)
                else:
                    for a, m in zip(averaged, current):
                        a.copy_(self.avg_fn(a, m, n.to(a.device)))
            if not self.use_buffers:
                # buffers follow the model (update_bn recomputes BatchNorm's statistics)
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the running statistics of every BatchNorm in ``model`` with one pass over
    ``loader`` (cumulative averages, momentum None), as after averaging the weights."""
    from ember.nn.modules.batchnorm import _BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal every group's lr to ``swa_lr`` over ``anneal_epochs`` epochs ('cos' or
    'linear'), then hold it: ``SWALR(optimizer, swa_lr, anneal_epochs=10,
    anneal_strategy='cos', last_epoch=-1)``."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t):
        """The fraction of the way to swa_lr at time fraction ``t``."""
        return t if self._anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        _warn_get_lr(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev)]
