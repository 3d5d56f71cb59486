"""``ember.amp.GradScaler``: loss scaling for mixed-precision training (PyTorch's
semantics: scale the loss, unscale the gradients, skip the step when one is inf/NaN,
shrink the scale after an overflow and grow it after ``growth_interval`` clean steps)."""
import warnings
from collections import defaultdict
from enum import Enum

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales losses so small low-precision gradients do not flush to zero.

    ``device``: the device type of the gradients ('cpu', 'cuda', ...); ``init_scale``:
    the first scale; ``growth_factor``/``backoff_factor``: the scale is multiplied by these
    after ``growth_interval`` steps without inf/NaN gradients / after a step with one;
    ``enabled=False`` makes every method a pass-through."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            import ember
            if not ember.cuda.is_available():
                warnings.warn("ember.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _lazy_init_scale_growth_tracker(self, dev):
        import ember
        self._scale = ember.full((), float(self._init_scale), dtype=ember.float32, device=dev)
        self._growth_tracker = ember.full((), self._init_growth_tracker, dtype=ember.int32,
                                          device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        return self._apply_scale(outputs)

    def _apply_scale(self, val):
        # a method, not a closure calling itself: that closure is a reference cycle that
        # would keep the scaled losses alive until the cycle collector runs
        import ember
        if isinstance(val, ember.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(val.device)
            return val * self._scale.to(device=val.device)
        if isinstance(val, (list, tuple)):
            return type(val)(self._apply_scale(v) for v in val)
        if hasattr(val, "__iter__"):
            return map(self._apply_scale, val)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        import ember
        found = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if not allow_fp16 and param.grad.dtype == ember.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g = param.grad
                dev = g.device
                if dev not in found:
                    found[dev] = found_inf.to(device=dev).clone()
                # non-finite check before the multiply, as _amp_foreach_non_finite_check
                bad = ember.logical_not(ember.isfinite(g)).any()
                found[dev] = ember.maximum(found[dev], bad.to(ember.float32))
                g.mul_(inv_scale.to(device=dev, dtype=g.dtype)
                       if g.dtype != ember.float32 else inv_scale.to(device=dev))
        return found

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale in place (once per step), noting
        whether any is inf/NaN."""
        import ember
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember.full((), 0.0, dtype=ember.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` after unscaling, skipped (returning None)
        when a gradient holds inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Set the scale for the next iteration: ``new_scale`` if given, else backed off
        after an inf/NaN step or grown after ``growth_interval`` clean ones."""
        import ember
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not (isinstance(new_scale, ember.Tensor) and new_scale.numel() == 1
                        and new_scale.dtype == ember.float32 and not new_scale.requires_grad):
                    raise AssertionError("new_scale should be a float or a 1-element "
                                         "ember.cuda.FloatTensor or ember.FloatTensor with "
                                         "requires_grad=False.")
                self._scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [f for s in self._per_optimizer_states.values()
                          for f in s["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = sum(f.item() for f in found_infs)
            scale, tracker = self._scale.item(), int(self._growth_tracker.item())
            if found_inf:
                scale, tracker = scale * self._backoff_factor, 0
            else:
                tracker += 1
                if tracker == self._growth_interval:
                    grown = float(ember.tensor(scale * self._growth_factor,
                                               dtype=ember.float32).item())
                    if grown != float("inf"):
                        scale = grown
                    tracker = 0
            self._scale.fill_(scale)
            self._growth_tracker.fill_(tracker)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier " \
              "in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker
        (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
