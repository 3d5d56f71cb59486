"""``ember.random``: the default CPU generator's seed and state, and ``fork_rng``."""
import contextlib
import warnings

from ember.core._tensor import _default_generator
from ember.core._tensor import initial_seed as initial_seed
from ember.core._tensor import manual_seed as manual_seed
from ember.core._tensor import seed as seed

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "fork_rng"]


def get_rng_state():
    """The default CPU generator's state, as a uint8 tensor."""
    return _default_generator("cpu").get_state()


def set_rng_state(new_state):
    """Restore the default CPU generator's state from ``get_rng_state()``'s tensor."""
    _default_generator("cpu").set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Inside the block, random ops may reseed and draw freely: on exit the default
    generators of the CPU and of ``device_type``'s ``devices`` get their states back."""
    if not enabled:
        yield
        return
    types = ["cpu"]
    if device_type != "cpu":
        from ember import get_device_module
        try:
            if get_device_module(device_type).is_available():
                types.append(device_type)
        except RuntimeError:        # no plugin for that type: nothing of it to restore
            pass
    if devices:
        warnings.warn(f"{_caller}: generators are per device type in ember; {_devices_kw}= "
                      f"is accepted and every device of '{device_type}' is restored",
                      stacklevel=3)
    saved = [(t, _default_generator(t).get_state()) for t in types]
    try:
        yield
    finally:
        for t, state in saved:
            _default_generator(t).set_state(state)
