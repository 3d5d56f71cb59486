"""Watching the traced Python for what a replayed graph would not redo.

A captured graph replays tensor ops only; the Python around them runs once, during the
capture.  While a capture runs, a profile function (``sys.setprofile``, this thread only)
sees every Python and builtin call the user's code makes and stops the capture at:

* output and input (``print``, ``input``, ``open``, ``warnings.warn``, a logger's
  ``info``/``warning``/...), ``exec``/``eval``;
* Python's ``random`` and ``time`` functions (their values would be frozen into the graph);
* writes to global variables (``global x; x = ...``) and to an enclosing function's
  (``nonlocal x; x = ...``);
* a mutating method (``append``, ``extend``, ``update``, ``pop``, ...) of a list, dict, set
  or deque that outlives the call: one reached from the calling function's globals or
  closure, from the call's arguments or the function's defaults, or from an attribute of
  a Module the call uses (one level into dicts, lists and tuples), as a hook collecting
  activations does.  PyTorch replays such mutations after its graph; ember runs the call
  eagerly instead, so the list grows on every call.  Containers the call makes for itself
  are not side effects.
* the builtins ``setattr``/``delattr`` (their target is not visible here; a hook put on
  a tensor, ``register_hook``/``retain_grad``, the core reports itself);
* item and attribute assignment (``d[k] = v``, ``counts[0] += 1``, ``del d[k]``,
  ``obj.n += 1``) on an object, other than a tensor or a Module, that outlives the call.
  These are not calls: each function's bytecode is read once for the expression each
  store writes into (a variable, a global or closure variable, then attributes and
  constant subscripts), and at each call that expression is evaluated in the new frame
  (parameters bound, nothing run) and the object checked.  A store in a branch the call
  does not take still counts: the call runs eagerly, which is always correct.

It also indexes the globals each executed function reads, so tensors and Modules found
there can be lifted and guarded (other objects by identity), and the plain values it reads
through attributes and constant items (``cfg["scale"]``, ``getattr(cfg, "scale")``), or
through ``cfg.get("scale", 1.0)`` and ``len(sizes)`` on a built-in dict or container,
which are guarded by value (an item read with a variable key, ``cfg[key]``, guards every
item of a built-in container).  Such a read is rooted at a global or closure variable, at a
local bound once to one (``c = CFG; c["s"]``), or at a parameter: at every call of the
function the parameter's object is guarded itself (``helper(x, CFG)``, a method's
``self``), or for the call's own arguments the leaf the read reaches.  Reads off other
locals (a call's result) are not guarded.  Attribute writes on Modules are caught by the
Module attribute epoch (``nn.Module.__setattr__``).
"""
import builtins
import collections
import dis
import gc
import logging
import random
import sys
import time
import warnings

from ember._dynamo.capture import _ember_dirs
from ember.core._tensor import TensorBase

__all__ = ["TENSOR_STATE", "SideEffectMonitor"]

_IO = {builtins.print: "print", builtins.input: "input", builtins.open: "open",
       builtins.exec: "exec", builtins.eval: "eval", builtins.breakpoint: "breakpoint",
       warnings.warn: "warnings.warn", warnings.warn_explicit: "warnings.warn_explicit"}
# a logger's entry points, called from the user's code (logging's own code is a library's)
_LOGGING = {getattr(logging.Logger, n).__code__: f"logging.Logger.{n}" for n in
            ("debug", "info", "warning", "error", "exception", "critical", "log")}
_LOGGING.update({getattr(logging, n).__code__: f"logging.{n}" for n in
                 ("debug", "info", "warning", "error", "exception", "critical", "log")})
_TIME = {getattr(time, n) for n in ("time", "perf_counter", "monotonic", "time_ns",
                                    "perf_counter_ns", "process_time", "sleep")}
_CONTAINERS = (list, dict, set, collections.deque, bytearray)
_MUTATORS = frozenset("append extend insert pop remove clear update setdefault popitem add "
                      "discard sort reverse appendleft extendleft popleft rotate "
                      "difference_update intersection_update symmetric_difference_update "
                      "__setitem__ __delitem__ __iadd__".split())
_global_writes = {}
# tensor attributes a branch may test whose state the tensor guards do not always check
TENSOR_STATE = frozenset(["grad", "is_leaf", "grad_fn"])
_trusted = set()            # code objects of functions passed to allow_in_graph


def _module_class():
    from ember.nn.modules.module import Module
    return Module


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


# stack effects (pops, pushes) of the opcodes a store's target expression is made of, and
# of those with no effect; any other opcode is read from dis.stack_effect
_EFFECTS = {"LOAD_METHOD": (1, 2), "BINARY_SUBSCR": (2, 1), "PRECALL": (0, 0),
            "KW_NAMES": (0, 0), "RESUME": (0, 0), "NOP": (0, 0), "EXTENDED_ARG": (0, 0),
            "CACHE": (0, 0), "JUMP_FORWARD": (0, 0), "JUMP_BACKWARD": (0, 0),
            "JUMP_BACKWARD_NO_INTERRUPT": (0, 0)}
_ROOTS = {"LOAD_FAST": "local", "LOAD_DEREF": "local", "LOAD_CLASSDEREF": "local",
          "LOAD_GLOBAL": "global", "LOAD_NAME": "global"}
_STORES = {"STORE_SUBSCR": 2, "DELETE_SUBSCR": 2, "STORE_ATTR": 1, "DELETE_ATTR": 1}
_SLOT_STORES = ("__setitem__", "__delitem__", "__setattr__", "__delattr__")
_ENDS = ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
         "JUMP_BACKWARD_NO_INTERRUPT")
_POP_ONLY = ("STORE_", "DELETE_", "POP_", "RETURN_", "RAISE_", "LIST_", "SET_", "MAP_ADD",
             "DICT_", "PRINT_EXPR", "IMPORT_STAR")
_paths_of = {}


def _targets(code):
    """The target expressions of ``code``'s item and attribute stores (see _paths)."""
    return _paths(code)[0]


def _reads(code):
    """The attributes and constant items ``code`` reads off a global or closure variable
    (``cfg["scale"]``, ``opts.p``, ``sizes[0]``), as paths (see _paths)."""
    return _paths(code)[1]


def _paths(code):
    """(stores, reads) of ``code``: the target expressions of its item and attribute
    stores, and the attribute and constant-item reads rooted at a global or closure
    variable; each a path ``(root kind, name, (step, ...))`` with steps ``("attr", name)``
    or ``("item", key)``, found by running the bytecode over a stack of paths (None: a
    value the path does not follow, a call's result, say).  Cached per code object."""
    found = _paths_of.get(code)
    if found is not None:
        return found
    paths, reads, stack, at_jump = {}, {}, [], {}   # dicts, for the source's order
    stores = {}                 # local name -> what each of its stores writes
    params = _parameters(code)
    previous = None
    for ins in dis.get_instructions(code):
        if ins.is_jump_target and previous in _ENDS:
            stack = list(at_jump.get(ins.offset, ()))     # the block after a return/jump
        elif ins.is_jump_target and ins.offset in at_jump:
            # two ways in (``CFG if flag else OTHER``): a value is known only where both agree
            stack = _merge(stack, at_jump[ins.offset])
        if ins.opname in ("STORE_FAST", "DELETE_FAST"):   # (what both ways in agree on)
            stores.setdefault(ins.argval, []).append(
                stack[-1] if ins.opname == "STORE_FAST" and stack else None)
        previous, op = ins.opname, ins.opname
        if op in _STORES:
            depth = _STORES[op]
            if len(stack) >= depth and _is_path(stack[-depth]):
                paths[stack[-depth]] = None
            del stack[len(stack) - (depth + (op[0] == "S")):]
            continue
        if op == "LOAD_METHOD":         # the method, then self: a marker for CALL below
            top = stack.pop() if stack else None
            stack.extend([("method", top, ins.argval) if _is_path(top) else None, None])
            if _is_path(top):
                reads[(top[0], top[1], top[2] + (("attr", ins.argval),))] = None
                if ins.argval in _SLOT_STORES:  # d.__setitem__(k, v): a store, which the
                    paths[top] = None           # profile function does not see called
            continue
        if op == "CALL" and len(stack) >= ins.arg + 2:
            read = _call_read(stack[len(stack) - ins.arg - 2:], ins.arg)
            del stack[len(stack) - ins.arg - 2:]
            stack.append(read)
            if read is not None:
                reads[read] = None
            continue
        if op == "GET_ITER":            # for v in cfg.sizes: the items are read
            top = stack.pop() if stack else None
            if _is_path(top):
                reads[(top[0], top[1], top[2] + (("iter", None),))] = None
            stack.append(None)
            continue
        if op in _ROOTS:
            if op == "LOAD_GLOBAL" and ins.arg & 1:
                stack.append(None)                      # the NULL before a callable
            kind = "cell" if _ROOTS[op] == "local" and ins.argval in code.co_freevars \
                else _ROOTS[op]
            stack.append((kind, ins.argval, ()))
        elif op == "LOAD_CONST":
            stack.append(("const", ins.argval))
        elif op == "LOAD_ATTR":
            top = stack.pop() if stack else None
            stack.append((top[0], top[1], top[2] + (("attr", ins.argval),))
                         if _is_path(top) else None)
            if stack[-1] is not None:
                reads[stack[-1]] = None
        elif op == "BINARY_SUBSCR" and len(stack) >= 2:
            key, top = stack.pop(), stack.pop()
            simple = key is not None and key[0] == "const" and \
                isinstance(key[1], (int, str)) and _is_path(top)
            stack.append((top[0], top[1], top[2] + (("item", key[1]),)) if simple else None)
            if stack[-1] is not None:
                reads[stack[-1]] = None
            elif _is_path(top):         # cfg[key], the key a variable: any item may be read
                reads[(top[0], top[1], top[2] + (("items", None),))] = None
        elif op == "COPY":
            stack.append(stack[-ins.arg] if len(stack) >= ins.arg else None)
        elif op == "SWAP":
            if len(stack) >= ins.arg:
                stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        else:
            if op in _EFFECTS:
                pops, pushes = _EFFECTS[op]
            elif op == "CALL":                  # the callable, self or NULL, the arguments
                pops, pushes = ins.arg + 2, 1
            else:
                net = dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT
                                       else None, jump=False)
                if op.startswith(_POP_ONLY):
                    pops = -net
                else:                           # an expression: its operands for a result
                    pops = -net + 1 if net <= 0 else 0
                pushes = pops + net
            del stack[max(len(stack) - pops, 0):]
            stack.extend([None] * pushes)
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                at_jump[ins.argval] = _merge(stack, at_jump.get(ins.argval, stack))
    aliases = _aliases(stores, params)
    found = _paths_of[code] = (tuple(_unalias(p, aliases) for p in paths),
                               tuple(_unalias(p, aliases) for p in reads))
    return found


def _parameters(code):
    """The names of ``code``'s parameters (``*args`` and ``**kwargs`` included)."""
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount + bool(
        code.co_flags & 0x04) + bool(code.co_flags & 0x08)]


def _merge(a, b):
    return [x if x == y else None for x, y in zip(a, b)] if len(a) == len(b) else \
        [None] * len(a)


def _aliases(stores, params):
    """Locals stored once, with a path (``c = CFG``, ``c = self.cfg``): their reads are
    reads of that path, which names the same object all through the call (rebinding a
    global or closure variable, or assigning into an object that outlives the call, is a
    side effect that stops the capture).  A parameter it starts from must never be
    stored: the path is evaluated with the parameters as the call starts."""
    aliases = {}
    for name, stored in stores.items():
        if len(stored) == 1 and _is_path(stored[0]) and name not in params:
            aliases[name] = stored[0]
    for _ in range(len(aliases)):           # c = CFG; d = c: d is CFG too
        aliases = {n: _unalias(p, aliases) for n, p in aliases.items()}
    return {n: p for n, p in aliases.items() if p[0] != "local" or
            (p[1] in params and p[1] not in stores)}


def _unalias(path, aliases):
    """``c["s"]`` after ``c = CFG`` (``c``'s only store) reads ``CFG["s"]`` (``c`` is
    unbound when the call starts, when reads are evaluated)."""
    alias = aliases.get(path[1]) if path[0] == "local" else None
    return path if alias is None else (alias[0], alias[1], alias[2] + path[2])


def _class_attribute(obj, steps):
    """Whether ``steps`` is one attribute ``obj`` finds on its class, not in its own
    dict (a Module's class attribute: the Module guard watches only instance ones)."""
    return len(steps) == 1 and steps[0][0] == "attr" and steps[0][1] not in vars(obj) and \
        hasattr(type(obj), steps[0][1])


def _is_path(x):
    return x is not None and x[0] in ("global", "cell", "local")


_PLAIN_KEYS = (int, str, float, bool, type(None))


def _call_read(entries, n):
    """The path a call reads, for the calls that read a value as an item or attribute
    does: ``d.get(key[, default])`` with constant arguments and ``len(x)`` (the path of
    x); else None.  ``entries``: the callable's two stack slots, then the arguments."""
    first, second, args = entries[0], entries[1], entries[2:]
    if first is not None and first[0] == "method" and first[2] == "get" and n in (1, 2) and \
            all(a is not None and a[0] == "const" and isinstance(a[1], _PLAIN_KEYS)
                for a in args):
        base = first[1]
        return base[0], base[1], base[2] + (("get", tuple(a[1] for a in args)),)
    if first is not None and first[0] == "method" and first[2] in _VIEWS and n == 0:
        base = first[1]
        return base[0], base[1], base[2] + (("view", first[2]),)
    if first is None and second == ("global", "len", ()) and n == 1 and _is_path(args[0]):
        base = args[0]
        return base[0], base[1], base[2] + (("len", None),)
    if first is None and second in (("global", "getattr", ()), ("global", "hasattr", ())) \
            and n == 2 + (second[1] == "getattr" and len(args) == 3) and _is_path(args[0]) and \
            all(a is not None and a[0] == "const" for a in args[1:]) and \
            isinstance(args[1][1], str):
        base, key = args[0], tuple(a[1] for a in args[1:])
        return base[0], base[1], base[2] + ((second[1], key),)
    if first is None and second == ("global", "next", ()) and n in (1, 2) and \
            _is_path(args[0]):
        base = args[0]
        return base[0], base[1], base[2] + (("next", None),)
    return None


_MISSING = object()


def _resolve(path, frame):
    """The object ``path`` names in ``frame`` as it starts (its parameters bound), or
    None where a name is unbound or a step fails."""
    obj = _root(path, frame)
    return None if obj is _MISSING else walk(obj, path[2], None)


def _root(path, frame):
    kind, name, _ = path
    if kind in ("local", "cell"):
        return frame.f_locals.get(name, _MISSING)
    return frame.f_globals.get(name, getattr(builtins, name, _MISSING))


def walk(obj, steps, missing):
    """The value ``steps`` (attributes, items, dict.get and its views, len, the items an
    iteration reads) lead to from ``obj``, or
    ``missing`` (also where a get or len would run code of the user's: only built-in dicts
    and containers are read through them)."""
    for step, key in steps:
        try:
            if step == "attr":
                obj = getattr(obj, key)
            elif step == "item":
                obj = obj[key]
            elif step == "get" and type(obj) is dict:
                obj = obj.get(*key)
            elif step == "len" and type(obj) in _SIZED:
                obj = len(obj)
            elif step == "iter" and type(obj) in _SIZED:
                obj = tuple(obj)
            elif step == "items" and type(obj) in _SIZED:
                obj = tuple(obj.items()) if type(obj) is dict else tuple(obj)
            elif step == "view" and type(obj) is dict:
                obj = tuple(getattr(obj, key)())
            elif step == "getattr":
                obj = getattr(obj, *key)
            elif step == "hasattr":
                obj = hasattr(obj, key[0])
            else:
                return missing
        except Exception:
            return missing
    return obj


_SIZED = (list, tuple, dict, set, frozenset, str, bytes, collections.deque)
_VIEWS = ("values", "keys", "items")


def describe(name, steps):
    """A path as the source reads: ``cfg.opts["p"]``, ``cfg.get('p', 1)``, ``len(sizes)``."""
    for step, key in steps:
        if step == "attr":
            name += f".{key}"
        elif step == "item":
            name += f"[{key!r}]"
        elif step == "get":
            name += f".get({', '.join(map(repr, key))})"
        elif step == "view":
            name += f".{key}()"
        elif step in ("getattr", "hasattr"):
            name = f"{step}({name}, {', '.join(map(repr, key))})"
        elif step == "next":
            name = f"next({name})"
        elif step == "iter":
            name = f"iter({name})"
        elif step == "items":
            name += "[...]"
        else:
            name = f"len({name})"
    return name


def _containers(values, found=None):
    """ids of the lists, tuples and dicts ``values`` holds (the call's arguments, as
    pytree flattens them: their leaves are guarded, the containers are new each call)."""
    found = set() if found is None else found
    for v in values:
        if type(v) in (list, tuple, dict) or isinstance(v, tuple) and hasattr(v, "_fields"):
            if id(v) not in found:
                found.add(id(v))
                _containers(v.values() if type(v) is dict else v, found)
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
        self._library = set()       # code objects that are not the user's
        self._arg_containers = _containers(arguments)

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
            if code in _LOGGING and frame.f_back is not None and \
                    frame.f_back.f_code not in self._library:
                self.rec.note_break(f"side effect: {_LOGGING[code]}() called "
                                    f"({self._where(frame.f_back)}); a replayed graph would "
                                    f"not log again")
            if code not in self._seen:
                self._seen.add(code)
                if code.co_filename.startswith(self._dirs) or code.co_name == "<module>":
                    self._library.add(code)   # ember itself, the standard library, an import
                else:
                    self._first_call(frame, code)
            if code not in self._library:
                self._check_stores(frame, code)
                self._guard_reads(frame, code, ("local", "cell"))
        elif event == "return":
            if frame.f_code in self._seen and frame.f_code not in self._library:
                # reads off locals bound as the call ran (a call's result, a value bound
                # on two branches): guarded off the object each local holds at the end
                self._guard_reads(frame, frame.f_code, ("local",), late=True)
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
            if arg is builtins.setattr or arg is builtins.delattr:
                # the profile does not see the arguments: any object may be the target
                self.rec.note_break(f"side effect: {arg.__name__}() called "
                                    f"({self._where(frame)}); a replayed graph would not "
                                    f"call it again")
                return
            name = _IO.get(arg)
            if name is None and (arg in _TIME or _is_rng(owner)):
                name = f"{getattr(arg, '__module__', None) or 'random'}.{arg.__name__}"
            if name is not None:
                self.rec.note_break(f"side effect: {name}() called ({self._where(frame)}); "
                                    f"a replayed graph would not call it again")

    def _first_call(self, frame, code):
        self.index.add_namespace(frame.f_globals, code.co_names)
        self.index.tensor_attrs.update(TENSOR_STATE.intersection(code.co_names))
        self._guard_reads(frame, code, ("global",))
        written = _writes(code)
        if written:
            self.rec.note_break(f"side effect: {code.co_name} writes the {written[0]} "
                                f"variable '{written[1]}' ({self._where(frame)})")

    def _guard_reads(self, frame, code, kinds, late=False):
        """Guards on the values ``code`` reads through paths rooted at ``kinds`` of
        variables: globals once per capture; parameters and closure variables at every
        call (another call may pass another object); ``late`` (as the call returns), the
        other locals, which only now hold what the reads went through."""
        params = _parameters(code) if late else ()
        for path in _reads(code):           # cfg["scale"]: a guard on the value read
            if path[0] not in kinds or path[1] in params:
                continue
            root = _root(path, frame)
            if path[2] and path[2][-1][0] == "next":
                it = walk(root, path[2][:-1], _MISSING) if root is not _MISSING else _MISSING
                if hasattr(it, "__next__") and (path[0] != "local" or self._outlives(
                        it, frame)):
                    self.rec.note_break(
                        f"side effect: next({describe(path[1], path[2][:-1])}) advances an "
                        f"iterator that outlives the call ({self._where(frame)}); a replayed "
                        f"graph would not advance it")
                continue
            if root is _MISSING:
                continue
            steps = path[2]
            if path[0] == "local":
                root, steps = self._anchor(root, steps)
                if root is _MISSING:
                    continue
            value = walk(root, steps, _MISSING)
            if _is_rng(getattr(value, "__self__", None)):
                # np.random.rand: NumPy's legacy functions are Cython's, which the
                # profile function does not see called; the read is enough
                self.rec.note_break(
                    f"side effect: {describe(path[1], path[2])}() draws from a random "
                    f"number generator ({self._where(frame)}); a replayed graph would "
                    f"not draw again")
            self.index.add_path_read(root, (path[0], path[1], steps), value,
                                     rooted=path[0] != "local")

    def _anchor(self, root, steps):
        """The object and steps to guard a read off a local variable through, or
        (_MISSING, steps).  Not a tensor (a new one comes each call), nor a plain value
        (the call's arguments are guarded by value); inside the call's own argument
        containers, the leaf the steps reach (the containers are new each call, the
        leaves guarded); a Module only past its own attributes (the Module guard sees
        assignments to them, not changes inside them).  Any other object is guarded
        itself: an argument (pinned by identity), or an object a helper was passed
        (``helper(x, CFG)``, ``obj.method()``'s ``self``)."""
        while id(root) in self._arg_containers and steps and steps[0][0] in ("item", "attr"):
            root = walk(root, steps[:1], _MISSING)
            steps = steps[1:]
        if not steps or id(root) in self._arg_containers or isinstance(
                root, (TensorBase, int, float, complex, str, bool, bytes, type(None))):
            return _MISSING, steps
        if isinstance(root, _module_class()) and not (
                len(steps) >= 2 or _class_attribute(root, steps)):
            return _MISSING, steps
        return root, steps

    def _check_stores(self, frame, code):
        """A break when one of ``code``'s item or attribute stores writes into an object
        (not a tensor, not a Module: those are recorded or caught elsewhere) that
        outlives the call."""
        for path in _targets(code):
            obj = _resolve(path, frame)
            if obj is None or isinstance(obj, (TensorBase, _module_class())) or \
                    not self._outlives(obj, frame):
                continue
            what = describe(path[1], path[2])
            self.rec.note_break(
                f"side effect: {code.co_name} assigns into {what}, a "
                f"{type(obj).__name__} that outlives the call ({self._where(frame)}); a "
                f"replayed graph would not assign again")
            return

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

