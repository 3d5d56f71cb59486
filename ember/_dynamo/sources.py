"""Where tensors that are not arguments come from, so a captured graph can take them as
inputs and a guard can check they are still the ones there.

A Source is a place a tensor was read from: a parameter, buffer or plain attribute of a
Module, a parameter's ``.grad``, a global variable, a closure cell; or a path (attributes
and constant items) from an object to a plain value read.  The SourceIndex knows
the places reachable from the compiled function or Module (and, as the capture runs, from
the globals of the code it executes); a tensor found nowhere cannot be lifted.  It also
collects what the guards check besides tensors: plain values by value, the objects global
and closure variables are bound to by identity, and the functions whose defaults a call
may have used.
"""
import types

from ember.core._tensor import TensorBase

__all__ = ["Source", "SourceIndex", "module_state"]


class Source:
    """A place a tensor is read from; ``get()`` reads it again."""

    __slots__ = ("kind", "holder", "key", "name")

    def __init__(self, kind, holder, key, name):
        self.kind, self.holder, self.key, self.name = kind, holder, key, name

    def get(self):
        h, k = self.holder, self.key
        if self.kind == "param":
            return h._parameters.get(k)
        if self.kind == "buffer":
            return h._buffers.get(k)
        if self.kind == "attr":
            return h.__dict__.get(k)
        if self.kind == "grad":
            return h.grad
        if self.kind == "global":
            return h.get(k)
        if self.kind == "path":
            from ember._dynamo.monitor import walk
            return walk(h, k, None)
        try:
            return h.cell_contents
        except ValueError:
            return None

    def expr(self, holder):
        """Python reading this source, the holder being named ``holder``."""
        k = repr(self.key)
        return {"param": f"{holder}._parameters.get({k})",
                "buffer": f"{holder}._buffers.get({k})",
                "attr": f"{holder}.__dict__.get({k})",
                "grad": f"{holder}.grad",
                "global": f"{holder}.get({k})"}.get(self.kind, f"_cell({holder})")

    def __repr__(self):
        return f"Source({self.kind}: {self.name})"


def _is_module(x):
    from ember.nn.modules.module import Module
    return isinstance(x, Module)


class SourceIndex:
    """Sources of the tensors reachable from a compiled function or Module."""

    def __init__(self):
        self._by_id = {}
        self.modules = {}           # id -> Module whose attributes the graph may depend on
        self._plain = {}            # (id(holder), key) -> (Source, value): plain values read
        self._bound = {}            # (id(holder), key) -> (Source, object): by identity
        self._unrooted = set()      # keys of _plain read off objects no global or cell names
        self._functions = {}        # id -> function whose defaults a call may use
        self.tensor_attrs = set()   # autograd attributes of tensors the traced code names

    def add_module(self, root, prefix):
        for name, m in root.named_modules(prefix=prefix, remove_duplicate=True):
            if id(m) in self.modules:
                continue
            self.modules[id(m)] = m
            for pn, p in m._parameters.items():
                if p is not None:
                    self._by_id.setdefault(id(p), Source("param", m, pn, f"{name}.{pn}"))
            for bn, b in m._buffers.items():
                if b is not None:
                    self._by_id.setdefault(id(b), Source("buffer", m, bn, f"{name}.{bn}"))
            for an, v in vars(m).items():
                if isinstance(v, TensorBase):
                    self._by_id.setdefault(id(v), Source("attr", m, an, f"{name}.{an}"))

    def add_value(self, value, source):
        """A global or closure variable's value: tensors may be lifted, plain values are
        guarded by value, anything else (a Module, a function, a dict) by identity, so
        rebinding the name recompiles rather than replaying the old object's graph."""
        key = (id(source.holder), source.key)
        if isinstance(value, TensorBase):
            self._by_id.setdefault(id(value), source)
        elif _is_plain(value):
            self._plain.setdefault(key, (source, value))
        else:
            self._bound.setdefault(key, (source, value))
            if _is_module(value):
                self.add_module(value, source.name)
            elif isinstance(value, types.FunctionType):
                self._add_closure(value)

    def add_path_read(self, root, path, value, rooted=True):
        """A plain value the traced code read through attributes or constant items of a
        global or closure variable (``cfg["scale"]``), an argument or a Module's attribute
        (``c.scale``, ``self.cfg["s"]``), or an object a helper was passed (``rooted``
        False), to guard by value off that very object; a Module's own attributes have
        their own guard (module_state)."""
        from ember._dynamo.monitor import _class_attribute
        if _is_plain(value) and not (_is_module(root) and len(path[2]) < 2 and
                                     not _class_attribute(root, path[2])):
            kind, name, steps = path
            from ember._dynamo.monitor import describe
            shown = describe(name, steps)
            key = (id(root), steps)
            if key not in self._plain:
                self._plain[key] = (Source("path", root, steps, shown), value)
                if not rooted:
                    self._unrooted.add(key)

    def plain_reads(self):
        """(Source, value) of the plain values (numbers, strings, ...) the traced code may
        have read.  An unrooted read whose object no longer holds the value when the call
        ends is left out: the call itself changed the object, so it was made by the call
        (a change to one that outlives it is a side effect, which breaks the capture), and
        its guard would fail on every later call."""
        from ember._dynamo.monitor import walk
        missing = object()
        return [(s, v) for key, (s, v) in self._plain.items()
                if key not in self._unrooted or _same_plain(walk(s.holder, s.key, missing), v)]

    def bindings(self):
        """(Source, object) of the global and closure variables read that hold objects
        (Modules, functions, containers), to guard by identity."""
        return list(self._bound.values())

    def functions(self):
        """The functions whose ``__defaults__``/``__kwdefaults__`` a call may have used."""
        return list(self._functions.values())

    def add_namespace(self, globals_, names):
        """Globals ``names`` of ``globals_`` (a module's dict) that hold tensors or Modules."""
        for n in names:
            if n in globals_ and not n.startswith("__"):
                self.add_value(globals_[n], Source("global", globals_, n, n))

    def add_function(self, fn):
        """The globals, closure cells and defaults ``fn`` reads."""
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        self.add_namespace(fn.__globals__, _all_names(code))
        self._add_closure(fn)

    def _add_closure(self, fn):
        """``fn``'s closure cells and defaults (a helper's cell rebound with ``nonlocal``, or
        ``f.__defaults__`` reassigned, changes what a call computes)."""
        if id(fn) in self._functions:
            return
        self._functions[id(fn)] = fn
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            self.add_value(v, Source("cell", cell, None, name))

    def find(self, t):
        """The Source of ``t``, or None."""
        s = self._by_id.get(id(t))
        if s is not None and s.get() is t:
            return s
        for m in self.modules.values():
            for pn, p in m._parameters.items():
                if p is not None and p.grad is t:
                    s = Source("grad", p, None, f"{pn}.grad")
                    self._by_id[id(t)] = s
                    return s
        return None


def _is_plain(v):
    from ember._dynamo.guards import _is_guardable_constant
    return not callable(v) and _is_guardable_constant(v)


def _same_plain(a, b):
    return type(a) is type(b) and a == b


def _all_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= _all_names(c)
    return names


def module_state(m):
    """What a captured graph may have read of Module ``m`` besides its tensors: plain
    attributes by value, everything else by identity, and which parameters, buffers,
    submodules and hooks it holds."""
    items = []
    for k, v in vars(m).items():
        if isinstance(v, dict):
            items.append((k, tuple((n, id(x)) for n, x in v.items())))
        elif v is None or isinstance(v, (bool, int, float, str)):
            items.append((k, type(v), v))
        elif isinstance(v, (list, set, tuple)):
            items.append((k, id(v), len(v)))
        else:
            items.append((k, id(v)))
    return tuple(items)
