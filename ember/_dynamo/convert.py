"""From one call to a cache entry: capture, graphs, backend, guards.

``capture_real`` records a call on its real arguments (static shapes): the call really runs,
so its result is eager's, whatever happens.  ``capture_fake`` records it on fake tensors
with symbolic sizes (dynamic shapes), then runs the compiled graphs on the real arguments.
Either gives a ``GraphEntry`` (graphs compiled by the backend, replayed while its guards
hold) or, when the capture broke, an ``EagerEntry`` (the same guards; the call runs eagerly).

A break never changes a result: with real tensors the call simply finishes eagerly; a fake
capture that fails is retried on the real arguments.  Values read into Python during a
real capture become *value guards* (``Recorder.read_value``): checked after the graphs run,
a differing value makes ``GraphEntry.run`` answer ``VALUE_MISS`` instead of a result.
"""
import inspect
import warnings

import ember
from ember import _logging
from ember._dynamo import config
from ember._dynamo.capture import GraphBreak, Recorder, Untraced, read_values
from ember._dynamo.exc import BackendCompilerFailed, Unsupported
from ember._dynamo.guards import GuardBuilder
from ember._dynamo.modes import caller_mode, replay_mode, replaying
from ember._dynamo.monitor import TENSOR_STATE, SideEffectMonitor
from ember._dynamo.pytree import tree_flatten, tree_unflatten
from ember._dynamo.utils import counters, timed
from ember.core import _autograd as _ag
from ember.core._tensor import TensorBase

__all__ = ["VALUE_MISS", "CaptureFailed", "EagerEntry", "GraphEntry", "capture_fake",
           "capture_real"]

class CaptureFailed(Exception):
    """A fake-tensor capture could not finish (``reason``); the call is retried on real
    tensors."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class _Entry:
    guard_conditions = ()           # the guards' conditions, as Python (for explain)

    def __init__(self, check, first_failure, leaf_shapes, n_guards):
        self.check = check
        self.first_failure = first_failure
        self.leaf_shapes = leaf_shapes          # leaf index -> captured shape (tensors)
        self.n_guards = n_guards


class EagerEntry(_Entry):
    """Calls like this one run eagerly (the capture broke: ``reason``)."""

    graphs = ()

    def __init__(self, check, first_failure, leaf_shapes, n_guards, reason):
        super().__init__(check, first_failure, leaf_shapes, n_guards)
        self.reason = reason

    def run(self, fn, args, kwargs, leaves):
        counters["stats"]["eager_calls"] += 1
        return fn(*args, **kwargs)


class GraphEntry(_Entry):
    """Compiled graphs and how to feed them from a call's flattened arguments."""

    def __init__(self, check, first_failure, leaf_shapes, n_guards, *, inputs, lifted,
                 sym_sources, out_spec, out_plan, forward=None, joint=None, graphs=(),
                 mode=None, value_reads=()):
        super().__init__(check, first_failure, leaf_shapes, n_guards)
        self.mode = mode                    # the modes.Mode the ops ran in, if not the caller's
        self.inputs = inputs                # leaf indices of the tensor inputs
        self.lifted = lifted                # tensors from outside the call
        self.sym_sources = sym_sources      # (leaf index, dim) per symbol
        self.out_spec, self.out_plan = out_spec, out_plan
        self.forward, self.joint = forward, joint
        self.graphs = graphs                # the GraphModules (for inspection)
        self.value_reads = value_reads      # (bytes read, reason) per value guard
        self.n_out = sum(k for k, _ in out_plan)

    def run(self, fn, args, kwargs, leaves):
        """The call's result from the graphs, or VALUE_MISS when a value guard failed (the
        graphs wrote nothing outside themselves: the result is only dropped)."""
        tensors = [leaves[i] for i in self.inputs]
        tensors.extend(self.lifted)
        syms = [leaves[i].shape[d] for i, d in self.sym_sources]
        if self.mode is not None:
            with replaying(self.mode):
                outs = self._call(syms, tensors)
        else:
            outs = self._call(syms, tensors)
        if self.value_reads:
            reads = self.joint.last_reads() if self.joint is not None else outs[self.n_out:]
            if any(read_values(t) != v for t, (v, _) in zip(reads, self.value_reads)):
                counters["stats"]["value_guard_misses"] += 1
                return VALUE_MISS
        return tree_unflatten([outs[v] if k else v for k, v in self.out_plan], self.out_spec)

    def _call(self, syms, tensors):
        if self.joint is not None:
            return self.joint(syms, tensors)
        return self.forward(*syms, *tensors)


# GraphEntry.run's answer when a value read into Python differs from the captured one
VALUE_MISS = object()


# ---- helpers -------------------------------------------------------------------------------

def _leaf_names(fn, args, kwargs, leaves_count, spec):
    """Readable placeholder names: the parameter a top-level tensor argument binds to."""
    names = {}
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    i = 0
    for pos, a in enumerate(args):
        n = len(tree_flatten(a)[0])
        base = params[pos] if pos < len(params) and params[pos] not in ("self",) else f"arg{pos}"
        for k in range(n):
            names[i + k] = base if n == 1 else f"{base}_{k}"
        i += n
    for key, v in kwargs.items():
        n = len(tree_flatten(v)[0])
        for k in range(n):
            names[i + k] = key if n == 1 else f"{key}_{k}"
        i += n
    return names


def _order_placeholders(graph, ordered):
    root = graph._root
    for ph in reversed(ordered):
        if root._next is not ph:
            root._next.prepend(ph)


def _check_outputs(rec, out_leaves):
    for v in out_leaves:
        if isinstance(v, TensorBase):
            continue
        from ember._dynamo.guards import _is_guardable_constant
        if not _is_guardable_constant(v):
            rec.note_break(f"the function returns a {type(v).__name__}, which a replayed graph "
                           f"could only return as the same object every call")


def _trace_backward(rec, out_tensors, diff_tensors, make_tangent):
    """Run the autograd engine from ``out_tensors`` (those requiring grad) to
    ``diff_tensors`` with fresh tangents, recording the backward graph.  Returns
    (indices of the outputs that got a tangent, the gradients)."""
    idx = [i for i, o in enumerate(out_tensors) if o.requires_grad]
    with Untraced():
        tangents = [make_tangent(out_tensors[i]) for i in idx]
    rec.begin_backward()
    if rec.symbolic is not None:
        rec.symbolic.add_placeholders(rec)
    for k, t in enumerate(tangents):
        rec.add_input(t, f"tangent_{k}")
    # the inputs' own tensor hooks stay out of the graph: the real backward runs them; so
    # does a retain_grad input's .grad, which the traced pass must not fill
    suspended = _ag._suspend_tensor_hooks(diff_tensors)
    retained = [(t, _ag._raw_grad(t)) for t in diff_tensors]
    try:
        grads = ember.autograd.grad([out_tensors[i] for i in idx], diff_tensors, tangents,
                                    retain_graph=True, allow_unused=True)
    finally:
        _ag._restore_tensor_hooks(suspended)
        for t, g in retained:
            if _ag._raw_grad(t) is not g:
                t.grad = g
    return idx, list(grads)


# factories whose result the graph owns: when the graph only writes it, nothing sees it
_FRESH = frozenset(["empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
                    "full_like", "empty_strided", "new_empty", "new_zeros", "new_full"])


def _drop_unread_allocations(graph):
    """Remove an allocation the graph only writes in place (``fill_``, ``zero_``) and never
    reads, with its writes: dead code elimination keeps them (writes are impure).  A
    backward graph has such pairs where the engine made zeros for the gradient of an
    output its formula ignores (layer norm's mean and rstd)."""
    for node in list(graph.nodes):
        if node.op != "call_function" or getattr(node.target, "__name__", None) not in _FRESH:
            continue
        users = list(node.users)
        if users and all(_only_writes(u, node) for u in users):
            for u in users:
                graph.erase_node(u)
            graph.erase_node(node)


def _only_writes(user, node):
    name = getattr(user.target, "__name__", "")
    return (user.op == "call_function" and name.endswith("_") and not name.startswith("_")
            and not user.users and user.args and user.args[0] is node
            and node not in user.args[1:] and node not in user.kwargs.values())


def _compile_graph(backend, graph, name):
    from ember.fx.graph_module import GraphModule
    from ember.nn.modules.module import Module
    _drop_unread_allocations(graph)
    graph.eliminate_dead_code()
    gm = GraphModule(Module(), graph, class_name=name)
    example = [n.meta.get("val") for n in graph.nodes if n.op == "placeholder"]
    counters["backend"][getattr(backend, "__name__", "backend")] += 1
    counters["stats"]["unique_graphs"] += 1
    try:
        with timed("backend_compile"):
            compiled = backend(gm, example)
    except Exception as e:
        raise BackendCompilerFailed(backend, e) from e
    return gm, compiled


def _tuple_output(fn):
    """Backends may return a single value for a one-output graph; runners want tuples."""
    def run(*args):
        out = fn(*args)
        return out if isinstance(out, (tuple, list)) else (out,)
    run.compiled = fn           # what the backend returned (for inspection)
    return run


# ---- building the entry ------------------------------------------------------------------------

def _build(cf, rec, leaves, spec, result, input_nodes, symctx, sizes_of, backward):
    """Graphs, backend compilation and guards for a finished capture."""
    out_leaves, out_spec = tree_flatten(result)
    out_tensors = [v for v in out_leaves if isinstance(v, TensorBase)]
    fw = rec.fw
    rec.cur = fw
    user_nodes = [rec.node_of(o) for o in out_tensors]
    guards = _guards(cf, rec, leaves, spec, symctx, sizes_of)
    check, first_failure = guards.compile()
    shapes = {i: tuple(x.shape) for i, x in enumerate(leaves) if isinstance(x, TensorBase)}
    counters["guards"]["total"] += guards.count
    counters["guards"]["last"] = guards.count
    _logging.log("guards", "GUARDS:\n" + "\n".join(f"  {c}" for c in guards.conditions()))
    if rec.value_reads and not rec.breaks and _writes_outside(rec):
        rec.breaks.append(rec.value_reads[0][2] + "; the graph writes into a tensor from "
                          "outside the call or draws random numbers, so a replay with other "
                          "values could not be undone")
    for _, _, reason in rec.value_reads if not rec.breaks else ():
        # PyTorch breaks the graph here and resumes after the read: counted and logged as
        # a break, though ember's graph goes on, guarded by the values read
        counters["graph_break"][reason] += 1
        _logging.log("graph_breaks", f"Graph break: {reason} (the graph goes on, guarded "
                                     f"by the values read)")
    if rec.breaks:
        reason = rec.breaks[0]
        counters["graph_break"][reason] += 1
        _logging.log("graph_breaks", f"Graph break: {reason}")
        return _eager_entry(check, first_failure, shapes, guards, reason)
    try:
        entry = _compile_entry(cf, rec, fw, user_nodes, out_leaves, out_spec, input_nodes,
                               symctx, backward, check, first_failure, shapes, guards.count)
    except BackendCompilerFailed as e:
        if not config.suppress_errors:
            raise
        # torch._dynamo.config.suppress_errors: calls like this one run eagerly
        warnings.warn(f"ember.compile: {e}; calls like this one run eagerly "
                      f"(torch._dynamo.config.suppress_errors)", RuntimeWarning, stacklevel=2)
        return _eager_entry(check, first_failure, shapes, guards, f"backend failed: {e}")
    entry.guard_conditions = guards.conditions()
    return entry


def _writes_outside(rec):
    """Whether running the forward graph leaves a trace outside it: a write into an
    argument's or lifted tensor's memory, or random draws (the generator advances)."""
    from ember._ops import _FAMILY_RANDOM, _RANDOM
    for node in rec.fw.graph.nodes:
        op = getattr(node.target, "_op", None) if node.op == "call_function" else None
        if op is not None and (op.family == _FAMILY_RANDOM or op.name in _RANDOM):
            return True
    return rec.fw.writes_input


def _eager_entry(check, first_failure, shapes, guards, reason):
    entry = EagerEntry(check, first_failure, shapes, guards.count, reason)
    entry.guard_conditions = guards.conditions()
    return entry


def _compile_entry(cf, rec, fw, user_nodes, out_leaves, out_spec, input_nodes, symctx,
                   backward, check, first_failure, shapes, n_guards):
    """The graphs of a finished capture, compiled by the backend, as a GraphEntry."""
    out_plan, k = [], 0
    for v in out_leaves:
        out_plan.append((True, k) if isinstance(v, TensorBase) else (False, v))
        k += isinstance(v, TensorBase)
    sym_phs = symctx.placeholders("forward") if symctx else []
    _order_placeholders(fw.graph, sym_phs + [input_nodes[i] for i in sorted(input_nodes)]
                        + [node for _, node, _ in fw.lifted])
    read_nodes = tuple(node for node, _, _ in rec.value_reads)
    if backward is None:
        fw.graph.output(tuple(user_nodes) + read_nodes)
        gm, compiled = _compile_graph(cf.backend, fw.graph, "GraphModule")
        graphs, entry_kw = (gm,), {"forward": _tuple_output(compiled)}
    else:
        tangent_idx, grads, diff_positions = backward
        bw = rec.bw
        rec.cur = bw
        grad_nodes = [None if g is None else rec.node_of(g) for g in grads]
        saved = list(rec.saved)
        fw.graph.output(tuple(user_nodes) + tuple(saved) + read_nodes)
        keep = [i for i, n in enumerate(grad_nodes) if n is not None]
        bw.graph.output(tuple(grad_nodes[i] for i in keep))
        tangents = [n for n in bw.graph.nodes if n.op == "placeholder"
                    and n.target.startswith("tangent_")]
        _order_placeholders(bw.graph, (symctx.placeholders("backward") if symctx else [])
                            + [rec.saved[s] for s in saved] + tangents
                            + [node for _, node, _ in bw.lifted])
        fgm, fcomp = _compile_graph(cf.backend, fw.graph, "GraphModule")
        bgm, bcomp = _compile_graph(cf.backend, bw.graph, "GraphModule")
        graphs = (fgm, bgm)
        from ember._dynamo.aot import CompiledJoint
        entry_kw = {"joint": CompiledJoint(
            _tuple_output(fcomp), _tuple_output(bcomp), len(sym_phs), len(user_nodes),
            [diff_positions[i] for i in keep], tangent_idx,
            [i for i, o in enumerate(v for v in out_leaves if isinstance(v, TensorBase))
             if not o.requires_grad],
            [t for t, _, _ in bw.lifted], len(read_nodes))}
    return GraphEntry(check, first_failure, shapes, n_guards,
                      inputs=sorted(input_nodes), lifted=[t for t, _, _ in fw.lifted],
                      sym_sources=list(symctx.sources) if symctx else [], out_spec=out_spec,
                      out_plan=out_plan, graphs=graphs, mode=rec.replay_mode,
                      value_reads=[(v, r) for _, v, r in rec.value_reads], **entry_kw)


def _guards(cf, rec, leaves, spec, symctx, sizes_of):
    g = GuardBuilder()
    g.structure(spec, len(leaves))
    tensors = []
    read = rec.sources.tensor_attrs
    for i, x in enumerate(leaves):
        expr = f"L[{i}]"
        if isinstance(x, TensorBase):
            g.tensor(expr, x, f"argument {i}", sizes_of(i), read)
            tensors.append((expr, x))
        else:
            g.value(expr, x, f"argument {i}")
    g.aliasing(tensors)
    if symctx is not None:
        for sym, (i, d) in zip(symctx.symbols, symctx.sources):
            g.bind(str(sym), f"L[{i}].shape[{d}]")
        for cond, why in symctx.guard_lines():
            g.add(cond, f"shape guard failed: {why}")
    for phase in (rec.fw, rec.bw):
        if phase is not None:
            for t, _, source in phase.lifted:
                g.lifted(t, source, read)
    g.dispatch()
    g.modules(cf.index_modules(rec))
    g.plain_reads(rec.sources.plain_reads())
    g.bindings(rec.sources.bindings())
    g.defaults(rec.sources.functions())
    return g


# ---- the two captures --------------------------------------------------------------------------

def _grads(index, leaves):
    """(tensor, its .grad, whether it requires grad) for the arguments and parameters."""
    tensors = [x for x in leaves if isinstance(x, TensorBase)]
    for m in index.modules.values():
        tensors.extend(p for p in m._parameters.values() if p is not None)
    return [(t, id(_ag._raw_grad(t)), t.requires_grad) for t in tensors]


def _defaults(fn):
    """The default values of ``fn``'s parameters (a mutable one outlives every call)."""
    fn = getattr(fn, "__func__", fn)
    return tuple(getattr(fn, "__defaults__", None) or ()) + \
        tuple((getattr(fn, "__kwdefaults__", None) or {}).values())


def _run_user(cf, rec, index, call_args, call_kwargs, leaves):
    """Call the user's function under the side-effect monitor; Module attribute writes and
    ``.grad`` changes (a backward inside the call) are side effects too."""
    from ember.nn.modules.module import Module
    epoch = Module._attribute_epoch
    grads = _grads(index, leaves)
    watched = config.detect_side_effects and not cf.trusted
    if not watched:                 # no monitor to see which tensor attributes are read
        index.tensor_attrs.update(TENSOR_STATE)
    caller = caller_mode()
    with SideEffectMonitor(rec, index, watched, tuple(call_args) +
                           tuple(call_kwargs.values()) + _defaults(cf.sig_fn)):
        result = cf.fn(*call_args, **call_kwargs)
    if caller_mode() != caller:
        rec.note_break("side effect: the call left grad mode, inference mode or autocast "
                       "changed")
    rec.replay_mode, reason = replay_mode(caller, rec.modes)
    if reason is not None:
        rec.note_break(reason)
    if Module._attribute_epoch - rec.own_epoch_moves != epoch:
        rec.note_break("side effect: a Module attribute was assigned during the call")
    if any(id(_ag._raw_grad(t)) != g for t, g, _ in grads):
        rec.note_break("side effect: the call set the .grad of a tensor (a backward inside "
                       "the compiled function)")
    if any(t.requires_grad != r for t, _, r in grads):
        rec.note_break("side effect: the call changed whether an argument or parameter "
                       "requires grad")
    if any(t.requires_grad for t, _ in rec.factories):
        rec.note_break("a tensor made inside the call requires grad (a new leaf each call)")
    return result


def _grad_on(rec):
    """Grad mode as the call's ops ran (a graph replays in it): a backward is traced then."""
    mode = rec.replay_mode
    return ember.is_grad_enabled() if mode is None or mode.grad is None else mode.grad


def capture_real(cf, args, kwargs, leaves, spec):
    """Capture on the real arguments; returns (entry or None, the call's result)."""
    index = cf.make_index()
    rec = Recorder(index, fake_mode=None, fullgraph=cf.fullgraph,
                   value_guards=cf.value_guards)
    names = _leaf_names(cf.sig_fn, args, kwargs, len(leaves), spec)
    input_nodes = {}
    backward = None
    counters["stats"]["calls_captured"] += 1
    with timed("capture"), rec:
        for i, x in enumerate(leaves):
            if isinstance(x, TensorBase) and rec.fw.find(x) is None:
                input_nodes[i] = rec.add_input(x, names.get(i, f"arg{i}"))
        result = _run_user(cf, rec, index, args, kwargs, leaves)
        out_leaves, _ = tree_flatten(result)
        _check_outputs(rec, out_leaves)
        outs = [v for v in out_leaves if isinstance(v, TensorBase)]
        if rec.recording and _grad_on(rec) and any(o.requires_grad for o in outs):
            diff = [(pos, leaves[i]) for pos, i in enumerate(sorted(input_nodes))
                    if leaves[i].requires_grad]
            base = len(input_nodes)
            diff += [(base + k, t) for k, (t, _, _) in enumerate(rec.fw.lifted)
                     if t.requires_grad]
            if not diff:
                rec.note_break("an output requires grad but no input does")
            else:
                # contiguous tangents, as the fake path's: aot's backward passes the
                # incoming gradients contiguous, whatever layout an output has
                idx, grads = _trace_backward(
                    rec, outs, [t for _, t in diff],
                    lambda o: ember.ones(o.shape, dtype=o.dtype, device=o.device))
                backward = (idx, grads, [p for p, _ in diff])
        if cf.fullgraph and rec.breaks:
            raise Unsupported(rec.breaks[0])
    # graphs are built and compiled with the capture closed: a backend's own ops are not
    # part of the call
    entry = _build(cf, rec, leaves, spec, result, input_nodes, None, lambda i: None,
                   backward if rec.recording else None)
    rec.finish()
    return entry, result


def capture_fake(cf, args, kwargs, leaves, spec, dynamic_dims):
    """Capture on fake tensors whose ``dynamic_dims`` (leaf index -> dims) are symbolic;
    returns the entry (raises CaptureFailed when the capture cannot finish)."""
    from ember._dynamo.symbolic import SymbolicContext
    from ember._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode()
    symctx = SymbolicContext(mode.shape_env)
    index = cf.make_index()
    rec = Recorder(index, fake_mode=mode, fullgraph=False)
    rec.symbolic = symctx
    names = _leaf_names(cf.sig_fn, args, kwargs, len(leaves), spec)
    fakes, sizes, input_nodes = {}, {}, {}
    for i, x in enumerate(leaves):
        if isinstance(x, TensorBase):
            if id(x) in fakes:
                continue
            dims = dynamic_dims.get(i, ()) if x.is_contiguous() else ()
            f = mode.from_tensor(x, dynamic_dims=sorted(dims))
            if x.requires_grad:
                _ag.set_requires_grad(f, True)
            fakes[id(x)] = f
            sizes[i] = tuple(f.shape) if dims else None
            for d, s in enumerate(f.shape):
                if not isinstance(s, int):
                    symctx.bind(s, i, d)
    counters["stats"]["calls_captured"] += 1
    backward = None
    try:
        with timed("capture"), rec:
            symctx.add_placeholders(rec)
            for i, x in enumerate(leaves):
                if isinstance(x, TensorBase) and rec.fw.find(fakes[id(x)]) is None:
                    input_nodes[i] = rec.add_input(x, names.get(i, f"arg{i}"), fakes[id(x)])
            fake_leaves = [fakes.get(id(x), x) if isinstance(x, TensorBase) else x
                           for x in leaves]
            fargs, fkwargs = tree_unflatten(fake_leaves, spec)
            result = _run_user(cf, rec, index, fargs, fkwargs, leaves)
            out_leaves, _ = tree_flatten(result)
            _check_outputs(rec, out_leaves)
            outs = [v for v in out_leaves if isinstance(v, TensorBase)]
            if rec.recording and _grad_on(rec) and any(o.requires_grad for o in outs):
                order = sorted(input_nodes)
                diff = [(pos, fakes[id(leaves[i])]) for pos, i in enumerate(order)
                        if leaves[i].requires_grad]
                diff += [(len(order) + k, rec.fakes[id(t)]) for k, (t, _, _)
                         in enumerate(rec.fw.lifted) if t.requires_grad]
                if diff:
                    idx, grads = _trace_backward(
                        rec, outs, [t for _, t in diff],
                        lambda o: mode.empty(o.shape, dtype=o.dtype, device=o.device))
                    backward = (idx, grads, [p for p, _ in diff])
                else:
                    rec.note_break("an output requires grad but no input does")
            if rec.breaks:
                raise CaptureFailed(rec.breaks[0])
        entry = _build(cf, rec, leaves, spec, result, input_nodes, symctx,
                       lambda i: sizes.get(i), backward)
    except (GraphBreak, CaptureFailed) as e:
        raise CaptureFailed(e.reason) from None
    except (Unsupported, BackendCompilerFailed):
        raise
    except Exception as e:
        reason = rec.breaks[0] if rec.breaks else f"{type(e).__name__}: {e}"
        raise CaptureFailed(reason) from None
    rec.finish()
    if isinstance(entry, EagerEntry):
        raise CaptureFailed(entry.reason)
    return entry

