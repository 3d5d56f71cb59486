"""``ember.while_loop`` (``torch.while_loop``): a loop that capture keeps as one graph node.

Eagerly it is ``while cond_fn(*vals): vals = body_fn(*vals)`` with PyTorch's checks: the
condition is a bool or a boolean scalar tensor, the body returns as many values as it takes
with the same shapes and dtypes.  Inside ``ember.compile``/``ember.export`` both functions
are recorded as subgraphs and the graph holds ``ember.ops.higher_order.while_loop(cond_graph,
body_graph, carried_inputs, additional_inputs)``, so the trip count is decided when the
graph runs.
"""
from ember._higher_order_ops._hop import HigherOrderOperator
from ember._higher_order_ops.cond import _recorder, run_checked
from ember.core._tensor import TensorBase

__all__ = ["WhileLoopOp", "check_body_output", "check_pred", "run_loop", "while_loop",
           "while_loop_op"]


def check_pred(pred):
    """A loop condition must be a bool or a boolean scalar tensor."""
    if isinstance(pred, bool) or (isinstance(pred, TensorBase) and pred.dim() == 0
                                  and pred.dtype.name == "bool"):
        return
    from ember._dynamo.exc import UncapturedHigherOrderOpError
    raise UncapturedHigherOrderOpError(f"Expected cond_fn to return a boolean scalar tensor or "
                                       f"a bool but got {pred}")


def _clone(v):
    return v.clone() if isinstance(v, TensorBase) else v


class WhileLoopOp(HigherOrderOperator):
    """The graph form: ``while_loop_op(cond_fn, body_fn, carried_inputs,
    additional_inputs)`` on flat tuples; the functions take the carried values then the
    additional ones and return tuples (the condition: a one-tuple)."""

    def __init__(self):
        super().__init__("while_loop")

    def __call__(self, cond_fn, body_fn, carried_inputs, additional_inputs=()):
        vals = tuple(carried_inputs)

        def test():
            p = cond_fn(*vals, *additional_inputs)
            return p[0] if isinstance(p, (tuple, list)) else p
        if not test():
            return tuple(_clone(v) for v in vals)
        while True:
            vals = tuple(body_fn(*vals, *additional_inputs))
            if not test():
                return vals


while_loop_op = WhileLoopOp()


def _leaves_ok(x):
    if isinstance(x, (tuple, list)):
        return all(_leaves_ok(v) for v in x)
    if isinstance(x, dict):
        return all(_leaves_ok(v) for v in x.values())
    from ember._sym import SymInt
    return isinstance(x, (TensorBase, int, SymInt)) and not isinstance(x, bool)


def check_body_output(out_leaves, in_leaves):
    """PyTorch's metadata check of a body's output against the values it was given."""
    from ember._dynamo.exc import UncapturedHigherOrderOpError
    if len(out_leaves) != len(in_leaves):
        raise UncapturedHigherOrderOpError(
            f"Expected body_fn_output and carried_inputs to have same number of outputs but "
            f"got lhs:{list(out_leaves)} and rhs:{list(in_leaves)}")
    for i, (a, b) in enumerate(zip(out_leaves, in_leaves)):
        if isinstance(a, TensorBase) != isinstance(b, TensorBase):
            diff = f"type: {type(a).__name__} vs {type(b).__name__}"
        elif not isinstance(a, TensorBase):
            continue
        elif a.dtype != b.dtype:
            diff = f"dtype: {a.dtype} vs {b.dtype}"
        elif tuple(a.shape) != tuple(b.shape):
            diff = f"shape: {list(a.shape)} vs {list(b.shape)}"
        else:
            continue
        raise UncapturedHigherOrderOpError(
            f"Expected body_fn_output and carried_inputs to have same metadata but found:\n"
            f"pair[{i}] differ in '{diff}'")


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``body_fn(*carried)`` while ``cond_fn(*carried)`` is true; returns the last
    values (copies of ``carried_inputs`` when the body never runs).

    Args:
        cond_fn: takes the carried values, returns a bool or a boolean scalar tensor.
        body_fn: takes the carried values, returns new ones: as many, with the same shapes
            and dtypes, not aliasing its inputs.
        carried_inputs: a tuple or list of (possibly nested dict/list/tuple of) tensors and
            ints: the initial values.
    """
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)) or not _leaves_ok(carried_inputs):
        raise RuntimeError(f"Expect carried_inputs to be a tuple of possibly nested "
                           f"dict/list/tuple that only consists of tensor or int leaves, but "
                           f"got {carried_inputs}.")
    rec = _recorder()
    if rec is not None and rec.recording:
        from ember._higher_order_ops._loop_capture import capture_while_loop
        return capture_while_loop(rec, cond_fn, body_fn, carried_inputs)
    return run_loop(cond_fn, body_fn, carried_inputs)


def run_loop(cond_fn, body_fn, carried_inputs):
    """The eager loop, checking each step as PyTorch's tracing checks it once."""
    from ember._dynamo.pytree import tree_flatten, tree_unflatten
    vals = carried_inputs
    pred = cond_fn(*vals)
    check_pred(pred)
    if not pred:
        leaves, spec = tree_flatten(vals)
        return tree_unflatten([_clone(v) for v in leaves], spec)
    while pred:
        out = run_checked(body_fn, vals, "while_loop")
        check_body_output(tree_flatten(out)[0], tree_flatten(vals)[0])
        vals = out
        pred = cond_fn(*vals)
        check_pred(pred)
    return vals
