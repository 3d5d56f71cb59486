"""Guards: the conditions under which a captured graph may be reused.

A capture assumed things about its call: the structure of the arguments, each tensor's
dtype, device, requires_grad, sizes (specialised, or symbolic with the ShapeEnv's guards)
and strides, the values of non-tensor arguments, the lifted tensors still being where they
were read from, the thread's dispatch state (grad mode, autocast, inference mode), the
default dtype, the attributes of the Modules it ran, the plain values it read, the objects
global and closure variables are bound to and the functions' defaults.  The
GuardBuilder writes these as Python conditions, compiled into one ``check(spec, L)``
function (L: the flattened arguments) and a ``first_failure`` twin that names the failed
condition, which is the recompile reason.
"""
import sys

from ember.core import _state
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase, _meta_is

__all__ = ["GuardBuilder", "dispatch_state"]

_IGNORED_KEYS = (1 << int(DispatchKey.Profiler)) | (1 << int(DispatchKey.PythonMode))
_PRIMITIVES = (bool, int, float, str, bytes, complex, type(None), type(Ellipsis))


def dispatch_state():
    """This thread's included/excluded dispatch keys (grad mode, autocast), inference mode
    and default dtype, ignoring the profiler's and the capture's own keys."""
    inc, exc = _state._get_tls_keys()
    return (inc & ~_IGNORED_KEYS, exc & ~_IGNORED_KEYS, _state.get_default_dtype(),
            _inference_mode())


def _inference_mode():
    return _late("ember.core.grad_mode").is_inference_mode_enabled()


def _late(name, _modules={}):
    """Module ``name``, imported on the first call (the guards run on every compiled call:
    an import statement there costs microseconds)."""
    mod = _modules.get(name)
    if mod is None:
        import importlib
        mod = _modules[name] = importlib.import_module(name)
    return mod


def autocast_state():
    mod = sys.modules.get("ember.amp.autocast_mode")
    if mod is None:
        return None
    tls = mod._tls
    return (tuple(sorted(tls.enabled.items())), tuple(sorted(
        (k, str(v)) for k, v in tls.dtype.items())))


def _module_epoch():
    """Moves when a Module attribute is assigned or a hook is added or removed anywhere."""
    handle = _late("ember.core.hooks").RemovableHandle
    return (_late("ember.nn.modules.module").Module._attribute_epoch, handle.next_id,
            handle.removed)


def _is_guardable_constant(v):
    from ember.core._device import device
    from ember.core._dtype import dtype
    if isinstance(v, _PRIMITIVES) or isinstance(v, (dtype, device, slice)):
        return True
    if type(v) in (tuple, list):
        return all(_is_guardable_constant(x) for x in v)
    import enum
    return isinstance(v, enum.Enum)


def _snapshot(v):
    """``v`` as a guard keeps it: plain lists, and the defaults tuple and dict, copied."""
    if type(v) is tuple:
        return tuple(_snapshot(x) for x in v)
    if type(v) is dict:
        return {k: _snapshot(x) for k, x in v.items()}
    if type(v) is list and _is_guardable_constant(v):
        return [_snapshot(x) for x in v]
    return v


def _same_defaults(now, then):
    """Whether defaults ``now`` (a tuple, a dict or None) match the snapshot ``then``."""
    if then is None or now is None:
        return now is then
    if type(now) is not type(then) or len(now) != len(then):
        return False
    if type(then) is dict:
        return now.keys() == then.keys() and all(_same_value(now[k], then[k]) for k in then)
    return all(_same_value(a, b) for a, b in zip(now, then))


def _same_value(now, then):
    if _is_guardable_constant(then) and not callable(then):
        return type(now) is type(then) and now == then
    return now is then


class GuardBuilder:
    """Collects conditions, then compiles them."""

    def __init__(self):
        # (python condition or "name = expr" binding, description, where: None for both
        # functions, "check" for check only, "why" for first_failure only)
        self.lines = []
        self.ns = {"TensorBase": TensorBase, "_dispatch_state": dispatch_state,
                   "_autocast_state": autocast_state, "_module_epoch": _module_epoch,
                   "_cell": lambda c: c.cell_contents, "_same_defaults": _same_defaults,
                   "_meta_is": _meta_is}
        self._n = 0
        self.count = 0

    def const(self, value, prefix="C"):
        name = f"{prefix}{self._n}"
        self._n += 1
        self.ns[name] = value
        return name

    def add(self, cond, why, where=None):
        self.lines.append((cond, why, where))
        if where != "check":
            self.count += 1

    def bind(self, name, expr):
        self.lines.append((f"{name} = {expr}", None, None))

    def conditions(self):
        """The conditions added so far, as Python over the flattened arguments ``L``."""
        return [cond for cond, why, where in self.lines if why is not None and where != "check"]

    # ---- what a capture assumed -------------------------------------------------------------
    def structure(self, spec, n_leaves):
        self.add(f"spec == {self.const(spec)}", "the arguments have a different structure")
        self.add(f"len(L) == {n_leaves}", "a different number of arguments")

    def tensor(self, expr, t, what, sizes=None, read=()):
        """Guards on tensor ``t`` read by ``expr``; ``sizes`` (a fake's symbolic sizes)
        leaves symbolic dims unguarded here.  ``read``: the autograd attributes the traced
        code mentions (``grad``, ``is_leaf``, ``grad_fn``), whose state is guarded too
        (not always: a training loop's first call, before any ``.grad``, would recompile)."""
        # a static capture's input: `check` tests it in one C call, `first_failure` keeps
        # the conditions one by one for the reason
        each = None
        if sizes is None:
            each = "why"
            self.add(f"_meta_is({expr}, {self.const(t.dtype)}, {self.const(t.device)}, "
                     f"{t.requires_grad}, {t.is_inference()}, {tuple(t.shape)!r}, "
                     f"{tuple(t.stride())!r})", "", "check")
        self.add(f"isinstance({expr}, TensorBase)", f"{what} is no longer a tensor", each)
        self.add(f"{expr}.dtype is {self.const(t.dtype)}",
                 f"{what}: dtype mismatch, expected {t.dtype}", each)
        self.add(f"{expr}.device == {self.const(t.device)}",
                 f"{what}: device mismatch, expected {t.device}", each)
        self.add(f"{expr}.requires_grad is {t.requires_grad}",
                 f"{what}: requires_grad mismatch, expected {t.requires_grad}", each)
        self.add(f"{expr}.is_inference() is {t.is_inference()}",
                 f"{what}: is_inference() mismatch, expected {t.is_inference()}", each)
        if "grad" in read:
            self.add(f"({expr}.grad is None) is {t.grad is None}",
                     f"{what}: expected .grad {'' if t.grad is None else 'not '}to be None")
        if read and {"is_leaf", "grad_fn"} & set(read):
            self.add(f"{expr}.is_leaf is {t.is_leaf}",
                     f"{what}: is_leaf mismatch, expected {t.is_leaf}")
        if sizes is None:
            shape = tuple(t.shape)
            self.add(f"{expr}.shape == {shape!r}",
                     f"{what}: size mismatch, expected {list(shape)}", each)
            self.add(f"{expr}.stride() == {tuple(t.stride())!r}",
                     f"{what}: stride mismatch, expected {list(t.stride())}", each)
            return
        self.add(f"{expr}.dim() == {len(sizes)}", f"{what}: rank mismatch, expected "
                 f"{len(sizes)} dims")
        # a symbolic graph was captured on fake tensors, which are contiguous: another
        # layout (is_contiguous() branches, view()) gets a capture of its own
        self.add(f"{expr}.is_contiguous()", f"{what}: not contiguous, as the captured fake was")
        for d, s in enumerate(sizes):
            if isinstance(s, int):
                self.add(f"{expr}.shape[{d}] == {s}",
                         f"{what}: size mismatch at index {d}, expected {s}")
        self.add(f"{expr}.is_contiguous()", f"{what} is not contiguous")

    def value(self, expr, v, what):
        """A non-tensor argument: equal (plain values) or the same object."""
        if _is_guardable_constant(v):
            self.add(f"type({expr}) is {self.const(type(v))} and {expr} == {self.const(v)}",
                     f"{what}: expected {v!r}")
        else:
            self.add(f"{expr} is {self.const(v)}", f"{what}: expected the same object")

    def aliasing(self, tensors):
        """Which tensor arguments are the same object / share storage, as at capture."""
        items = list(tensors)
        if len(items) > 8:
            return
        for a in range(len(items)):
            for b in range(a):
                (ea, ta), (eb, tb) = items[a], items[b]
                if ta is tb:
                    self.add(f"{ea} is {eb}", "two arguments were the same tensor")
                    continue
                self.add(f"{ea} is not {eb}", "two arguments are now the same tensor")
                same = ta.untyped_storage()._cdata == tb.untyped_storage()._cdata
                self.add(f"({ea}.untyped_storage()._cdata == {eb}.untyped_storage()._cdata) "
                         f"is {same}",
                         "arguments share memory differently")

    def lifted(self, t, source, read=()):
        holder = self.const(source.holder, "H")
        obj = self.const(t, "T")
        self.add(f"{source.expr(holder)} is {obj}", f"{source.name} is a different tensor")
        self.tensor(obj, t, source.name, read=read)

    def dispatch(self):
        state = dispatch_state()
        self.add(f"_dispatch_state() == {self.const(state)}",
                 "grad mode, autocast, inference mode or the default dtype changed")
        ac = autocast_state()
        if ac is not None:
            self.add(f"_autocast_state() == {self.const(ac)}", "the autocast state changed")

    def modules(self, modules):
        """Module attributes: checked in full only when some Module attribute was assigned
        since the last check (the epoch)."""
        from ember._dynamo.sources import module_state
        mods = list(modules)
        if not mods:
            return
        snap = [module_state(m) for m in mods]
        cell = [_module_epoch()]
        names = [type(m).__name__ for m in mods]

        def unchanged():
            epoch = _module_epoch()
            if epoch == cell[0]:
                return True
            for m, s in zip(mods, snap):
                if module_state(m) != s:
                    return False
            cell[0] = epoch
            return True
        self.add(f"{self.const(unchanged, 'M')}()",
                 f"an attribute of a Module ({', '.join(sorted(set(names)))[:80]}) changed")

    def plain_reads(self, entries):
        """Plain values (numbers, strings, ...) read from globals and closure cells."""
        for source, value in entries:
            if source.kind == "path":
                from ember._dynamo.monitor import walk
                read = f"{self.const(walk, 'W')}({self.const(source.holder, 'G')}, " \
                       f"{self.const(source.key, 'K')}, None)"
            else:
                read = source.expr(self.const(source.holder, "G"))
            # a copy: a list compared with itself would hold after an in-place change
            self.add(f"type({read}) is {self.const(type(value))} and "
                     f"{read} == {self.const(_snapshot(value))}",
                     f"{source.kind} '{source.name}' changed, expected {value!r}")

    def bindings(self, entries):
        """Global and closure variables holding objects (a Module, a function): still
        bound to the same object."""
        for source, value in entries:
            read = source.expr(self.const(source.holder, "G"))
            self.add(f"{read} is {self.const(value, 'B')}",
                     f"{source.kind} '{source.name}' is bound to a different object")

    def defaults(self, functions):
        """The ``__defaults__`` and ``__kwdefaults__`` of the functions the call ran: plain
        values by value, other objects by identity."""
        for fn in functions:
            f = self.const(fn, "F")
            for attr in ("__defaults__", "__kwdefaults__"):
                v = getattr(fn, attr, None)
                if v is None:       # each call passed every argument: defaults added later
                    continue        # would not be used
                self.add(f"_same_defaults({f}.{attr}, {self.const(_snapshot(v))})",
                         f"{getattr(fn, '__qualname__', fn)}.{attr} changed, expected {v!r}")

    # ---- compile -----------------------------------------------------------------------------
    def compile(self):
        """(check, first_failure): ``check(spec, L)`` -> bool; ``first_failure(spec, L)`` ->
        the description of the first condition that fails (None if all hold)."""
        body_check, body_why = [], []
        for i, (line, why, where) in enumerate(self.lines):
            if why is None:
                body_check.append(f"    {line}")
                body_why.append(f"    {line}")
                continue
            if where != "why":
                body_check.append(f"    if not ({line}): return False")
            if where != "check":
                body_why.append(f"    if not ({line}): return _why[{i}]")
        src = ("def check(spec, L):\n" + "\n".join(body_check) + "\n    return True\n"
               "def first_failure(spec, L):\n" + "\n".join(body_why) + "\n    return None\n")
        ns = dict(self.ns)
        ns["_why"] = [w for _, w, _ in self.lines]
        import math
        ns["_math"] = math
        exec(compile(src, "<ember guards>", "exec"), ns)
        self.source = src
        return ns["check"], ns["first_failure"]
