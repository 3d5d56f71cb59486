"""Guards: the conditions under which a captured graph may be reused.

A capture assumed things about its call: the structure of the arguments, each tensor's
dtype, device, requires_grad, sizes (specialised, or symbolic with the ShapeEnv's guards)
and strides, the values of non-tensor arguments, the lifted tensors still being where they
were read from, the thread's dispatch state (grad mode, autocast, inference mode), the
default dtype, the attributes of the Modules it ran and the plain globals it read.  The
GuardBuilder writes these as Python conditions, compiled into one ``check(spec, L)``
function (L: the flattened arguments) and a ``first_failure`` twin that names the failed
condition, which is the recompile reason.
"""
import sys

from ember.core import _state
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase

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
    from ember.core.grad_mode import is_inference_mode_enabled
    return is_inference_mode_enabled()


def autocast_state():
    mod = sys.modules.get("ember.amp.autocast_mode")
    if mod is None:
        return None
    tls = mod._tls
    return (tuple(sorted(tls.enabled.items())), tuple(sorted(
        (k, str(v)) for k, v in tls.dtype.items())))


def _module_epoch():
    """Moves when a Module attribute is assigned or a hook is added or removed anywhere."""
    from ember.core.hooks import RemovableHandle
    from ember.nn.modules.module import Module
    return (Module._attribute_epoch, RemovableHandle.next_id, RemovableHandle.removed)


def _is_guardable_constant(v):
    from ember.core._device import device
    from ember.core._dtype import dtype
    if isinstance(v, _PRIMITIVES) or isinstance(v, (dtype, device, slice)):
        return True
    if type(v) in (tuple, list):
        return all(_is_guardable_constant(x) for x in v)
    import enum
    return isinstance(v, enum.Enum)


class GuardBuilder:
    """Collects conditions, then compiles them."""

    def __init__(self):
        self.lines = []             # (python condition or "name = expr" binding, description)
        self.ns = {"TensorBase": TensorBase, "_dispatch_state": dispatch_state,
                   "_autocast_state": autocast_state, "_module_epoch": _module_epoch,
                   "_cell": lambda c: c.cell_contents}
        self._n = 0
        self.count = 0

    def const(self, value, prefix="C"):
        name = f"{prefix}{self._n}"
        self._n += 1
        self.ns[name] = value
        return name

    def add(self, cond, why):
        self.lines.append((cond, why))
        self.count += 1

    def bind(self, name, expr):
        self.lines.append((f"{name} = {expr}", None))

    def conditions(self):
        """The conditions added so far, as Python over the flattened arguments ``L``."""
        return [cond for cond, why in self.lines if why is not None]

    # ---- what a capture assumed -------------------------------------------------------------
    def structure(self, spec, n_leaves):
        self.add(f"spec == {self.const(spec)}", "the arguments have a different structure")
        self.add(f"len(L) == {n_leaves}", "a different number of arguments")

    def tensor(self, expr, t, what, sizes=None):
        """Guards on tensor ``t`` read by ``expr``; ``sizes`` (a fake's symbolic sizes)
        leaves symbolic dims unguarded here."""
        self.add(f"isinstance({expr}, TensorBase)", f"{what} is no longer a tensor")
        self.add(f"{expr}.dtype is {self.const(t.dtype)}",
                 f"{what}: dtype mismatch, expected {t.dtype}")
        self.add(f"{expr}.device == {self.const(t.device)}",
                 f"{what}: device mismatch, expected {t.device}")
        self.add(f"{expr}.requires_grad is {t.requires_grad}",
                 f"{what}: requires_grad mismatch, expected {t.requires_grad}")
        if sizes is None:
            shape = tuple(t.shape)
            self.add(f"{expr}.shape == {shape!r}",
                     f"{what}: size mismatch, expected {list(shape)}")
            self.add(f"{expr}.stride() == {tuple(t.stride())!r}",
                     f"{what}: stride mismatch, expected {list(t.stride())}")
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

    def lifted(self, t, source):
        holder = self.const(source.holder, "H")
        obj = self.const(t, "T")
        self.add(f"{source.expr(holder)} is {obj}", f"{source.name} is a different tensor")
        self.tensor(obj, t, source.name)

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
            self.add(f"type({read}) is {self.const(type(value))} and "
                     f"{read} == {self.const(value)}",
                     f"{source.kind} '{source.name}' changed, expected {value!r}")

    # ---- compile -----------------------------------------------------------------------------
    def compile(self):
        """(check, first_failure): ``check(spec, L)`` -> bool; ``first_failure(spec, L)`` ->
        the description of the first condition that fails (None if all hold)."""
        body_check, body_why = [], []
        for i, (line, why) in enumerate(self.lines):
            if why is None:
                body_check.append(f"    {line}")
                body_why.append(f"    {line}")
            else:
                body_check.append(f"    if not ({line}): return False")
                body_why.append(f"    if not ({line}): return _why[{i}]")
        src = ("def check(spec, L):\n" + "\n".join(body_check) + "\n    return True\n"
               "def first_failure(spec, L):\n" + "\n".join(body_why) + "\n    return None\n")
        ns = dict(self.ns)
        ns["_why"] = [w for _, w in self.lines]
        import math
        ns["_math"] = math
        exec(compile(src, "<ember guards>", "exec"), ns)
        self.source = src
        return ns["check"], ns["first_failure"]
