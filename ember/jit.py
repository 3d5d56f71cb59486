"""``ember.jit``: PyTorch's ``torch.jit`` names, for code that scripts or traces a model
before running it.  ember has no TorchScript (no IR, no serialised script modules); it
captures programs with ``ember.fx`` and ``ember.compile`` instead.  So:

* ``script`` and ``trace`` (and ``trace_module``, ``freeze``, ``optimize_for_inference``)
  return what they are given, unchanged: a scripted function or module runs eagerly, as
  the Python it is.  (PyTorch returns a ``ScriptFunction``/``ScriptModule``; code that
  only calls the result behaves the same.  Nothing is an instance of ``ScriptModule`` or
  ``ScriptFunction`` here.)
* the decorators ``ignore``, ``unused``, ``export``, ``interface``, ``script_method`` and
  ``script_if_tracing`` return the function, and ``annotate(type, value)`` the value;
  ``is_scripting()`` and ``is_tracing()`` are False;
* ``isinstance`` checks a value against ``List[int]``-style types as PyTorch's eager one does;
  ``fork``/``wait`` run the call at once and hand its result through an ``ember.futures.Future``;
* ``save``, ``load`` and ``export_opnames`` need TorchScript archives and raise
  ``NotImplementedError`` saying so (``ember.save``/``ember.load`` save state dicts,
  ``ember.export`` captures a program)."""
import builtins
import contextlib
import types
import typing
import warnings
from typing import Final  # a constant attribute of a module, as torch.jit.Final

from ember.futures import Future as Future

__all__ = ["Attribute", "Error", "Final", "Future", "ScriptFunction", "ScriptModule",
           "annotate", "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze",
           "ignore", "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "save", "script",
           "script_if_tracing", "script_method", "set_fusion_strategy", "strict_fusion",
           "trace", "trace_module", "unused", "wait"]

_NO_TORCHSCRIPT = ("ember has no TorchScript: {what} needs a TorchScript archive. Save a "
                   "model's state_dict with ember.save (and ember.load it), or capture the "
                   "program with ember.export.export / ember.compile.")


class Error(RuntimeError):
    """PyTorch's ``torch.jit.Error`` (a TorchScript runtime error)."""


class ScriptModule:
    """PyTorch's compiled-module class.  ``ember.jit.script`` returns the module itself, so
    no object is an instance of this class; it exists for ``isinstance`` checks."""


class ScriptFunction:
    """PyTorch's compiled-function class; as ``ScriptModule``, for ``isinstance`` checks."""


class Attribute(typing.NamedTuple):
    """``torch.jit.Attribute(value, type)``: in eager code, the pair itself."""
    value: typing.Any
    type: typing.Any


# -- compiling: the object itself -------------------------------------------------------------

def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Return ``obj`` (a function, module or class) unchanged: ember has no TorchScript, so
    the "scripted" object runs as the Python it is.  PyTorch would return a
    ``ScriptFunction``/``ScriptModule``."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect.", FutureWarning,
                      stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Return ``func`` (a function or module) unchanged, without running it: a traced
    PyTorch program replays the recorded ops, ember's runs the Python again each call (data-
    dependent control flow therefore keeps working)."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """Return ``mod`` unchanged (see ``trace``)."""
    return mod


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Return ``mod`` unchanged (PyTorch inlines a ScriptModule's parameters)."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Return ``mod`` unchanged (PyTorch freezes and fuses a ScriptModule)."""
    return mod


# -- decorators and markers -----------------------------------------------------------------

def _identity_decorator(fn):
    return fn


def ignore(drop=False, **kwargs):
    """Leave a function to Python when scripting: ``@ignore`` or ``@ignore(drop=...)``
    return the function."""
    if callable(drop):
        return drop
    if not builtins.isinstance(drop, bool):
        raise RuntimeError("Argument to @torch.jit.ignore must be a bool or a function but "
                           f"got {drop}")
    return _identity_decorator


def unused(fn):
    """Mark a method the compiler would replace by a raise: returns ``fn``."""
    return fn


def export(fn):
    """Mark a module method as a compilation entry point: returns ``fn``."""
    return fn


def interface(obj):
    """Declare a TorchScript interface: returns ``obj``."""
    return obj


def script_method(fn):
    """Mark a ``ScriptModule`` method to compile: returns ``fn``."""
    return fn


def script_if_tracing(fn):
    """Script ``fn`` only when it is traced: returns ``fn`` (nothing is ever traced)."""
    return fn


def annotate(the_type, the_value):
    """Give the compiler ``the_value``'s type: in eager code, ``the_value``."""
    return the_value


def is_scripting():
    """Whether the code runs compiled by TorchScript: never in ember."""
    return False


def is_tracing():
    """Whether the code runs under ``trace``: never in ember."""
    return False


# -- isinstance over container types -------------------------------------------------------

def isinstance(obj, target_type):
    """``builtins.isinstance`` that also checks parameterised containers, as PyTorch's eager
    ``torch.jit.isinstance``: ``List[int]``, ``Dict[str, Tensor]``, ``Tuple[int, str]``,
    ``Optional[int]``, ``Union[...]`` (a tuple of types: any of them)."""
    if builtins.isinstance(target_type, tuple):
        return builtins.any(isinstance(obj, t) for t in target_type)
    if target_type is typing.Any:
        return True
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        if not builtins.isinstance(target_type, type) and target_type is not None:
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type "
                               "or a tuple of types")
        return obj is None if target_type is None else builtins.isinstance(obj, target_type)
    if origin in (typing.Union, types.UnionType):
        return builtins.any(isinstance(obj, t) for t in args)
    if origin is list:
        return builtins.isinstance(obj, list) and (not args or builtins.all(
            isinstance(x, args[0]) for x in obj))
    if origin is dict:
        if not builtins.isinstance(obj, dict):
            return False
        return not args or builtins.all(isinstance(k, args[0]) and isinstance(v, args[1])
                                        for k, v in obj.items())
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        if not args:
            return True
        if len(args) == 2 and args[1] is Ellipsis:
            return builtins.all(isinstance(x, args[0]) for x in obj)
        return len(obj) == len(args) and builtins.all(isinstance(x, t)
                                                      for x, t in zip(obj, args))
    return builtins.isinstance(obj, origin)


# -- fork/wait: run now, hand back a completed future ----------------------------------------

def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` now (ember runs no TorchScript thread pool) and return
    a completed ``ember.futures.Future`` holding its result (or its exception)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as exc:            # noqa: BLE001  (delivered by wait(), as PyTorch)
        fut.set_exception(exc)
    return fut


def wait(future):
    """The result of a ``fork``."""
    return future.wait()


# -- fusion settings: recorded, nothing to fuse ---------------------------------------------

_settings = {"onednn_fusion": False, "fusion_strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    """Record the oneDNN fusion switch (ember links no oneDNN)."""
    _settings["onednn_fusion"] = bool(enabled)


def onednn_fusion_enabled():
    """The oneDNN fusion switch (False unless set)."""
    return _settings["onednn_fusion"]


def set_fusion_strategy(strategy):
    """Record the fuser's specialisation strategy; returns the previous one."""
    previous, _settings["fusion_strategy"] = _settings["fusion_strategy"], list(strategy)
    return previous


@contextlib.contextmanager
def strict_fusion():
    """A region PyTorch's fuser must fuse entirely: nothing to check in eager code."""
    yield


# -- TorchScript archives ------------------------------------------------------------------

def save(m, f, _extra_files=None):
    """Not available: needs TorchScript (see the module's docstring)."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format(what="ember.jit.save"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Not available: needs TorchScript (see the module's docstring)."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format(what="ember.jit.load"))


def export_opnames(m):
    """Not available: needs a TorchScript module."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format(what="ember.jit.export_opnames"))
