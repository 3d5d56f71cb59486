"""Subgraphs: a function called inside a capture, recorded into a graph of its own.

The branches of ``ember.cond`` and the condition and body of ``ember.while_loop`` are
recorded this way: the function runs once on the operands, which are the subgraph's first
placeholders, and its ops go to the subgraph instead of the graph being recorded.  A value
the function reads from outside (a tensor computed earlier in the call, a parameter, a size
symbol) is resolved in the enclosing graph and becomes an extra placeholder of the subgraph
(its *free* inputs), so the subgraph is a closed program the enclosing graph calls with
explicit arguments.
"""
from ember._dynamo.capture import _Phase, geometry
from ember._dynamo.convert import _order_placeholders
from ember._dynamo.pytree import tree_flatten
from ember.core._autograd import set_requires_grad
from ember.core._tensor import TensorBase
from ember.fx.node import Node

__all__ = ["FakeValues", "Subgraph", "SubgraphPhase", "aliases_input", "fake_for",
           "lift_from_parent", "lift_tensor", "record", "unify_free_inputs"]


class SubgraphPhase(_Phase):
    """The graph of one subgraph being recorded; ``parent`` is the enclosing phase and
    ``free`` lists (value, node of the enclosing graph, placeholder) per free input."""

    def __init__(self, name, parent):
        super().__init__(name)
        self.parent = parent
        self.free = []


class Subgraph:
    """A recorded function: its phase (graph and free inputs), the operands' placeholders,
    the result's leaves and structure, and whether it wrote into an input's memory."""

    def __init__(self, phase, inputs, leaves, spec, mutated):
        self.phase, self.inputs = phase, inputs
        self.leaves, self.spec = leaves, spec
        self.mutated = mutated

    @property
    def graph(self):
        return self.phase.graph


def lift_from_parent(rec, value, name, resolve, val):
    """A placeholder of the subgraph being recorded standing for ``value``, whose node in
    the enclosing graph ``resolve()`` gives (run with the enclosing phase current); a
    constant comes back as it is, None when the capture stopped."""
    phase = rec.cur
    rec.cur = phase.parent
    try:
        outer = resolve()
    finally:
        rec.cur = phase
    if not isinstance(outer, Node):
        return outer
    node = phase.placeholder(name or outer.name)
    node.meta["val"] = val
    phase.free.append((value, outer, node))
    return node


def lift_tensor(rec, t):
    """``Recorder.node_of`` for a tensor a subgraph did not make: its enclosing node."""
    phase = rec.cur
    node = lift_from_parent(rec, t, None, lambda: rec.node_of(t), None)
    if isinstance(node, Node):
        outer_val = phase.free[-1][1].meta.get("val")
        phase.bind(t, node)
        if type(outer_val).__name__ == "FakeTensor":
            node.meta["val"] = outer_val
        elif rec.fake_mode is not None:     # a real value read by a subgraph recorded on fakes
            node.meta["val"] = fake_for(rec, t)
        phase.input_storages.add(geometry(t)[0])
    return node


def fake_for(rec, t):
    """The fake copy (static sizes) of real tensor ``t`` in ``rec``'s fake mode: ops of a
    subgraph recorded on fakes run on it, never on ``t``."""
    f = rec.fakes.get(id(t))
    if f is None:
        f = rec.fake_mode.from_tensor(t, static_shapes=True)
        if t.requires_grad:
            set_requires_grad(f, True)
        rec.fakes[id(t)] = f
    return f


def record(rec, fn, operands, name):
    """Run ``fn(*operands)`` recording its ops into a new subgraph named ``name`` of the
    graph ``rec`` is recording.  Returns a Subgraph, or None when the capture stopped
    (a real capture then finished ``fn`` eagerly: the Subgraph still carries its result)."""
    parent = rec.cur
    phase = SubgraphPhase(name, parent)
    leaves, _ = tree_flatten(operands)
    rec.cur = phase
    try:
        inputs = [rec.add_input(t, f"arg{i}") for i, t in enumerate(leaves)]
        result = fn(*operands)
        out_leaves, spec = tree_flatten(result)
        if rec.recording:
            outs = []
            for o in out_leaves:
                if not isinstance(o, TensorBase):
                    rec.stop(f"{name}: the function returned a {type(o).__name__}; a "
                             f"captured subgraph returns tensors only")
                    break
                outs.append(rec.node_of(o))
            if rec.recording:
                phase.graph.output(tuple(outs))
    finally:
        rec.cur = parent
    sub = Subgraph(phase, inputs, out_leaves, spec, phase.writes_input)
    return sub if rec.recording else _Stopped(sub)


class _Stopped:
    """What ``record`` gives when the capture stopped inside ``fn``: its result only."""

    def __init__(self, sub):
        self.leaves, self.spec = sub.leaves, sub.spec


def aliases_input(sub, operands):
    """Whether an output of ``sub`` shares memory with an operand (PyTorch refuses it)."""
    leaves, _ = tree_flatten(operands)
    storages = {geometry(t)[0] for t in leaves}
    return any(isinstance(o, TensorBase) and geometry(o)[0] in storages for o in sub.leaves)


def unify_free_inputs(subs):
    """Give every subgraph of ``subs`` the same free inputs, in one order (a placeholder it
    does not use where it read nothing of the value); returns (values, enclosing nodes) of
    those inputs, in that order."""
    order, values = [], {}
    for s in subs:
        for value, outer, _ in s.phase.free:
            if outer not in values:
                values[outer] = value
                order.append(outer)
    for s in subs:
        have = {outer: ph for _, outer, ph in s.phase.free}
        placeholders = []
        for outer in order:
            ph = have.get(outer)
            if ph is None:
                ph = s.phase.placeholder(outer.name)
                ph.meta["val"] = outer.meta.get("val")
            placeholders.append(ph)
        _order_placeholders(s.graph, list(s.inputs) + placeholders)
    return [values[o] for o in order], order


class FakeValues:
    """Inside a capture on real tensors, record subgraphs on fake copies of the values
    (static sizes), as a capture with symbolic sizes does: a function is recorded without
    running it on real data, so the branch a real call does not take has no effect.  A
    stop raises GraphBreak inside (caught by the caller); leaving restores the recorder."""

    def __init__(self, rec):
        self.rec = rec

    def __enter__(self):
        from ember._subclasses.fake_tensor import FakeTensorMode
        rec = self.rec
        self.active = rec.fake_mode is None
        if self.active:
            rec.fake_mode = FakeTensorMode()
            self.n_lifted = len(rec.fw.lifted)
        return self

    def fake(self, value):
        """The fake copy of a real tensor (itself in a capture that is already fake)."""
        if not self.active or not isinstance(value, TensorBase):
            return value
        return fake_for(self.rec, value)

    def __exit__(self, *exc):
        rec = self.rec
        if self.active:
            rec.fake_mode = None
            rec.fakes.clear()
            for t, node, _ in rec.fw.lifted[self.n_lifted:]:
                node.meta["val"] = t            # a real capture describes real values
        return False
