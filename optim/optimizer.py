"""Optimizer: the base class that walks parameter groups, keeps per-parameter state and
(de)serialises it with PyTorch's ``state_dict`` layout.  Subclasses write ``_init_state``
and ``_update`` (or, as LBFGS, ``step``)."""
import copy
import functools
import warnings
from collections import OrderedDict, defaultdict

from ember.core.hooks import RemovableHandle

import ember

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a default that every parameter group must give."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _to_scalar(x):
    """A Python number from a hyperparameter that may be a 1-element tensor."""
    return x.item() if isinstance(x, ember.Tensor) else x


def _step_tensor():
    """A fresh ``state['step']``: a CPU scalar tensor of the default float dtype, as torch."""
    dtype = ember.float64 if ember.get_default_dtype() == ember.float64 else ember.float32
    return ember.tensor(0.0, dtype=dtype)


def _check_lr(lr):
    """torch's checks on ``lr``: a 1-element tensor or a non-negative number."""
    if isinstance(lr, ember.Tensor):
        ember._check_value(lr.numel() == 1, "Tensor lr must be 1-element")
    ember._check_value(not lr < 0.0, lambda: f"Invalid learning rate: {lr}")


def _check_nonneg(value, what):
    """``Invalid {what}: {value}`` (ValueError) unless ``value >= 0``, as torch words it."""
    ember._check_value(not value < 0.0, lambda: f"Invalid {what}: {value}")


def _check_fused_foreach(fused, foreach, differentiable):
    ember._check(not (fused and differentiable), "`fused` does not support `differentiable`")
    ember._check(not (fused and foreach), "`fused` and `foreach` cannot be `True` together.")


def _run_step_with_hooks(step):
    """Wrap a class's ``step`` so that step pre/post hooks run around it (once per call,
    even when a subclass's ``step`` calls ``super().step()``)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if getattr(self, "_in_step", False):
            return step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                ember._check(isinstance(result, tuple) and len(result) == 2, lambda: (
                    "optimizer step pre hook must return None or a tuple of (new_args, "
                    f"new_kwargs), but got {result}."))
                args, kwargs = result
        self._opt_called = True          # read by lr_scheduler's order warning
        self._in_step = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            self._in_step = False
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


def _register(hooks, hook, prepend):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class Optimizer:
    """Base class of all optimizers: PyTorch's ``torch.optim.Optimizer``.

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
            groups, each with a ``"params"`` entry and optional per-group options).
        defaults (dict): the option values a group takes when it does not give its own.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _run_step_with_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        ember._check_type(not isinstance(params, ember.Tensor), lambda: (
            "params argument given to the optimizer should be an iterable of Tensors or "
            f"dicts, but got {ember.typename(params)}"))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        ember._check_value(len(param_groups) != 0, "optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        _check_fused_foreach(defaults.get("fused"), defaults.get("foreach"),
                             defaults.get("differentiable"))

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    _GROUP_DEFAULTS = {}        # keys (with defaults) a subclass's param groups always hold

    def __setstate__(self, state):
        self.__dict__.update(state)
        for group in self.__dict__.get("param_groups", ()):
            for key, default in self._GROUP_DEFAULTS.items():
                group.setdefault(key, default)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group):
        """Add a parameter group (a dict with ``"params"`` and optional options) to
        ``param_groups``; options it leaves out take the optimizer's defaults."""
        ember._check_type(isinstance(param_group, dict), lambda: (
            f"param_group must be a dict, but got {type(param_group)}"))
        params = param_group["params"]
        if isinstance(params, ember.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            ember._check_value(len(names) == len(params), "all optimizer params should be "
                               "with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in params:
            ember._check_type(isinstance(p, ember.Tensor), lambda: (
                "optimizer can only optimize Tensors, but one of the params is "
                + ember.typename(p)))
            ember._check_value(self.defaults.get("differentiable", None) or p.is_leaf
                               or p.retains_grad, "can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            ember._check_value(default is not required or name in param_group, lambda: (
                "parameter group didn't specify a value of required optimization parameter "
                f"{name}"))
            param_group.setdefault(name, default)
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        ember._check_value(seen.isdisjoint(params),
                           "some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the ``.grad`` of every parameter: to ``None`` (``set_to_none=True``, the
        default) or to zeros, detached from any graph."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Perform one optimization step (``_update_group`` on every group);
        ``closure`` re-evaluates the model and returns the loss."""
        loss = self._closure_loss(closure)
        with ember.set_grad_enabled(self.defaults.get("differentiable", False)):
            for group in self.param_groups:
                self._update_group(group)
        return loss

    # -- the parameter walk ----------------------------------------------------------------
    # A subclass states only its update: ``_init_state`` (a parameter's first state) and
    # ``_update`` (one parameter's step).  The walk skips parameters without a gradient,
    # negates the gradient under ``maximize``, applies weight decay (L2 into the gradient,
    # or, when the group's ``decoupled_weight_decay`` is set, the parameter scaled by
    # ``1 - lr * weight_decay``), makes the state on first use and counts its ``step``
    # before the update.  A subclass that takes a group at once (Adam's fused kernel)
    # overrides ``_update_group`` and calls the base's for what it leaves.

    def _update_group(self, group):
        """Step every parameter of ``group`` that has a gradient."""
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._state(p, group)
            if state is not None and "step" in state:
                state["step"] += 1
            self._update(p, self._grad(p, group), state, group)

    def _state(self, p, group):
        """``p``'s state, made by ``_init_state`` when it has none yet (None when the
        optimizer keeps none for it)."""
        state = self.state.get(p)
        if not state:
            state = self._init_state(p, group)
            if state is not None:
                self.state[p] = state
        return state

    def _grad(self, p, group):
        """``p``'s gradient as the update uses it: negated under ``maximize``, with weight
        decay applied (decoupled decay scales ``p`` itself)."""
        grad = -p.grad if group["maximize"] else p.grad
        wd = group.get("weight_decay", 0)
        if wd != 0:
            if group.get("decoupled_weight_decay", False):
                p.mul_(_to_scalar(1 - group["lr"] * wd))
            else:
                grad = grad.add(p, alpha=_to_scalar(wd))
        return grad

    def _init_state(self, p, group):
        """The state ``p`` starts with (a dict; a ``step`` entry is counted by the walk), or
        None to keep none."""
        return None

    def _update(self, p, grad, state, group):
        """Update ``p`` in place from ``grad`` (already negated and decayed) and ``state``."""
        raise NotImplementedError(f"{type(self).__name__} defines neither step nor _update")

    def _closure_loss(self, closure):
        """The loss ``closure()`` returns, computed with grad mode on (step runs without)."""
        if closure is None:
            return None
        with ember.enable_grad():
            return closure()

    # -- hooks -----------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` runs before
        each ``step``; returns a handle whose ``remove()`` unregisters it."""
        return _register(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        return _register(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs before ``state_dict`` builds its result."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None or state_dict`` runs on its result."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None or state_dict`` runs before loading."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs after loading."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- serialisation ---------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state as ``{"state": {index: {...}}, "param_groups": [...]}``:
        parameters are replaced by their position over all groups (the tensors themselves
        are not saved), as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, ember.Tensor) else k): v
                 for k, v in self.state.items()}
        result = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            out = hook(self, result)
            if out is not None:
                result = out
        return result

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()`` result: group options are replaced, state is copied and
        cast to each parameter's dtype and device (``step`` keeps its own dtype)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            out = hook(self, state_dict)
            if out is not None:
                state_dict = out
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        ember._check_value(len(groups) == len(saved_groups),
                           "loaded state dict has a different number of parameter groups")
        ember._check_value(
            all(len(g["params"]) == len(s["params"]) for g, s in zip(groups, saved_groups)),
            "loaded state dict contains a parameter group that doesn't match the size of "
            "optimizer's group")
        id_map = {i: p for g, s in zip(groups, saved_groups)
                  for i, p in zip(s["params"], g["params"])}
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast_state(id_map[k], v)
            else:
                state[k] = copy.deepcopy(v)
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


Optimizer.step = _run_step_with_hooks(Optimizer.step)    # subclasses that inherit it too


def _cast_state(param, value, key=None):
    """A deep copy of one parameter's saved state; tensors move to the parameter's device
    and, when floating point, to its dtype — except ``step``, which keeps its dtype."""
    if isinstance(value, ember.Tensor):
        if key == "step":
            return value.detach().clone()
        dtype = param.dtype if param.is_floating_point() else value.dtype
        if value.dtype == dtype and value.device == param.device:
            return value.detach().clone()
        return value.detach().to(dtype=dtype, device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return copy.deepcopy(value)
