"""Watching the traced Python for what a replayed graph would not redo.

A captured graph replays tensor ops only; the Python around them runs once, during the
capture.  While a capture runs, a profile function (``sys.setprofile``, this thread only)
sees every Python and builtin call the user's code makes and stops the capture at:

* output and input (``print``, ``input``, ``open``), ``exec``/``eval``;
* Python's ``random`` and ``time`` functions (their values would be frozen into the graph);
* writes to global variables (``global x; x = ...``).

It also indexes the globals each executed function reads, so tensors and Modules found
there can be lifted and guarded.  Attribute writes on Modules are caught by the Module
attribute epoch (``nn.Module.__setattr__``); mutations of plain Python containers are not
seen: such code should not be compiled.
"""
import builtins
import dis
import gc
import random
import sys
import time

from ember._dynamo.capture import _ember_dirs

__all__ = ["SideEffectMonitor"]

_IO = {builtins.print: "print", builtins.input: "input", builtins.open: "open",
       builtins.exec: "exec", builtins.eval: "eval", builtins.breakpoint: "breakpoint"}
_TIME = {getattr(time, n) for n in ("time", "perf_counter", "monotonic", "time_ns",
                                    "perf_counter_ns", "process_time", "sleep")}
_global_writes = {}
_trusted = set()            # code objects of functions passed to allow_in_graph


def _backward_code():
    from ember.core import gradients
    return gradients.backward.__code__


def trust(fn):
    """Do not watch ``fn``'s code (ember.compiler.allow_in_graph)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is not None:
        _trusted.add(code)


def _is_rng(owner):
    """Python's and NumPy's random generators (their draws would be frozen into a graph)."""
    return isinstance(owner, random.Random) or \
        (type(owner).__module__ or "").startswith("numpy.random")


def _writes(code):
    names = _global_writes.get(code)
    if names is None:
        names = _global_writes[code] = tuple(
            i.argval for i in dis.get_instructions(code)
            if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"))
    return names


class SideEffectMonitor:
    """Context manager: stops ``recorder`` at side effects of the code it watches and feeds
    ``index`` the globals that code reads."""

    def __init__(self, recorder, index, enabled=True):
        self.rec = recorder
        self.index = index
        self.enabled = enabled
        self._seen = set()
        self._inside = None         # the frame of a trusted function being run

    def _where(self, frame):
        return f"{frame.f_code.co_filename}:{frame.f_lineno}"

    def _profile(self, frame, event, arg):
        if self._inside is not None:
            if event == "return" and frame is self._inside:
                self._inside = None
            return
        if event == "call":
            code = frame.f_code
            if code in _trusted or code.co_filename.startswith("<frozen importlib"):
                self._inside = frame        # an import runs module code: not the call's
                return
            if code is _backward_code():
                self.rec.note_break("side effect: backward() accumulates into .grad "
                                    f"({self._where(frame.f_back)})")
            if code in self._seen:
                return
            self._seen.add(code)
            if code.co_filename.startswith(self._dirs) or code.co_name == "<module>":
                return                  # ember itself, the standard library, an import
            self.index.add_namespace(frame.f_globals, code.co_names)
            written = _writes(code)
            if written:
                self.rec.note_break(f"side effect: {code.co_name} writes the global "
                                    f"variable '{written[0]}' ({self._where(frame)})")
        elif event == "c_call":
            if frame.f_code.co_filename.startswith(self._dirs) or \
                    frame.f_code.co_name == "<module>":
                return
            name = _IO.get(arg)
            if name is None and (arg in _TIME or _is_rng(getattr(arg, "__self__", None))):
                name = f"{getattr(arg, '__module__', None) or 'random'}.{arg.__name__}"
            if name is not None:
                self.rec.note_break(f"side effect: {name}() called ({self._where(frame)}); "
                                    f"a replayed graph would not call it again")

    def __enter__(self):
        if self.enabled:
            self._dirs = _ember_dirs()
            self._prev = sys.getprofile()
            # no garbage collection while watching: gc.callbacks (hypothesis installs one)
            # would run other code at an arbitrary moment and read as the user's effects
            self._gc = gc.isenabled()
            gc.disable()
            sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            sys.setprofile(self._prev)
            if self._gc:
                gc.enable()
        return False

