"""ConstantLR, MultiplicativeLR and CyclicLR; they report ``ember.optim.lr_scheduler`` as
their module (PyTorch's path) and lr_scheduler.py re-exports them."""
import math
import types

import ember

from .lr_scheduler import (
    LRScheduler,
    _check_optimizer,
    _cycled_momenta,
    _LambdasLR,
    _per_group,
    _set_group_value,
    _set_momentum,
    _warn_get_lr,
)

__all__ = ["ConstantLR", "CyclicLR", "MultiplicativeLR"]


class ConstantLR(LRScheduler):
    """Multiply the lr by ``factor`` until epoch ``total_iters``, then restore it:
    ``ConstantLR(optimizer, factor=1/3, total_iters=5, last_epoch=-1)``."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        ember._check_value(0 <= factor <= 1.0, "Constant multiplicative factor expected to be "
                           "between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr(self)
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._unchanged()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class MultiplicativeLR(_LambdasLR):
    """Multiply the lr by ``lr_lambda(epoch)`` every epoch (one function, or one per group):
    ``MultiplicativeLR(optimizer, lr_lambda, last_epoch=-1)``."""

    def _check_lambdas(self):
        for fn in self.lr_lambdas:
            ember._check_type(callable(fn), lambda: f"lr_lambda should be a function, but got "
                              f"{type(fn).__name__}")

    def get_lr(self):
        _warn_get_lr(self)
        # only the constructor's step leaves the lr alone: a later step(0), or SequentialLR
        # restarting this scheduler at its milestone, multiplies by lr_lambda(0)
        if not self._is_initial:
            return [g["lr"] * fn(self.last_epoch)
                    for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]
        return self._unchanged()


class CyclicLR(LRScheduler):
    """Cycle the lr between ``base_lr`` and ``max_lr`` (Smith, 2017), stepped every batch:
    ``CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
    mode='triangular', gamma=1.0, scale_fn=None, scale_mode='cycle', cycle_momentum=True,
    base_momentum=0.8, max_momentum=0.9, last_epoch=-1)``; momentum (or Adam's beta1)
    cycles the other way."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        ember._check_value(mode in ("triangular", "triangular2", "exp_range")
                           or scale_fn is not None, "mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _cycled_momenta(
                optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude scaling at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return self._triangular_scale_fn(x)
        if self.mode == "triangular2":
            return self._triangular2_scale_fn(x)
        return self._exp_range_scale_fn(self.gamma, x)

    @staticmethod
    def _triangular_scale_fn(x):
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x):
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma, x):
        return gamma ** x

    def get_lr(self):
        _warn_get_lr(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else \
            (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (high - base) * factor * scale
               for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for low, high, group in zip(self.base_momentums, self.max_momentums,
                                        self.optimizer.param_groups):
                _set_momentum(group, high - (high - low) * factor * scale, self.use_beta1)
        return lrs

    def state_dict(self):
        """Attributes but the optimizer; a custom scale_fn object saves its ``__dict__``."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(
            fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Restore ``state_dict()``'s attributes (and a scale_fn object's ``__dict__``)."""
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        custom = self._scale_fn_custom
        super().load_state_dict(state_dict)
        self._scale_fn_custom = custom
        if fn is not None:
            custom.__dict__.update(fn)
        self._init_scale_fn()


for _name in __all__:
    globals()[_name].__module__ = "ember.optim.lr_scheduler"
