"""Watching the traced Python for what a replayed graph would not redo.

A captured graph replays tensor ops only; the Python around them runs once, during the
capture.  While a capture runs, a profile function (``sys.setprofile``, this thread only)
sees every Python and builtin call the user's code makes and stops the capture at:

* output and input (``print``, ``input``, ``open``), ``exec``/``eval``;
* Python's ``random`` and ``time`` functions (their values would be frozen into the graph);
* writes to global variables (``global x; x = ...``) and to an enclosing function's
  (``nonlocal x; x = ...``);
* a mutating method (``append``, ``extend``, ``update``, ``pop``, ...) of a list, dict, set
  or deque that outlives the call: one reached from the calling function's globals or
  closure, from the call's arguments, or from an attribute of a Module the call uses (one
  level into dicts, lists and tuples), as a hook collecting activations does.  PyTorch
  replays such mutations after its graph; ember runs the call eagerly instead, so the list
  grows on every call.  Containers the call makes for itself are not side effects.

It also indexes the globals each executed function reads, so tensors and Modules found
there can be lifted and guarded.  Attribute writes on Modules are caught by the Module
attribute epoch (``nn.Module.__setattr__``).  Item assignment (``d[k] = v``) and ``+=`` on a
container outliving the call are not calls, so not seen: such code should not be compiled.
"""
import builtins
import collections
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
_CONTAINERS = (list, dict, set, collections.deque, bytearray)
_MUTATORS = frozenset("append extend insert pop remove clear update setdefault popitem add "
                      "discard sort reverse appendleft extendleft popleft rotate "
                      "difference_update intersection_update symmetric_difference_update "
                      "__setitem__ __delitem__ __iadd__".split())
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
    """(kind, name) of the first global or enclosing-function (``nonlocal``) variable
    ``code`` writes, or None."""
    found = _global_writes.get(code, False)
    if found is False:
        found = _global_writes[code] = next((
            ("global", i.argval) if i.opname.endswith("GLOBAL") else ("nonlocal", i.argval)
            for i in dis.get_instructions(code)
            if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") or
            i.opname in ("STORE_DEREF", "DELETE_DEREF") and i.argval in code.co_freevars),
            None)
    return found


class SideEffectMonitor:
    """Context manager: stops ``recorder`` at side effects of the code it watches and feeds
    ``index`` the globals that code reads."""

    def __init__(self, recorder, index, enabled=True, arguments=()):
        self.rec = recorder
        self.index = index
        self.enabled = enabled
        self.arguments = arguments  # the call's arguments: containers in them outlive it
        self._seen = set()
        self._inside = None         # the frame of a trusted function being run
        self._outside = {}          # id(container) -> whether it outlives the call

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
                self.rec.note_break(f"side effect: {code.co_name} writes the {written[0]} "
                                    f"variable '{written[1]}' ({self._where(frame)})")
        elif event == "c_call":
            if frame.f_code.co_filename.startswith(self._dirs) or \
                    frame.f_code.co_name == "<module>":
                return
            owner = getattr(arg, "__self__", None)
            if type(owner) in _CONTAINERS and arg.__name__ in _MUTATORS and \
                    self._outlives(owner, frame):
                self.rec.note_break(
                    f"side effect: {type(owner).__name__}.{arg.__name__}() changes a "
                    f"{type(owner).__name__} that outlives the call ({self._where(frame)}); "
                    f"a replayed graph would not change it again")
                return
            name = _IO.get(arg)
            if name is None and (arg in _TIME or _is_rng(owner)):
                name = f"{getattr(arg, '__module__', None) or 'random'}.{arg.__name__}"
            if name is not None:
                self.rec.note_break(f"side effect: {name}() called ({self._where(frame)}); "
                                    f"a replayed graph would not call it again")

    def _outlives(self, obj, frame):
        """Whether container ``obj`` is reachable from outside the call (see the module
        docstring); remembered per container for this capture."""
        known = self._outside.get(id(obj))
        if known is not None:
            return known
        code = frame.f_code
        roots = list(frame.f_globals.values())
        if code.co_freevars:
            local = frame.f_locals
            roots += [local[n] for n in code.co_freevars if n in local]
        roots += list(self.arguments)
        for m in self.index.modules.values():
            roots += list(vars(m).values())
        found = False
        for v in roots:
            if v is obj or isinstance(v, dict) and any(x is obj for x in v.values()) or \
                    isinstance(v, (list, tuple)) and any(x is obj for x in v):
                found = True
                break
        self._outside[id(obj)] = found
        return found

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

