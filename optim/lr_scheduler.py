"""Learning-rate schedulers: PyTorch's ``torch.optim.lr_scheduler``.

Each scheduler's ``get_lr`` uses PyTorch's recursive (chainable) form, which updates the
current ``group["lr"]``, so sequences match torch's step for step, including when several
schedulers drive one optimizer."""
import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

import ember

from .optimizer import Optimizer

__all__ = ["ChainedScheduler", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "OneCycleLR",
           "PolynomialLR", "ReduceLROnPlateau", "SequentialLR", "StepLR"]

_EPOCH_DEPRECATION = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


def _group_values(optimizer, key):
    """``group[key]`` of every group; tensors are copied so they never alias the group's."""
    return [g[key].clone() if isinstance(g[key], ember.Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group, key, value):
    """Set ``group[key]``, filling a tensor-valued entry in place instead of rebinding it."""
    if isinstance(group[key], ember.Tensor):
        group[key].fill_(value.item() if isinstance(value, ember.Tensor) else value)
    else:
        group[key] = value


def _warn_get_lr(scheduler):
    """torch's warning for a built-in scheduler's get_lr called outside ``step``."""
    if not getattr(scheduler, "_get_lr_called_within_step", False):
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)


def _check_optimizer(optimizer):
    ember._check_type(isinstance(optimizer, Optimizer),
                      lambda: f"{type(optimizer).__name__} is not an Optimizer")


def _track_step_calls(optimizer):
    """Wrap ``optimizer.step`` (on the instance, once) so that it records a call in
    ``optimizer._opt_called``: the order warning only counts steps taken since a scheduler
    was built, and notices a ``step`` the user replaced afterwards.  The wrapper holds the
    optimizer weakly, so it makes no reference cycle."""
    step = optimizer.step
    if hasattr(step, "_wrapped_by_lr_sched"):
        return
    func = getattr(step, "__func__", None)
    opt_ref = weakref.ref(optimizer)

    @functools.wraps(func or step)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return (func.__get__(opt, type(opt)) if func is not None else step)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """Base class of the schedulers: PyTorch's ``torch.optim.lr_scheduler.LRScheduler``.

    Args:
        optimizer (Optimizer): the optimizer whose groups' ``lr`` it sets.
        last_epoch (int): index of the last epoch; -1 (default) starts a schedule and
            records ``initial_lr`` in every group, other values resume one.
    """

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, ember.Tensor)
                                 else lr)
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                               "when resuming scheduler with last_epoch >= 0.\nThis typically "
                               "happens when:\n1. You're trying to resume training from a "
                               "checkpoint but haven't properly loaded the optimizer state\n"
                               "2. You're using last_epoch >= 0 for a fresh training run "
                               "(not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_calls(optimizer)
        self._initial_step()

    def _initial_step(self):
        """Reset the step count and take the step that sets the schedule's first lr."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore the attributes ``state_dict()`` returned."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last ``step`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self):
        """The next learning rate of every group (subclasses implement it)."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance the schedule by one epoch (call it after ``optimizer.step()``) and write
        the new learning rates into the optimizer's groups."""
        if self._step_count == 1 and not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
            warnings.warn(
                "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                "initialization. Please, make sure to call `optimizer.step()` before "
                "`lr_scheduler.step()`. See more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning, stacklevel=2)
        elif self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                "1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                "result in PyTorch skipping the first value of the learning rate schedule. "
                "See more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True      # silences get_lr's warning
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def _unchanged(self):
        return _group_values(self.optimizer, "lr")

    def _scaled(self, factor):
        return [g["lr"] * factor for g in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """The deprecated name of LRScheduler (a subclass, as in PyTorch)."""


class _LambdasLR(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of the epoch per parameter group (one
    given for all, or a list); functions that are objects save their ``__dict__``."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            ember._check_value(len(lr_lambda) == n,
                               lambda: f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        self._check_lambdas()
        super().__init__(optimizer, last_epoch)

    def _check_lambdas(self):
        """What a subclass requires of ``self.lr_lambdas`` (LambdaLR: nothing)."""

    def state_dict(self):
        """Attributes but the optimizer; lambdas that are objects save their ``__dict__``."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else
                               fn.__dict__.copy() for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Restore ``state_dict()``'s attributes (and callable objects' ``__dict__``)."""
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdasLR):
    """lr = initial_lr * lr_lambda(epoch); ``lr_lambda`` is a function or one per group:
    ``LambdaLR(optimizer, lr_lambda, last_epoch=-1)``."""

    def get_lr(self):
        _warn_get_lr(self)
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._unchanged()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch listed in ``milestones``."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        if self.last_epoch not in self.milestones:
            return self._unchanged()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        ember._check_value(0 < start_factor <= 1.0, "Starting multiplicative factor expected "
                           "to be greater than 0 and less or equal to 1.")
        ember._check_value(0 <= end_factor <= 1.0,
                           "Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._unchanged()
        span = self.end_factor - self.start_factor
        return self._scaled(1.0 + span / (self.total_iters * self.start_factor
                                          + (self.last_epoch - 1) * span))

    def _get_closed_form_lr(self):
        span = self.end_factor - self.start_factor
        return [base * (self.start_factor
                        + span * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        return self._unchanged() if self._is_initial else self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_max`` epochs (SGDR
    without restarts), in PyTorch's recursive form."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._unchanged()
        if self._step_count == 1 and e > 0:
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


def _check_children(name, what, optimizer, schedulers):
    """torch's checks on the schedulers a SequentialLR/ChainedScheduler drives: at least
    one, none a ReduceLROnPlateau, all on ``optimizer``."""
    ember._check_value(len(schedulers) >= 1, lambda: (
        f"{name} expects at least one scheduler{what}, but got no scheduler."))
    for i, s in enumerate(schedulers):
        ember._check_type(hasattr(s, "optimizer"), lambda: (
            f"{name} at index {i} should have `optimizer` as its attribute."))
        ember._check_value(not isinstance(s, ReduceLROnPlateau), lambda: (
            f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
            "additional kwargs to be specified when calling `step`, but got one at index "
            f"{i} in the given schedulers sequence."))
        ember._check_value(optimizer == s.optimizer, lambda: (
            f"{name} expects all schedulers to belong to the same optimizer, but got "
            f"scheduler {type(s).__name__} at index {i} has {s.optimizer}, which is "
            f"different from {type(optimizer).__name__}."))


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at each of ``milestones``."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_children(type(self).__name__, "", optimizer, schedulers)
        ember._check_value(len(milestones) == len(schedulers) - 1, lambda: (
            "Sequential Schedulers expects number of schedulers provided to be one more than "
            f"the number of milestone points, but got number of schedulers {len(schedulers)} "
            f"and the number of milestones to be equal to {len(milestones)}"))
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()       # the children's constructors each took a step
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None):
        """Take back the step each scheduler under ``sched`` (default: this one) took when
        it was built: ``last_epoch`` goes back by one, through nested ``_schedulers``."""
        sched = self if sched is None else sched
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self.recursive_undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self):
        """Step the scheduler in charge of this epoch (restarting one at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """Attributes but the optimizer, with each child's own state dict."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Restore ``state_dict()``'s attributes and every child's state."""
        state_dict = dict(state_dict)
        children = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, saved in zip(self._schedulers, children):
            s.load_state_dict(saved)


def _per_group(name, optimizer, value):
    """``value`` as one entry per parameter group (copied when a tensor)."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        ember._check_value(len(value) == n, lambda: (
            f"{name} must have the same length as optimizer.param_groups. {name} has "
            f"{len(value)} values, param_groups has {n}."))
    else:
        value = [value] * n
    return [v.clone() if isinstance(v, ember.Tensor) else v for v in value]


def _set_momentum(group, value, use_beta1):
    """A group's momentum: betas[0] for Adam-like optimizers, else momentum."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _cycled_momenta(optimizer, base_momentum, max_momentum, last_epoch):
    """CyclicLR's and OneCycleLR's ``cycle_momentum`` set-up: (use_beta1, per-group base
    momenta, per-group max momenta); a fresh schedule starts each group at its max."""
    ember._check_value("momentum" in optimizer.defaults or "betas" in optimizer.defaults,
                       "optimizer must support momentum or beta1 with `cycle_momentum` option "
                       "enabled")
    use_beta1 = "betas" in optimizer.defaults
    lows = _per_group("base_momentum", optimizer, base_momentum)
    highs = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for hi, lo, group in zip(highs, lows, optimizer.param_groups):
            _set_momentum(group, hi, use_beta1)
            group["max_momentum"], group["base_momentum"] = hi, lo
    return use_beta1, lows, highs


_PHASE_KEYS = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the lr rises from ``max_lr / div_factor`` to
    ``max_lr`` over ``pct_start`` of the steps and anneals to ``initial_lr /
    final_div_factor``; momentum (or Adam's beta1) cycles the other way when
    ``cycle_momentum``. Step it after every batch."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            ember._check_value(isinstance(total_steps, int) and total_steps > 0, lambda: (
                f"Expected positive integer total_steps, but got {total_steps}"))
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            ember._check_value(isinstance(epochs, int) and epochs > 0,
                               lambda: f"Expected positive integer epochs, but got {epochs}")
            ember._check_value(isinstance(steps_per_epoch, int) and steps_per_epoch > 0,
                               lambda: "Expected positive integer steps_per_epoch, but got "
                               f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        last = self.total_steps - 1
        up = float(pct_start * self.total_steps) - 1
        # per phase, as PyTorch's state_dict holds them (checkpoints load either way):
        # (end_step, start_lr, end_lr, start_momentum, end_momentum)
        if three_phase:
            phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                      (last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (last, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self._schedule_phases = [dict(zip(_PHASE_KEYS, p)) for p in phases]
        ember._check_value(isinstance(pct_start, float) and 0 <= pct_start <= 1, lambda: (
            f"Expected float between 0 and 1 pct_start, but got {pct_start}"))
        ember._check_value(anneal_strategy in ("cos", "linear"), lambda: (
            "anneal_strategy must be one of 'cos' or 'linear', instead got "
            f"{anneal_strategy}"))
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _cycled_momenta(optimizer, base_momentum, max_momentum,
                                             last_epoch)[0]
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        """The value ``pct`` of the way from ``start`` to ``end`` under the anneal
        strategy (an object saved before ``_anneal_func_type`` existed keeps its own
        ``anneal_func``)."""
        kind = getattr(self, "_anneal_func_type", None)
        if kind == "cos":
            return self._annealing_cos(start, end, pct)
        if kind == "linear":
            return self._annealing_linear(start, end, pct)
        if kind is None:
            return self.anneal_func(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {kind}")

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine annealing from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Linear annealing from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def get_lr(self):
        _warn_get_lr(self)
        step = self.last_epoch
        ember._check_value(step <= self.total_steps, lambda: (
            f"Tried to step {step} times. The specified number of total steps is "
            f"{self.total_steps}"))
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end, lr0, lr1, m0, m1 = (phase[k] for k in _PHASE_KEYS)
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal_func(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self._anneal_func(group[m0], group[m1], pct),
                                      self.use_beta1)
                    break
                start = end
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once ``metrics`` (passed to ``step``) has not improved
    for ``patience`` epochs; ``mode`` "min"/"max", ``threshold_mode`` "rel"/"abs"."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        ember._check_value(factor < 1.0, "Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            ember._check_value(len(min_lr) == n,
                               lambda: f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        """Record this epoch's ``metrics`` and reduce the lr after ``patience`` bad epochs."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self):
        n = len(self.optimizer.param_groups)
        if n != len(self.min_lrs):
            ember._check(self.default_min_lr is not None, lambda: (
                f"The number of param groups in the `optimizer` ({n}) differs from when "
                f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a "
                "new param group being added to the optimizer. Please modify the `min_lrs` "
                "field to match the length of the `optimizer` param groups."))
            self.min_lrs = [self.default_min_lr] * n
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_group_value(group, "lr", new)

    def _is_better(self, a, best):
        if self.threshold_mode == "rel":
            scale = 1.0 - self.threshold if self.mode == "min" else 1.0 + self.threshold
            return a < best * scale if self.mode == "min" else a > best * scale
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        ember._check_value(mode in ("min", "max"), lambda: f"mode {mode} is unknown!")
        ember._check_value(threshold_mode in ("rel", "abs"),
                           lambda: f"threshold mode {threshold_mode} is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restore the attributes ``state_dict()`` returned."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class PolynomialLR(LRScheduler):
    """Decay the lr by ``(1 - epoch / total_iters) ** power`` until ``total_iters``."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        e, n = self.last_epoch, self.total_iters
        if self._is_initial or e > n:
            return self._unchanged()
        return self._scaled(((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power)

    def _get_closed_form_lr(self):
        n = self.total_iters
        return [base * (1.0 - min(n, self.last_epoch) / n) ** self.power
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): cosine annealing from the initial lr to ``eta_min`` over
    ``T_i`` epochs, then a restart; the period starts at ``T_0`` and is multiplied by
    ``T_mult`` at each restart. ``step(epoch)`` accepts fractional epochs (step it inside
    the batch loop with ``epoch + i / iters``)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        ember._check_value(isinstance(T_0, int) and T_0 > 0,
                           lambda: f"Expected positive integer T_0, but got {T_0}")
        ember._check_value(isinstance(T_mult, int) and T_mult >= 1,
                           lambda: f"Expected integer T_mult >= 1, but got {T_mult}")
        ember._check_value(isinstance(eta_min, (float, int)), lambda: (
            f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"))
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or jump to ``epoch`` (a float is allowed) and set the lr of
        that point of its period."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            ember._check_value(epoch >= 0,
                               lambda: f"Expected non-negative epoch, but got {epoch}")
            if epoch < self.T_0:
                self.T_i, self.T_cur = self.T_0, epoch
            elif self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                # the restart index n: T_0 * (1 + m + ... + m**(n-1)) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class ChainedScheduler(LRScheduler):
    """Step every scheduler of ``schedulers`` at each ``step`` (their factors compose);
    ``optimizer`` defaults to the first scheduler's."""

    def __init__(self, schedulers, optimizer=None):
        if optimizer is None and schedulers:
            optimizer = schedulers[0].optimizer
        _check_children(type(self).__name__, " to be chained", optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self):
        """Step each scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict

# ConstantLR, MultiplicativeLR and CyclicLR live in _lr_factor_cyclic.py (which imports this
# module) and report this one as theirs
EPOCH_DEPRECATION_WARNING = _EPOCH_DEPRECATION
inf = math.inf
from ._lr_factor_cyclic import ConstantLR, CyclicLR, MultiplicativeLR  # noqa: E402

__all__ += ["ConstantLR", "CyclicLR", "MultiplicativeLR"]
