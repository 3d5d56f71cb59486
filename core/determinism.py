"""The determinism switch: ``use_deterministic_algorithms`` and its debug-mode twin.

What changes when it is on:

* the switch reaches every kernel as ``ember_ctx.deterministic`` (abi.h), so a plugin can
  pick a fixed-order path;
* an op whose kernel a backend declares order-dependent (through the
  ``ember_nondeterministic_kernels`` hook) raises RuntimeError naming the op and the
  device, or warns under ``warn_only=True``.  The core asks before the accumulating index
  ops: ``scatter_add``/``scatter(reduce='add'|'multiply')``, ``index_add_``,
  ``index_put_(accumulate=True)``, advanced-index ``+=``, and ``bincount``, ``histc`` and the
  embedding backward, which are built on them;
* ``empty``/``empty_like`` fill their memory (NaN for floating dtypes, the
  largest value for integers), as PyTorch does with ``fill_uninitialized_memory``.

The CPU plugin declares no kernel order-dependent: its reductions combine fixed-size
blocks in a fixed order and its index kernels give each output element to one thread, so
results are bitwise identical at any ``set_num_threads(n)`` whether or not the switch is on.
"""
import warnings

from ember.core import _state

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_MODES = {"default": 0, "warn": 1, "error": 2}
_declared = {}          # device type -> frozenset of op names declared order-dependent


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ops use deterministic algorithms (``mode=True``): ops without one raise a
    RuntimeError naming them, or warn when ``warn_only=True``.  See the module docstring for
    the ops this changes."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"warn_only must be a bool, but got {type(warn_only).__name__}")
    _state._set_deterministic(mode, warn_only)


def are_deterministic_algorithms_enabled():
    """True if ``use_deterministic_algorithms(True)`` is in effect."""
    return bool(_state._get_deterministic()[0])


def is_deterministic_algorithms_warn_only_enabled():
    """True if the deterministic mode only warns (``warn_only=True``)."""
    return bool(_state._get_deterministic()[1])


def set_deterministic_debug_mode(debug_mode):
    """The same switch as a level: ``"default"``/0 (off), ``"warn"``/1 (warn only),
    ``"error"``/2 (raise)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got "
                        f"{type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _state._set_deterministic(debug_mode != 0, debug_mode == 1)


def get_deterministic_debug_mode():
    """0 (off), 1 (warn) or 2 (error): the current deterministic debug mode."""
    on, warn_only = _state._get_deterministic()
    return 0 if not on else (1 if warn_only else 2)


def _declared_for(device_type):
    names = _declared.get(device_type)
    if names is None:
        from ember.backends import nondeterministic_kernels
        names = frozenset(nondeterministic_kernels(device_type))
        _declared[device_type] = names
    return names


def _forget_declarations():
    """Drop cached declarations (a plugin was registered or unregistered)."""
    _declared.clear()


def alert_nondeterministic(op, device_type):
    """Called by an op before an order-dependent kernel runs with the switch on: raise (or
    warn) if ``device_type``'s backend declares ``op``'s kernel nondeterministic."""
    on, warn_only = _state._get_deterministic()
    if not on or op not in _declared_for(device_type):
        return
    msg = (f"{op} does not have a deterministic implementation on device '{device_type}', "
           f"but you set 'ember.use_deterministic_algorithms(True)'. You can turn off "
           f"determinism just for this operation, or you can use the 'warn_only=True' option, "
           f"if that's acceptable for your application.")
    if warn_only:
        warnings.warn(msg, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(msg)
