"""ember.autograd.forward_ad: PyTorch's forward-mode AD API.

A dual tensor is a tensor with a tangent at a forward AD level; every op computes its
output's tangent with its forward formula (core/forward_formulas.py) while the ForwardAD
dispatch key carries the tangents (core/_forward.pxi).  As in PyTorch, this API opens one
level at a time (``ember.func.jvp`` nests levels of its own)."""
from typing import NamedTuple

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core import forward_formulas as _formulas  # noqa: F401  (installs the kernels)
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.grad_mode import _Mode

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

_current_level = -1
_internal = []          # the transform level behind each public level


def enter_dual_level():
    """Enter a new forward grad level: dual tensors made at it carry tangents until it is
    exited.  Returns the level (0: PyTorch allows one at a time)."""
    global _current_level
    if _internal:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _internal.append(_ag._new_level(True))
    _current_level = len(_internal) - 1
    return _current_level


def exit_dual_level(*, level=None):
    """Exit forward grad level ``level`` (the last one entered): the tangents made at it
    are gone."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level or level < 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _ag._end_level(_internal.pop())
    _current_level = level - 1


def _internal_level(level):
    if level is None:
        level = _current_level
    if not 0 <= level < len(_internal):
        return None
    return _internal[level]


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing ``tensor`` with ``tangent`` as its forward gradient at
    ``level`` (the current one by default); ``tangent`` is kept as it is."""
    lv = _internal_level(level)
    if lv is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    return _make_dual(tensor, tangent, lv)


def _make_dual(tensor, tangent, lv):
    """make_dual at the transform level ``lv`` (also ember.func.jvp's)."""
    for x, name in ((tensor, "primal"), (tangent, "tangent")):
        _tensor_arg(x, "make_dual", name)
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{x.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if tangent.device != tensor.device:
        raise RuntimeError(f"make_dual(): the tangent is on {tangent.device} but the primal "
                           f"on {tensor.device}: they must be on the same device")
    # an alias (a differentiable view) keeping tensor's tangents of other levels
    dual = _ag._fw_hidden_call(lv, _T.TensorBase.view_as, tensor, tensor)
    _ag._fw_attach(dual, lv, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """Namedtuple returned by :func:`unpack_dual`: the primal and tangent of a dual tensor."""

    primal: TensorBase
    tangent: "TensorBase | None"


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at ``level``: the primal a view of ``tensor``
    without that tangent, the tangent as it is (None when it has none)."""
    lv = _internal_level(level)
    if lv is None:
        return UnpackedDualTensor(tensor, None)
    return _unpack_dual(tensor, lv)


def _unpack_dual(tensor, lv):
    tangent = _ag._fw_tangent(tensor, lv)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = _ag._fw_hidden_call(lv, _T.TensorBase.view_as, tensor, tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_Mode):
    """Context manager (or decorator) for forward AD: enters a level on entry, exits it on
    exit (its tangents are then gone)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
