"""Compiled callables: the cache of captured graphs, recompiles, and the Module wrapper.

A compiled function keeps a list of entries, newest first.  A call flattens its arguments,
runs the first entry whose guards hold, and on a miss captures a new one (a *recompile*
once the function has entries).  Under ``dynamic=None`` a size that changed makes that
dimension symbolic for the next capture; past ``config.recompile_limit`` entries the
function warns once, saying why, and runs eagerly.

ember cannot rewrite Python bytecode, so a capture records a whole call: when it breaks
(a side effect, an op without a graph form) the call runs eagerly, and so do later calls
that meet the same guards.  A small tensor's values read into Python (data-dependent
control flow: ``if x.sum() > 0``) do not break a capture on real tensors: its graph is for
those values and checks them after it runs; when they differ, the entry's result is
dropped and the next entry (or a new capture, for the new values) answers.  Values that
keep changing (VALUE_PATHS_MAX captures) make later captures break there, as before.
"""
import functools
import threading
import warnings
import weakref

from ember import _logging
from ember._dynamo import config, stance
from ember._dynamo.capture import current_recorder
from ember._dynamo.convert import VALUE_MISS, CaptureFailed, capture_fake, capture_real
from ember._dynamo.exc import FailOnRecompileLimitHit
from ember._dynamo.pytree import tree_flatten
from ember._dynamo.sources import SourceIndex
from ember._dynamo.utils import counters
from ember.core._tensor import TensorBase
from ember.nn.modules.module import Module

__all__ = ["OptimizedModule", "disable", "graph_break", "is_compiling", "mark_dynamic",
           "mark_static", "mark_static_address", "optimize", "reset"]

_all_compiled = weakref.WeakSet()      # for reset()
VALUE_PATHS_MAX = 3     # captures for changed values read into Python before such reads break


def is_compiling():
    """True while ember.compile is capturing a call on this thread."""
    return current_recorder() is not None


def _fn_name(fn):
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"'{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}'{where}"


class CompiledFunction:
    """``fn`` compiled: the per-function cache of entries and the call path."""

    def __init__(self, fn, backend, *, fullgraph=False, dynamic=None, module=None,
                 recompile_limit=None, name=None):
        self.fn = fn
        self._backend = backend
        self.recompile_limit = recompile_limit      # None: config.recompile_limit
        self.name = name
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.module = module
        self.sig_fn = module.forward if module is not None else fn
        self.entries = []
        self.auto_dynamic = {}          # leaf index -> dims seen changing
        self.warned = False
        self.value_guards = True        # captures go on past values read into Python
        self.value_paths = 0            # captures made because such values changed
        self.ran_eagerly = False        # the first call under "eager_then_compile"
        self.trusted = False
        self._lock = threading.RLock()
        _all_compiled.add(self)

    @property
    def backend(self):
        """This function's backend, or the one ``set_stance(force_backend=...)`` forces."""
        forced = stance.current().force_backend
        return self._backend if forced is None else forced

    def limit(self):
        """How many graphs this function may hold before it runs eagerly."""
        return config.recompile_limit if self.recompile_limit is None else self.recompile_limit

    # ---- sources the capture may lift tensors from ------------------------------------------
    def make_index(self):
        index = SourceIndex()
        fn = self.fn
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, Module):
            index.add_module(owner, "self")
            fn = fn.__func__
        if self.module is not None:
            index.add_module(self.module, "self")
            # forward's globals, closure and defaults (fn is the generic Module.__call__)
            index.add_function(getattr(self.module.forward, "__func__", None))
        index.add_function(fn)
        return index

    @staticmethod
    def index_modules(rec):
        return rec.sources.modules.values()

    # ---- the call path -----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if current_recorder() is not None:          # inside another capture: inline
            return self.fn(*args, **kwargs)
        if stance.current().stance == "force_eager":
            return self.fn(*args, **kwargs)
        leaves, spec = tree_flatten((args, kwargs))
        value_miss = False
        for entry in self.entries:
            try:
                hit = entry.check(spec, leaves)
            except Exception:
                hit = False
            if hit:
                result = entry.run(self.fn, args, kwargs, leaves)
                if result is not VALUE_MISS:
                    return result
                value_miss = True       # captured for other values: try the next entry
        with self._lock:
            return self._miss(args, kwargs, leaves, spec, value_miss)

    def _miss(self, args, kwargs, leaves, spec, value_miss=False):
        reason = None
        now = stance.current().stance
        if now == "eager_then_compile" and not self.entries and not self.ran_eagerly:
            self.ran_eagerly = True
            return self.fn(*args, **kwargs)
        if self.entries:
            last = self.entries[0]
            try:
                reason = last.first_failure(spec, leaves) or "guards failed"
            except Exception as e:
                reason = f"guards failed ({type(e).__name__})"
            if value_miss:
                reason = self._value_miss()
            if now == "fail_on_recompile":
                code = getattr(self.fn, "__code__", None)
                where = (f"filename: '{code.co_filename}', function name: '{code.co_name}', "
                         f"line number: {code.co_firstlineno}") if code is not None else \
                    f"function: {_fn_name(self.fn)}"
                raise RuntimeError(f"Detected recompile when torch.compile stance is "
                                   f"'fail_on_recompile'. {where}\n    triggered by the "
                                   f"following guard failure(s):\n    - {reason}")
            if now == "eager_on_recompile":
                counters["stats"]["eager_calls"] += 1
                return self.fn(*args, **kwargs)
            _logging.log("recompiles", f"Recompiling function {_fn_name(self.fn)}\n    "
                                       f"triggered by the following guard failure(s):\n"
                                       f"    - {reason}")
            if len(self.entries) >= self.limit():
                return self._over_limit(reason, args, kwargs)
            counters["stats"]["recompiles"] += 1
            counters["recompiles"][reason] += 1
            self._note_changed_sizes(last, leaves)
        dims = self._dynamic_dims(leaves)
        if dims and not all(x.is_contiguous() for x in leaves if isinstance(x, TensorBase)):
            dims = None         # fake tensors are contiguous: capture this layout for real
        if dims:
            try:
                entry = capture_fake(self, args, kwargs, leaves, spec, dims)
            except CaptureFailed as e:
                counters["graph_break"][f"dynamic capture failed: {e.reason}"] += 1
            else:
                self.entries.insert(0, entry)
                return entry.run(self.fn, args, kwargs, leaves)
        entry, result = capture_real(self, args, kwargs, leaves, spec)
        if entry is not None:
            self.entries.insert(0, entry)
        return result

    def _over_limit(self, reason, args, kwargs):
        if self.fullgraph:
            raise FailOnRecompileLimitHit(
                f"recompile_limit reached with fullgraph=True for {_fn_name(self.fn)}; last "
                f"reason: {reason}")
        if not self.warned:
            self.warned = True
            warnings.warn(f"ember._dynamo hit config.recompile_limit ({self.limit()})"
                          f"\n   function: {_fn_name(self.fn)}\n   last reason: {reason}\n"
                          f"Calls that match none of its {len(self.entries)} graphs now run "
                          f"eagerly.", UserWarning, stacklevel=4)
        counters["stats"]["eager_calls"] += 1
        return self.fn(*args, **kwargs)

    def _value_miss(self):
        """A value read into Python differed from every captured one: the next capture
        follows the new values, unless they have changed VALUE_PATHS_MAX times; then
        captures stop at such reads (the values change from call to call: a loss's
        ``item()``) and the value-guarded graphs go."""
        self.value_paths += 1
        reason = "a tensor's values read into Python differ from those every graph was " \
                 "captured for"
        if self.value_paths >= VALUE_PATHS_MAX:
            self.value_guards = False
            self.entries[:] = [e for e in self.entries if not getattr(e, "value_reads", ())]
            reason += f" ({VALUE_PATHS_MAX} times: later captures stop at such reads)"
        return reason

    # ---- dynamic shapes ----------------------------------------------------------------------
    def _note_changed_sizes(self, last, leaves):
        if self.dynamic is not None or not config.automatic_dynamic_shapes:
            return
        for i, shape in last.leaf_shapes.items():
            x = leaves[i] if i < len(leaves) else None
            if isinstance(x, TensorBase) and x.dim() == len(shape):
                changed = {d for d, (a, b) in enumerate(zip(x.shape, shape)) if a != b}
                if changed:
                    self.auto_dynamic.setdefault(i, set()).update(changed)

    def _dynamic_dims(self, leaves):
        dims = {}
        for i, x in enumerate(leaves):
            if not isinstance(x, TensorBase) or self.dynamic is False:
                continue
            d = set(range(x.dim())) if self.dynamic else set(self.auto_dynamic.get(i, ()))
            d |= set(x.__dict__.get("_dynamo_dynamic_indices", ()))
            d -= set(x.__dict__.get("_dynamo_static_indices", ()))
            d = {k for k in d if k < x.dim()}   # dims seen changing when it had more
            if d:
                dims[i] = d
        return dims

    def reset(self):
        self.entries.clear()
        self.auto_dynamic.clear()
        self.warned = False
        self.value_guards, self.value_paths = True, 0


def _wrap_function(fn, compiled):
    @functools.wraps(fn)
    def compiled_fn(*args, **kwargs):
        return compiled(*args, **kwargs)
    compiled_fn._torchdynamo_orig_callable = fn
    compiled_fn._ember_compiled = compiled
    return compiled_fn


class OptimizedModule(Module):
    """What ``ember.compile(module)`` returns: a Module whose calls run the compiled
    ``_orig_mod`` (its state_dict keys are prefixed ``_orig_mod.``, as PyTorch's)."""

    _torchdynamo_orig_callable = None

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled
        self.__dict__["_torchdynamo_orig_callable"] = mod

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name):
        mods = self.__dict__.get("_modules")
        if mods is None or "_orig_mod" not in mods:
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        if name == "_orig_mod":
            return mods["_orig_mod"]
        return getattr(mods["_orig_mod"], name)

    @property
    def training(self):
        return self._modules["_orig_mod"].training if "_orig_mod" in self.__dict__.get(
            "_modules", {}) else self.__dict__.get("_training", True)

    @training.setter
    def training(self, value):
        self.__dict__["_training"] = value
        mods = self.__dict__.get("_modules")
        if mods and "_orig_mod" in mods:
            mods["_orig_mod"].training = value

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(self._orig_mod)))


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False,
             guard_filter_fn=None, recompile_limit=None, name=None):
    """A decorator compiling its function or Module with ``backend`` (``nopython``:
    fullgraph); ``recompile_limit`` overrides ``config.recompile_limit`` for it."""
    from ember._dynamo.backends.registry import lookup_backend

    def wrap(model):
        if disable or _is_disabled(model):
            return model
        be = lookup_backend(backend) if isinstance(backend, str) else backend
        if isinstance(model, Module):
            compiled = CompiledFunction(model.__call__, be, fullgraph=nopython,
                                        dynamic=dynamic, module=model,
                                        recompile_limit=recompile_limit, name=name)
            return OptimizedModule(model, compiled)
        if not callable(model):
            raise AssertionError(f"A callable function is expected, but {type(model)} is "
                                 f"provided.")
        inner = getattr(model, "_torchdynamo_orig_callable", model)
        compiled = CompiledFunction(inner, be, fullgraph=nopython, dynamic=dynamic,
                                    recompile_limit=recompile_limit, name=name)
        return _wrap_function(inner, compiled)
    return wrap


def _is_disabled(fn):
    return getattr(fn, "_ember_dynamo_disable", False)


def disable(fn=None, recursive=True, *, reason=None):
    """Run ``fn`` eagerly, never compiled; called during a capture it stops the capture
    (the call then runs eagerly).  ``disable()`` alone is a decorator."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    orig = getattr(fn, "_torchdynamo_orig_callable", fn)
    if isinstance(orig, Module):
        orig = orig.__call__

    @functools.wraps(orig)
    def disabled(*args, **kwargs):
        rec = current_recorder()
        if rec is not None:
            rec.note_break(f"{getattr(orig, '__qualname__', orig)} is marked "
                           f"ember.compiler.disable" + (f" ({reason})" if reason else ""))
        return orig(*args, **kwargs)
    disabled._ember_dynamo_disable = True
    return disabled


def mark_dynamic(t, index, *, min=None, max=None):
    """Make dim(s) ``index`` of ``t`` symbolic in the next capture that sees ``t``."""
    dims = index if isinstance(index, (list, tuple)) else [index]
    t.__dict__.setdefault("_dynamo_dynamic_indices", set()).update(dims)


def mark_static(t, index=None):
    """Keep dim(s) ``index`` of ``t`` (all when None) specialised."""
    dims = range(t.dim()) if index is None else (index if isinstance(index, (list, tuple))
                                                 else [index])
    t.__dict__.setdefault("_dynamo_static_indices", set()).update(dims)


def mark_static_address(t, guard=False):
    """Mark ``t``'s memory as fixed across calls (a KV cache, say): PyTorch's CUDA graphs
    then skip copying it.  ember has no CUDA graphs: the mark is kept and changes nothing."""
    if not isinstance(t, TensorBase):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t.__dict__["_dynamo_static_input_type"] = "guarded" if guard else "unguarded"


def graph_break(msg=""):
    """End the capture here: the call runs eagerly (ember resumes no graph after a break);
    under ``fullgraph=True`` it raises.  Outside a capture it does nothing."""
    rec = current_recorder()
    if rec is not None:
        rec.stop(f"graph_break() called{': ' + msg if msg else ''}")


def reset():
    """Forget every captured graph and counter (``torch._dynamo.reset``)."""
    from ember._dynamo.utils import reset_counters
    for c in _all_compiled:
        c.reset()
    reset_counters()
