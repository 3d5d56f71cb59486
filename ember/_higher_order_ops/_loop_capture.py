"""Capturing ``while_loop`` inside ``ember.compile`` / ``ember.export``.

The condition and the body are recorded once each as subgraphs on fake values of the
carried inputs; the graph gets one ``while_loop`` node, and a real capture computes the
call's result by running that node on the real values.  The capture stops (the call runs
eagerly) for int carried values, a condition that is not a tensor, a body that returns its
input, and where gradients would flow through the loop.
"""
import operator

from ember._dynamo import subgraph
from ember._dynamo.capture import GraphBreak
from ember._dynamo.pytree import tree_flatten, tree_unflatten
from ember._higher_order_ops._capture import _reason, graph_module, next_id
from ember._higher_order_ops.while_loop import check_body_output, run_loop, while_loop_op
from ember.core._tensor import TensorBase

__all__ = ["capture_while_loop"]


def _record_both(rec, cond_fn, body_fn, carried, n):
    """The condition's and the body's subgraphs, recorded on fakes of ``carried``."""
    leaves, spec = tree_flatten(carried)
    with subgraph.FakeValues(rec) as fv:
        fake = tree_unflatten([fv.fake(t) for t in leaves], spec)
        c = subgraph.record(rec, lambda *a: (cond_fn(*a),), fake, f"while_loop{n}_cond")
        if not isinstance(c, subgraph.Subgraph):
            return None
        b = subgraph.record(rec, body_fn, fake, f"while_loop{n}_body")
    if not isinstance(b, subgraph.Subgraph):
        return None
    return c, b, fake


def _check(rec, c, b, fake):
    """Stop the capture where the recorded loop could differ from eager (else None)."""
    pred = c.leaves[0] if len(c.leaves) == 1 else None
    if not isinstance(pred, TensorBase):
        return "while_loop: cond_fn returns a Python bool (its value would be fixed)"
    from ember._higher_order_ops.while_loop import check_pred
    check_pred(pred)
    in_leaves = tree_flatten(fake)[0]
    check_body_output(b.leaves, in_leaves)
    return _reason([c, b], fake, "while_loop", in_leaves)


def capture_while_loop(rec, cond_fn, body_fn, carried_inputs):
    """Record ``while_loop(cond_fn, body_fn, carried_inputs)`` into ``rec``'s graph;
    returns what the call returns."""
    leaves, spec = tree_flatten(carried_inputs)
    if not all(isinstance(v, TensorBase) for v in leaves):
        rec.stop("while_loop: a carried input is a Python int (its value would be fixed "
                 "into the graph)")
        return run_loop(cond_fn, body_fn, carried_inputs)
    real = rec.fake_mode is None
    in_nodes = [rec.node_of(t) for t in leaves]
    n = next_id(rec, "while_loop")
    recorded = None
    try:
        if rec.recording:
            recorded = _record_both(rec, cond_fn, body_fn, carried_inputs, n)
    except GraphBreak as e:
        if not real:
            raise
        rec.stop(e.reason)
    if recorded is not None and rec.recording:
        reason = _check(rec, *recorded)
        if reason is not None:
            rec.stop(reason)
    if not rec.recording or recorded is None:
        return run_loop(cond_fn, body_fn, carried_inputs)
    c, b, _ = recorded
    free_values, free = subgraph.unify_free_inputs([c, b])
    gms = [graph_module(rec, s.graph, f"while_loop{n}_{side}") for s, side in ((c, "cond"),
                                                                           (b, "body"))]
    graph = rec.cur.graph
    node = graph.call_function(while_loop_op, (gms[0], gms[1], tuple(in_nodes), tuple(free)))
    if c.mutated or b.mutated:
        node.meta["is_impure"] = True
    if real:
        with rec.paused():
            out = while_loop_op(gms[0], gms[1], tuple(leaves), tuple(free_values))
    else:
        out = b.leaves
    node.meta["val"] = tuple(out)
    for i, r in enumerate(out):
        rec.cur.bind(r, graph.call_function(operator.getitem, (node, i)))
    return tree_unflatten(list(out), spec)
