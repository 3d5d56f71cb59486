"""Capture: one call of the user's code recorded into an FX graph through the dispatcher.

While a Recorder is active on a thread, every primitive op holds a kernel at the PythonMode
dispatch key and the thread includes the key, so each op call reaches ``record_op`` before
anything else: the op runs below the key (autocast, autograd, the backend or the fake-tensor
kernels) and a ``call_function`` node naming ``ember.ops.ember.<op>`` is appended.  Composite
ops are not intercepted: their bodies run with the key live, so the graph holds primitives.
Factories and reads of tensor values into Python report through the core's capture hooks.

Values are tracked by identity, and by storage and geometry for the aliases the core makes
without an op (``detach``, saved tensors): a tensor that is neither recorded nor an input is
*lifted* into a placeholder when its origin can be guarded (a parameter, buffer or
attribute of a known Module, a global, a closure cell), else the capture stops.

Two kinds of values: real tensors (static shapes; the call really runs, so the first call's
results are eager's) or fake tensors with symbolic sizes (dynamic shapes).  A *break*
(data-dependent control flow, an op without a graph form, an untracked tensor) stops
recording; with real tensors the call then simply finishes eagerly.  On real tensors a
small tensor's values read into Python (``if x.sum() > 0``, ``int(n)``) need not stop it:
the capture goes on for those values, guarded by them (``Recorder.read_value``).
"""
import operator
import os
import sys
import threading
from collections import namedtuple

from ember._dynamo.modes import op_mode
from ember.core import _dispatch, _state
from ember.core import _tensor as _core
from ember.core._autograd import set_requires_grad
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase
from ember.core.mode_keys import redispatch_below
from ember.fx.graph import Graph

__all__ = ["GraphBreak", "Recorder", "TensorMeta", "current_recorder"]

_BIT = 1 << int(DispatchKey.PythonMode)
_local = threading.local()
_lock = threading.Lock()
_installed = 0
_EMBER_DIRS = None

# keyword arguments the kernels default to: left out of graph nodes, for readable code
_DEFAULTS = {"out": None, "dtype": None, "generator": None, "alpha": 1}
_KEEP = object()
VALUE_GUARD_MAX = 16        # elements of a tensor whose values read into Python a guard checks

TensorMeta = namedtuple("TensorMeta", ["shape", "dtype", "device", "stride", "requires_grad"])
TensorMeta.__doc__ = "What a graph node's tensor value looked like when it was captured."


class GraphBreak(Exception):
    """Raised inside a fake-tensor capture when it cannot go on; ``reason`` says why."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def current_recorder():
    return getattr(_local, "recorder", None)


# libraries ember's own code calls into: their frames are not the user's
_DEPENDENCIES = ("numpy", "scipy", "sympy", "mpmath", "pluggy", "threadpoolctl", "ml_dtypes",
                 "ember_cpu", "mpi4py", "safetensors")


def _ember_dirs():
    """Path prefixes of code that is not the user's: ember's own folders, the libraries it
    uses, the device plugins loaded and Python's standard library (frozen modules included)."""
    global _EMBER_DIRS
    if _EMBER_DIRS is None:
        import importlib.util
        import sysconfig

        import ember
        root = os.path.dirname(os.path.dirname(ember.__file__))
        dirs = [os.path.join(root, d) + os.sep for d in
                ("ember", "core", "nn", "optim", "backends", "distributed")]
        from ember import backends
        plugins = {r["module"].__name__.partition(".")[0] for r in backends._loaded.values()}
        for name in (*_DEPENDENCIES, *sorted(plugins)):
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is None:
                continue
            locations = spec.submodule_search_locations or []
            dirs.extend(loc + os.sep for loc in locations)
            if not locations and spec.origin:       # a one-file module (threadpoolctl)
                dirs.append(spec.origin)
        _EMBER_DIRS = tuple(dirs) + ("<frozen ", sysconfig.get_paths()["stdlib"] + os.sep)
    return _EMBER_DIRS


def user_location():
    """``file:line`` of the innermost frame outside ember itself."""
    f = sys._getframe(1)
    dirs = _ember_dirs()
    while f is not None:
        if not f.f_code.co_filename.startswith(dirs):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


_SLICING = ("narrow", "select")


def _specialise_sliced_dim(args):
    """narrow/select with plain int bounds on a symbolic dim: the ints may have come from
    the hint size (chunk, split and unbind compute them from the core's sizes), so that
    dim's size is guarded to its hint (x.chunk(2)[1] had replayed the first size's
    bounds)."""
    from ember._sym import SymInt
    t, dim = args[0], args[1] if len(args) > 1 else None
    if not isinstance(t, TensorBase) or not isinstance(dim, int) or t.dim() == 0:
        return
    size = t.shape[dim % t.dim()]
    if isinstance(size, SymInt) and not any(isinstance(a, SymInt) for a in args[2:]):
        int(size)


def _has_bool_tensor(x):
    if isinstance(x, TensorBase):
        return x.dtype.name == "bool"
    if isinstance(x, (tuple, list)):
        return any(_has_bool_tensor(v) for v in x)
    return False


def geometry(t):
    """(storage id, offset, sizes, strides, dtype) of the memory ``t`` views; a fake
    tensor answers for its hint meta tensor."""
    t = t.__dict__.get("_meta", t) if type(t).__name__ == "FakeTensor" else t
    return (t.untyped_storage()._cdata, t.storage_offset(), tuple(t.shape), t.stride(),
            t.dtype)


def describe(t):
    return TensorMeta(tuple(t.shape), t.dtype, t.device, tuple(t.stride()), t.requires_grad)


# ---- the PythonMode kernels ------------------------------------------------------------------

class _CaptureKernel:
    __slots__ = ("op", "target")

    def __init__(self, op):
        from ember._ops import ops
        self.op = op
        self.target = getattr(ops.ember, op.name)

    def __call__(self, *args, **kwargs):
        rec = getattr(_local, "recorder", None)
        if rec is None or not rec.recording:
            return redispatch_below(self.op, DispatchKey.PythonMode, args, kwargs)
        return rec.record_op(self, args, kwargs)


def _install():
    global _installed
    with _lock:
        if _installed == 0:
            for op in _dispatch.all_ops().values():
                if op.entry is not None and op.family != -1:
                    op.register(DispatchKey.PythonMode, _CaptureKernel(op))
        _installed += 1


def _uninstall():
    global _installed
    with _lock:
        _installed -= 1
        if _installed == 0:
            for op in _dispatch.all_ops().values():
                op.unregister(DispatchKey.PythonMode)


class _Hooks:
    """The core's capture hooks, forwarded to this thread's recorder."""

    @staticmethod
    def factory(kind, *args):
        rec = getattr(_local, "recorder", None)
        return None if rec is None or not rec.recording else rec.record_factory(kind, args)

    @staticmethod
    def untracked_allocation():
        rec = getattr(_local, "recorder", None)
        if rec is not None and rec.recording:
            rec.stop(f"an ember function computed a tensor past the dispatcher (at "
                     f"{user_location()}); a replayed graph would not compute it")

    @staticmethod
    def side_effect(what):
        rec = getattr(_local, "recorder", None)
        if rec is not None and rec.recording:
            rec.stop(f"side effect: {what} (at {user_location()})")

    @staticmethod
    def data_read(t, what):
        rec = getattr(_local, "recorder", None)
        if rec is not None and rec.recording:
            rec.read_value(t, what)


def read_values(t):
    """What a value guard compares: the repr of ``t``'s values (exact for floats, -0.0 and
    NaN included)."""
    return repr(t.detach().tolist())


class Untraced:
    """Run a block with the capture's key excluded: what it computes is not recorded."""

    def __enter__(self):
        self.inc, self.exc = _state._get_tls_keys()
        _state._set_tls_keys(self.inc, self.exc | _BIT)

    def __exit__(self, *a):
        inc, exc = _state._get_tls_keys()
        _state._set_tls_keys(inc, (exc & ~_BIT) | (self.exc & _BIT))
        return False


class _Paused:
    def __init__(self, rec):
        self.rec = rec

    def __enter__(self):
        self.was, self.rec.recording = self.rec.recording, False
        return self

    def __exit__(self, *a):
        self.rec.recording = self.was
        return False


class _Phase:
    """One graph being recorded (the forward, or the backward of a joint capture)."""

    def __init__(self, name):
        self.name = name
        self.graph = Graph()
        self.env = {}               # id(tensor) -> (node, tensor)
        self.aliases = {}           # geometry -> node
        self.storages = set()       # ids of storages holding recorded values
        self.lifted = []            # (tensor, node, source)
        self.input_storages = set()  # storages of placeholders (arguments, lifted tensors)
        self.anchor = None          # the last placeholder: lifted inputs go after it
        self.writes_input = False   # an op wrote into a placeholder's memory

    def bind(self, t, node):
        self.env[id(t)] = (node, t)
        g = geometry(t)
        self.aliases[g] = node
        self.storages.add(g[0])
        node.meta["val"] = t

    def find(self, t):
        e = self.env.get(id(t))
        if e is not None and e[1] is t:
            return e[0]
        return self.aliases.get(geometry(t))

    def placeholder(self, name):
        g = self.graph
        if self.anchor is None:
            ctx = g.inserting_before(next(iter(g.nodes), None))
        else:
            ctx = g.inserting_after(self.anchor)
        with ctx:
            node = g.placeholder(name)
        self.anchor = node
        return node


class Recorder:
    """Records the ops of one call.

    Args:
        sources: a ``sources.SourceIndex`` saying where tensors that are not inputs come
            from (so they can be lifted with a guard).
        fake_mode: the FakeTensorMode of a dynamic-shape capture; None records real
            tensors.
        fullgraph: raise ``Unsupported`` at the first break instead of finishing eagerly.
        value_guards: go on past reads of tensor values into Python (``read_value``).
    """

    def __init__(self, sources, fake_mode=None, fullgraph=False, value_guards=False):
        self.sources = sources
        self.fake_mode = fake_mode
        self.fullgraph = fullgraph
        self.fw = _Phase("forward")
        self.cur = self.fw
        self.bw = None
        self.saved = {}             # forward node -> backward placeholder
        self.recording = True
        self.breaks = []
        self.factories = []         # (tensor, node) made by factories
        self.fakes = {}             # id(real tensor) -> its fake (fake captures)
        self.symbolic = None        # sym expr -> node conversion (fake captures)
        self.own_epoch_moves = 0    # Module attribute writes of the capture's own GraphModules
        self.modes = set()          # the grad/inference/autocast modes forward ops ran in
        self.replay_mode = None     # the one to replay them in, where not the caller's
        self.value_guards = value_guards
        self.value_reads = []       # (node, bytes read, reason) per value guard
        self._prev = None

    # ---- activation ------------------------------------------------------------------------
    def __enter__(self):
        if getattr(_local, "recorder", None) is not None:
            raise RuntimeError("ember.compile: a capture is already running on this thread")
        _install()
        self._prev_hooks = _core._set_capture_hooks(_Hooks)
        _local.recorder = self
        inc, exc = _state._get_tls_keys()
        self._prev = (inc, exc)
        _state._set_tls_keys(inc | _BIT, exc & ~_BIT)
        return self

    def __exit__(self, *exc):
        # only the PythonMode bit goes back: grad mode and the like stay as the call left them
        inc, exc = _state._get_tls_keys()
        _state._set_tls_keys((inc & ~_BIT) | (self._prev[0] & _BIT),
                             (exc & ~_BIT) | (self._prev[1] & _BIT))
        _local.recorder = None
        _core._set_capture_hooks(self._prev_hooks)
        _uninstall()
        return False

    # ---- breaks ------------------------------------------------------------------------------
    def stop(self, reason):
        """The capture cannot go on: under ``fullgraph`` raise; with fake tensors raise a
        GraphBreak; with real tensors stop recording and let the call finish eagerly."""
        if not self.recording:
            return
        self.breaks.append(reason)
        self.recording = False
        if self.fullgraph:
            from ember._dynamo.exc import Unsupported
            raise Unsupported(reason)
        if self.fake_mode is not None:
            raise GraphBreak(reason)

    def read_value(self, t, what):
        """``t``'s values are read into Python (``item``, a host copy): the code after the
        read depends on them.  A capture on real tensors goes on with the values as
        constants and a *value guard*: the graph also outputs ``t``, and a replay whose
        ``t`` differs is discarded (the call then runs on a graph captured for the new
        values, or eagerly).  Elsewhere (fake tensors, ``fullgraph``, a subgraph or the
        backward, large tensors, NumPy views that could be written) the capture stops."""
        reason = (f"data-dependent: {what}() of a tensor read its values into Python "
                  f"(at {user_location()})")
        if self.fake_mode is not None or self.fullgraph or not self.value_guards or \
                self.cur is not self.fw or what not in ("item", "host copy") or \
                t.numel() > VALUE_GUARD_MAX:
            return self.stop(reason)
        node = self.node_of(t)
        if node is None or not self.recording:
            return None
        with self.paused(), Untraced():
            value = read_values(t)
        self.value_reads.append((node, value, reason))
        return None

    def note_break(self, reason):
        """Record a break, the call going on eagerly; under ``fullgraph`` raise at once:
        from the side-effect monitor's profile function that is before the side effect
        happens (the call it would make, the store it would run), as PyTorch, which never
        runs the function, never runs its side effects."""
        if self.recording:
            self.breaks.append(reason)
            self.recording = False
            if self.fullgraph:
                from ember._dynamo.exc import Unsupported
                raise Unsupported(reason)
            if self.fake_mode is not None:
                # a run on fake tensors cannot finish eagerly: it stops before the effect
                # (which would see symbolic sizes), and the call runs again on real tensors
                raise GraphBreak(reason)

    def paused(self):
        """A context in which the recorder records nothing and stops at nothing (reading a
        predicate's value, running a branch again eagerly)."""
        return _Paused(self)

    # ---- inputs ------------------------------------------------------------------------------
    def add_input(self, t, name, value=None):
        """A placeholder for input tensor ``t`` (recorded as ``value``: its fake, if any)."""
        node = self.cur.placeholder(name)
        self.cur.bind(t if value is None else value, node)
        self.cur.input_storages.add(geometry(t if value is None else value)[0])
        if value is not None:
            self.fakes[id(t)] = value
        return node

    def add_symbol_input(self, name, symint):
        node = self.cur.placeholder(name)
        node.meta["val"] = symint
        return node

    # ---- tensors as node arguments --------------------------------------------------------------
    def node_of(self, t):
        """The node holding ``t``'s value in the graph being recorded (lifting it when it
        comes from outside the call)."""
        node = self.cur.find(t)
        if node is not None:
            return node
        if getattr(self.cur, "parent", None) is not None:     # recording a subgraph
            from ember._dynamo.subgraph import lift_tensor
            return lift_tensor(self, t)
        if self.bw is not None and self.cur is self.bw:
            fnode = self.fw.find(t)
            if fnode is not None:
                return self._saved(fnode)
        g = geometry(t)
        if g[0] in self.cur.storages or g[0] in self.fw.storages:
            self.stop(f"a view of a captured tensor was made outside the dispatcher "
                      f"(at {user_location()})")
            return None
        if type(t).__name__ == "FakeTensor" or t.is_meta:
            self.stop(f"a fake tensor appeared that the capture did not make "
                      f"(at {user_location()})")
            return None
        return self._lift(t)

    def _saved(self, fnode):
        node = self.saved.get(fnode)
        if node is None:
            node = self.bw.placeholder(f"saved_{fnode.name}")
            node.meta["val"] = fnode.meta.get("val")
            self.saved[fnode] = node
        return node

    def _lift(self, t):
        source = self.sources.find(t)
        if source is None:
            self.stop(f"a tensor of shape {list(t.shape)} comes from a place the capture "
                      f"cannot guard (not an argument, nor a parameter, buffer or attribute "
                      f"of a Module, nor a global or closure variable; at {user_location()})")
            return None
        node = self.cur.placeholder(source.name)
        value = t
        if self.fake_mode is not None:
            with Untraced():
                value = self.fake_mode.from_tensor(t, static_shapes=True)
            if t.requires_grad:
                set_requires_grad(value, True)
            self.fakes[id(t)] = value
        self.cur.bind(t, node)
        self.cur.input_storages.add(geometry(value)[0])
        if value is not t:
            node.meta["val"] = value
        self.cur.lifted.append((t, node, source))
        return node

    def _to_node(self, a):
        if isinstance(a, TensorBase):
            return self.node_of(a)
        if type(a).__name__ == "SymInt":
            return self.symbolic.node_for(a, self)
        if type(a) in (tuple, list):
            return type(a)(self._to_node(x) for x in a)
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            # ember.Size (a backward formula's saved shape): its SymInts become nodes too
            # (the whole Size had been kept as a constant: the first size's value)
            return tuple(self._to_node(x) for x in a)
        if isinstance(a, dict):
            return {k: self._to_node(v) for k, v in a.items()}
        return a

    def _to_value(self, a):
        """The value an op runs on in a fake capture: a real tensor's fake, and for an alias
        the core made without an op (a saved tensor, ``detach``: a plain meta tensor at
        the hint sizes) the fake of the value it aliases, so sizes stay symbolic."""
        if isinstance(a, TensorBase):
            if type(a).__name__ == "FakeTensor":
                return a
            fake = self.fakes.get(id(a))
            if fake is not None:
                return fake
            node = self.cur.find(a) or (self.fw.find(a) if self.bw is not None else None)
            val = node.meta.get("val") if node is not None else None
            return val if type(val).__name__ == "FakeTensor" else a
        if type(a) in (tuple, list):
            return type(a)(self._to_value(x) for x in a)
        if type(a) is dict:
            return {k: self._to_value(v) for k, v in a.items()}
        return a

    # ---- ops ---------------------------------------------------------------------------------
    def record_op(self, kernel, args, kwargs):
        op = kernel.op
        if op.name == "index" and _has_bool_tensor(args):
            self.stop(f"indexing with a boolean mask gives a shape that depends on tensor data "
                      f"(at {user_location()})")
        if self.fake_mode is not None and op.name in _SLICING:
            _specialise_sliced_dim(args)
        node_args = self._to_node(args)
        node_kwargs = self._to_node(kwargs)
        if not self.recording:              # a lookup above stopped the capture
            return redispatch_below(op, DispatchKey.PythonMode, args, kwargs)
        if self.cur is not self.bw:
            self.modes.add(op_mode(args, kwargs))
        if self.fake_mode is not None:
            args, kwargs = self._to_value(args), self._to_value(kwargs)
        try:
            result = redispatch_below(op, DispatchKey.PythonMode, args, kwargs)
        except GraphBreak:
            raise
        except Exception as e:
            if self.fake_mode is not None:
                self.breaks.append(f"{op.name}: {type(e).__name__}: {e}")
                self.recording = False
            raise
        if not self.recording:
            return result
        graph = self.cur.graph
        node = graph.call_function(kernel.target, node_args, {
            k: v for k, v in node_kwargs.items() if _DEFAULTS.get(k, _KEEP) != v})
        out = kwargs.get("out")
        writes = kernel.target._is_impure or out is not None
        if writes:
            node.meta["is_impure"] = True
            written = out if out is not None else args[0] if args else None
            if isinstance(written, TensorBase) and \
                    geometry(written)[0] in self.cur.input_storages:
                self.cur.writes_input = True
                if written.requires_grad:
                    self.stop(f"{op.name} writes in place into an argument that requires "
                              f"grad (at {user_location()})")
        if op.name.endswith("_"):
            # an in-place kernel (fill_, copy_, ...) returns a status when it runs for real,
            # whatever a fake one returned: the node's value is not the tensor, which keeps
            # its node (the write happens in place, in program order).  Binding the tensor
            # to this node made a dynamic graph's later ops read the status (ones(n) + x
            # gave x)
            node.meta["is_impure"] = True
            return result
        if isinstance(result, TensorBase):
            self.cur.bind(result, node)
        elif isinstance(result, (tuple, list)):
            node.meta["val"] = tuple(result)
            for i, r in enumerate(result):
                if isinstance(r, TensorBase):
                    self.cur.bind(r, graph.call_function(operator.getitem, (node, i)))
                elif r is not None:
                    self.stop(f"{op.name} returned a Python {type(r).__name__}: its value "
                              f"depends on tensor data")
        elif result is not None:
            self.stop(f"{op.name} returned a Python {type(result).__name__}: its value "
                      f"depends on tensor data (at {user_location()})")
        else:
            node.meta["is_impure"] = True
        return result

    def record_factory(self, kind, args):
        """A factory called by the traced code: make its tensor (real, or fake with the
        requested sizes) and record the call."""
        import ember
        if self.cur is not self.bw:
            self.modes.add(op_mode((), {}))
        with Untraced():
            if kind == "empty":
                size, dtype, device, _ = args
                seq = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) \
                    else size
                if self.fake_mode is not None:
                    t = self.fake_mode.empty([int(s) if isinstance(s, bool) else s
                                              for s in seq], dtype=dtype, device=device)
                else:
                    t = ember.empty(*size, dtype=dtype, device=device)
                fn, fargs, fkwargs = ember.empty, tuple(seq), {"dtype": dtype, "device": device}
            else:
                arr, dtype, device = args
                if self.fake_mode is not None:
                    t = self.fake_mode.empty(arr.shape, dtype=dtype, device=device)
                else:
                    t = _core._from_host(arr, dtype, device)
                fn, fargs, fkwargs = _core._from_host, (arr.copy(), dtype, device), {}
        node = self.cur.graph.call_function(fn, self._to_node(fargs), fkwargs)
        self.cur.bind(t, node)
        self.factories.append((t, node))
        return t

    # ---- phases ------------------------------------------------------------------------------
    def begin_backward(self):
        """Record into a second graph, the backward of a joint capture: forward values it
        reads become its placeholders (and outputs of the forward)."""
        self.bw = _Phase("backward")
        self.cur = self.bw
        self.recording = True

    def output(self, phase, values):
        """The output node of ``phase``: a tuple of the nodes of ``values`` (None stays)."""
        prev, self.cur = self.cur, phase
        try:
            nodes = tuple(None if v is None else self.node_of(v) for v in values)
        finally:
            self.cur = prev
        return phase.graph.output(nodes)

    def finish(self):
        """Replace the captured values in node metadata by descriptions (real tensors must
        not stay alive with the graph)."""
        for phase in (self.fw, self.bw):
            if phase is None:
                continue
            for node in phase.graph.nodes:
                v = node.meta.get("val")
                if self.fake_mode is None and isinstance(v, TensorBase):
                    node.meta["val"] = describe(v)
                elif self.fake_mode is None and isinstance(v, tuple):
                    node.meta["val"] = tuple(describe(x) if isinstance(x, TensorBase) else x
                                             for x in v)
            phase.env.clear()
            phase.aliases.clear()
