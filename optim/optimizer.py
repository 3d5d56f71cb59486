"""Optimizer: the base class that walks parameter groups, keeps per-parameter state and
(de)serialises it with PyTorch's ``state_dict`` layout.  Subclasses write ``_init_state``
and ``_update`` (or, as LBFGS, ``step``)."""
import copy
import functools
import warnings
from collections import OrderedDict, defaultdict

from ember.core.hooks import RemovableHandle

import ember

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook",
           "required"]

# step hooks every optimizer runs: global pre hooks before its own, global post hooks after
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


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


def _check_lr(lr, nan_ok=False):
    """torch's checks on ``lr``: a 1-element tensor or a non-negative number (NaN refused
    unless ``nan_ok``: SGD's ``lr < 0`` test lets it through)."""
    if isinstance(lr, ember.Tensor):
        ember._check_value(lr.numel() == 1, "Tensor lr must be 1-element")
    _check_nonneg(lr, "learning rate", nan_ok)


def _check_nonneg(value, what, nan_ok=False):
    """``Invalid {what}: {value}`` (ValueError) unless ``value >= 0``, as torch words it;
    NaN fails too unless ``nan_ok``."""
    ok = not value < 0.0 if nan_ok else 0.0 <= value
    ember._check_value(ok, lambda: f"Invalid {what}: {value}")


def _check_fused_foreach(fused, foreach, differentiable):
    ember._check(not (fused and differentiable), "`fused` does not support `differentiable`")
    ember._check(not (fused and foreach), "`fused` and `foreach` cannot be `True` together.")


def _run_step_with_hooks(step):
    """Wrap a class's ``step`` so that the global and the optimizer's step pre/post hooks
    run around it (once per call, even when a subclass's ``step`` calls ``super().step()``).
    As in torch, hooks see ``args`` with the optimizer first and may replace them."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if getattr(self, "_in_step", False):
            return step(self, *args, **kwargs)
        args = (self, *args)
        if _global_optimizer_pre_hooks or self._optimizer_step_pre_hooks:
            for hook in [*_global_optimizer_pre_hooks.values(),
                         *self._optimizer_step_pre_hooks.values()]:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{_step_repr(self, step)} must return None or "
                                           "a tuple of (new_args, new_kwargs), but got "
                                           f"{result}.")
                    args, kwargs = result
        self._in_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_step = False
        if self._optimizer_step_post_hooks or _global_optimizer_post_hooks:
            for hook in [*self._optimizer_step_post_hooks.values(),
                         *_global_optimizer_post_hooks.values()]:
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


def _step_repr(opt, step):
    """How torch names the hooked ``step`` in its messages: the function of the class that
    defines it, where ember's optimizers inherit the base's (``<function SGD.step ...>``)."""
    owner = next(c for c in type(opt).__mro__
                 if "step" in c.__dict__ or c.__module__.split(".")[:2] == ["ember", "optim"])
    return f"<function {owner.__qualname__}.step at {hex(id(step))}>"


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` to run
    before the ``step`` of every optimizer; returns a handle whose ``remove()`` drops it."""
    return _register(_global_optimizer_pre_hooks, hook, False)


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run after the ``step`` of every
    optimizer; returns a handle whose ``remove()`` drops it."""
    return _register(_global_optimizer_post_hooks, hook, False)


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
    # state entries torch < 1.12 saved as Python numbers; loading makes them scalar tensors
    _SCALAR_STATE = ("step",)

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        per_param = self.__dict__.get("state", {})
        for group in self.__dict__.get("param_groups", ()):
            for key, default in self._GROUP_DEFAULTS.items():
                group.setdefault(key, default)
            for p in group["params"]:
                p_state = per_param.get(p)
                if p_state:
                    self._tensor_scalars(p, p_state, group)

    def _tensor_scalars(self, p, p_state, group):
        """Turn an old checkpoint's number-valued ``_SCALAR_STATE`` entries into scalar
        tensors, placed and typed as a fresh state's (on ``p``'s device, and float32 for
        fused, when the group is capturable or fused)."""
        for key in self._SCALAR_STATE:
            value = p_state.get(key)
            if value is None or isinstance(value, ember.Tensor):
                continue
            if group.get("capturable") or group.get("fused"):
                dtype = ember.float32 if group.get("fused") else _step_tensor().dtype
                p_state[key] = ember.tensor(float(value), dtype=dtype, device=p.device)
            else:
                p_state[key] = _step_tensor().fill_(float(value))

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group)
                            if key != "params")
        return text + ")"

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
        cls = type(self)
        if cls._update is Optimizer._update and cls._update_group is Optimizer._update_group:
            raise NotImplementedError       # torch's abstract step: no update to run
        loss = self._closure_loss(closure)
        with ember.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
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
    # overrides ``_update_group`` and calls the base's for what it leaves.  The functional
    # forms (``ember.optim.adam.adam``, ...) run the same ``_walk`` over their lists.

    # torch updates a complex parameter (and its state) through view_as_real, so that the
    # real and imaginary parts are two independent reals; SGD, whose update is linear (and
    # which stores a buffer made during the update), works on the complex tensors themselves
    _REAL_VIEWS = True

    def _update_group(self, group):
        """Step every parameter of ``group`` that has a gradient."""
        params = [p for p in group["params"] if p.grad is not None]
        states = [self._state(p, group) for p in params]
        if group.get("capturable"):
            self._check_capturable(params)
        self._walk(group, params, [p.grad for p in params], states)

    # torch's graph-capturable device types, and how its message names what must live there
    _CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
    _CAPTURABLE_WHAT = "params and state_steps"

    def _check_capturable(self, params):
        """torch's AssertionError for ``capturable=True`` with a parameter on a device that
        cannot be graph-captured (the CPU)."""
        devices = self._CAPTURABLE_DEVICES
        if not all(p.device.type in devices for p in params):
            raise AssertionError(f"If capturable=True, {self._CAPTURABLE_WHAT} must be on "
                                 f"supported devices: {devices}.")

    def _walk(self, group, params, grads, states):
        """Update each parameter from its gradient and state (a None state: keeps none)."""
        real_views = self._REAL_VIEWS
        for p, grad, state in zip(params, grads, states):
            if state is not None and "step" in state:
                state["step"] += 1
            grad = self._grad(p, grad, group)
            if real_views and p.is_complex():
                p, grad, state = _real_views(p, grad, state)
            self._update(p, grad, state, group)

    def _state(self, p, group):
        """``p``'s state, made by ``_init_state`` when it has none yet (None when the
        optimizer keeps none for it)."""
        state = self.state.get(p)
        if not state:
            state = self._init_state(p, group)
            if state is not None:
                self.state[p] = state
        return state

    def _grad(self, p, grad, group):
        """``p``'s gradient ``grad`` as the update uses it: negated under ``maximize``, with
        weight decay applied (decoupled decay scales ``p`` itself)."""
        if group["maximize"]:
            grad = -grad
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
        """Load a ``state_dict()`` result: group options are replaced; state tensors are
        cast to each parameter's dtype and device (``step`` keeps its own dtype) and, as in
        torch, the very tensors of ``state_dict`` where no cast is needed."""
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
        # where ``step`` lives follows the saved group's capturable/fused flags
        on_device = {i: bool(s.get("capturable") or s.get("fused"))
                     for s in saved_groups for i in s["params"]}
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast_state(id_map[k], v, on_device[k])
            else:
                state[k] = v
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


def _real_views(p, grad, state):
    """``p``, ``grad`` and ``p``'s complex state tensors as real views (a trailing
    dimension of 2), so an update through them writes the complex tensors."""
    if state is not None:
        state = {k: ember.view_as_real(v) if isinstance(v, ember.Tensor) and v.is_complex()
                 else v for k, v in state.items()}
    return ember.view_as_real(p), ember.view_as_real(grad), state


def _functional_step(cls, params, grads, group, state_lists, grad_scale=None, found_inf=None):
    """Run ``cls``'s per-parameter update over explicit lists, as torch's functional forms
    (``torch.optim.adam.adam``, ...) do.  ``state_lists`` maps a state key to one entry per
    parameter (an empty list: the key is unused); entries the update replaces (SGD's first
    momentum buffer) are written back into the lists.  Only torch's single-tensor path
    exists here, which takes no ``grad_scale``/``found_inf``."""
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if not all(isinstance(t, ember.Tensor) for t in state_lists.get("step", ())):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    keys = [k for k, values in state_lists.items() if len(values)]
    states = [{k: state_lists[k][i] for k in keys} for i in range(len(params))]
    cls.__new__(cls)._walk(group, params, grads, states)     # reads no instance state
    for i, state in enumerate(states):
        for k in keys:
            state_lists[k][i] = state[k]


def _cast_state(param, value, on_device, key=None):
    """One parameter's saved state, as torch loads it: containers are rebuilt, tensors move
    to the parameter's device (and to its dtype when it is floating point) and are shared,
    not copied, when they already match; ``step`` keeps its dtype and place unless
    ``on_device`` (a capturable or fused group: float32 on the parameter's device)."""
    if isinstance(value, ember.Tensor):
        if key == "step":
            return value.to(dtype=ember.float32, device=param.device) if on_device else value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, on_device, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, on_device) for v in value)
    return value
