"""Capturing ``cond`` inside ``ember.compile`` / ``ember.export``.

Both branches are recorded as subgraphs on fake values (``ember._dynamo.subgraph``): in a
capture on real tensors that runs neither branch on real data.  The graph gets one
``cond`` node reading the predicate, the operands and every value a branch reads from
outside; a real capture then computes its result by running the node's chosen subgraph on
the real values, so the first call computes exactly what later replays compute.

The capture stops (the call runs eagerly) where a replayed graph could differ from eager:
the branches return tensors of different sizes, a branch returns its input, or gradients
must flow through the cond (a captured backward would hold the taken branch only).  Branch
outputs that differ in structure, rank or dtype are an error, as in PyTorch.
"""
import operator

from ember._dynamo import subgraph
from ember._dynamo.capture import GraphBreak
from ember._dynamo.pytree import tree_flatten, tree_unflatten
from ember._higher_order_ops.cond import cond_op
from ember.autograd.grad_mode import is_grad_enabled
from ember.core._tensor import TensorBase

__all__ = ["capture_cond", "check_same_outputs", "graph_module", "next_id"]


def next_id(rec, kind):
    """A fresh number for subgraph names (``cond0_true``, ...) in ``rec``'s capture."""
    counts = rec.__dict__.setdefault("_hop_counts", {})
    n = counts.get(kind, 0)
    counts[kind] = n + 1
    return n


def graph_module(rec, graph, name):
    """A GraphModule running a recorded subgraph op by op (made by the capture itself: the
    Module attribute writes of building it are no side effect of the user's call)."""
    from ember.fx.graph_module import GraphModule
    from ember.nn.modules.module import Module
    graph.eliminate_dead_code()
    before = Module._attribute_epoch
    gm = GraphModule(Module(), graph, class_name=name)
    rec.own_epoch_moves += Module._attribute_epoch - before
    return gm


def check_same_outputs(a, b, op_name, names=("true branch", "false branch")):
    """Raise as PyTorch does when two subgraphs' outputs differ in structure, count, rank
    or dtype; returns whether some sizes differ (the caller stops the capture then)."""
    from ember._dynamo.exc import CondOpArgsMismatchError, UncapturedHigherOrderOpError
    if len(a.leaves) != len(b.leaves):
        raise CondOpArgsMismatchError(
            f"Expected to return same number of outputs but got:\n  {names[0]} returns "
            f"{len(a.leaves)} item(s)\n  {names[1]} returns {len(b.leaves)} item(s)")
    if a.spec != b.spec:
        raise UncapturedHigherOrderOpError(
            f"Unmatched output spec from torch.{op_name} branches: {names[0]} tree_spec "
            f"{a.spec} vs {names[1]} tree_spec {b.spec}.")
    sizes_differ = False
    for x, y in zip(a.leaves, b.leaves):
        for what, u, v in (("dim", x.dim(), y.dim()), ("dtype", x.dtype, y.dtype),
                           ("device", x.device, y.device)):
            if u != v:
                raise UncapturedHigherOrderOpError(
                    f"When merging two branches' output in torch.{op_name}, expected same "
                    f"{what} but got {u} and {v}.")
        sizes_differ = sizes_differ or any(not _same_size(p, q) for p, q in zip(x.shape,
                                                                               y.shape))
    return sizes_differ


def _same_size(p, q):
    """Equal without recording a guard: ints by value, symbolic sizes by expression."""
    ep, eq = (getattr(getattr(s, "node", None), "expr", s) for s in (p, q))
    return ep == eq


def _grad_needed(leaves, subs):
    if not is_grad_enabled():
        return False
    values = list(leaves) + [v for s in subs for v, _, _ in s.phase.free]
    return any(isinstance(v, TensorBase) and v.requires_grad for v in values)


def _reason(subs, operands, op_name, leaves):
    from ember._dynamo.capture import user_location
    where = user_location()
    if any(subgraph.aliases_input(s, operands) for s in subs):
        return f"{op_name}: a branch returns an operand or a view of it (at {where})"
    if _grad_needed(leaves, subs):
        return (f"{op_name}: gradients would flow through it, and a captured backward would "
                f"hold the taken branch only (at {where}); the call runs eagerly")
    return None


def capture_cond(rec, pred, true_fn, false_fn, operands):
    """Record ``cond(pred, true_fn, false_fn, operands)`` into the graph ``rec`` records;
    returns what the call returns (real values in a real capture)."""
    from ember._higher_order_ops.cond import run_checked
    leaves, _ = tree_flatten(operands)
    real = rec.fake_mode is None
    if isinstance(pred, TensorBase):
        pred_node = rec.node_of(pred)
        taken = None
        if real:
            with rec.paused():
                taken = bool(pred)
    else:
        pred_node = rec.symbolic.node_for(pred, rec)
        taken = None
    op_nodes = [rec.node_of(t) for t in leaves]
    if not rec.recording:
        return run_checked(true_fn if pred else false_fn, operands, "cond")
    n = next_id(rec, "cond")
    try:
        with subgraph.FakeValues(rec) as fv:
            fake_ops = tree_unflatten([fv.fake(t) for t in leaves], tree_flatten(operands)[1])
            subs = [subgraph.record(rec, fn, fake_ops, f"cond{n}_{side}")
                    for fn, side in ((true_fn, "true"), (false_fn, "false"))]
    except GraphBreak as e:
        if not real:
            raise
        rec.stop(e.reason)
    if not rec.recording or not all(isinstance(s, subgraph.Subgraph) for s in subs):
        return run_checked(true_fn if taken else false_fn, operands, "cond")
    t_sub, f_sub = subs
    if check_same_outputs(t_sub, f_sub, "cond"):
        rec.stop(f"cond: the branches return tensors of different sizes "
                 f"({[list(x.shape) for x in t_sub.leaves]} and "
                 f"{[list(x.shape) for x in f_sub.leaves]})")
    else:
        reason = _reason(subs, fake_ops, "cond", leaves)
        if reason is not None:
            rec.stop(reason)
    if not rec.recording:
        return run_checked(true_fn if taken else false_fn, operands, "cond")
    free_values, free = subgraph.unify_free_inputs(subs)
    gms = [graph_module(rec, s.graph, f"cond{n}_{side}")
           for s, side in zip(subs, ("true", "false"))]
    graph = rec.cur.graph
    node = graph.call_function(cond_op, (pred_node, gms[0], gms[1],
                                         tuple(op_nodes) + tuple(free)))
    if t_sub.mutated or f_sub.mutated:
        node.meta["is_impure"] = True
    if real:
        values = leaves + free_values
        with rec.paused():
            out = cond_op(taken, gms[0], gms[1], values)
    else:
        out = t_sub.leaves
    node.meta["val"] = tuple(out)
    for i, r in enumerate(out):
        rec.cur.bind(r, graph.call_function(operator.getitem, (node, i)))
    return tree_unflatten(list(out), t_sub.spec)
