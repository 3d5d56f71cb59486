"""``ember.cond`` (``torch.cond``): an if-statement that capture keeps as one graph node.

Eagerly, ``cond`` runs the branch ``pred`` picks, differentiable through it.  Inside
``ember.compile`` or ``ember.export`` a predicate that depends on tensor data (a tensor, or
a SymBool of symbolic sizes) no longer breaks the graph: both branches are recorded as
subgraphs and the graph holds ``ember.ops.higher_order.cond(pred, true_graph, false_graph,
operands)``, which picks the branch when the graph runs (see ``_capture``).
"""
import sys

from ember._higher_order_ops._hop import HigherOrderOperator
from ember.core._tensor import TensorBase

__all__ = ["CondOp", "cond", "cond_op"]


class CondOp(HigherOrderOperator):
    """The graph form: ``cond_op(pred, true_fn, false_fn, operands)`` runs one branch on
    the flat ``operands`` (a captured branch returns a tuple)."""

    def __init__(self):
        super().__init__("cond")

    def __call__(self, pred, true_fn, false_fn, operands):
        return true_fn(*operands) if pred else false_fn(*operands)


cond_op = CondOp()


def _recorder():
    capture = sys.modules.get("ember._dynamo.capture")
    return None if capture is None else capture.current_recorder()


def _tensor_leaves(x):
    if isinstance(x, (tuple, list)):
        return all(_tensor_leaves(v) for v in x)
    if isinstance(x, dict):
        return all(_tensor_leaves(v) for v in x.values())
    return isinstance(x, TensorBase)


def validate_operands(operands, what="operands"):
    if not isinstance(operands, (tuple, list)) or not _tensor_leaves(operands):
        raise RuntimeError(f"Expect {what} to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")


def _validate_input(pred, true_fn, false_fn, operands):
    from ember._sym import SymBool
    if not isinstance(pred, (bool, TensorBase, SymBool)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, TensorBase) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"{pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    validate_operands(operands)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, kept whole by
    ``ember.compile`` and ``ember.export``.

    Args:
        pred: a bool, a one-element tensor (any dtype; its truth value decides) or a
            SymBool (a condition on symbolic sizes).
        true_fn, false_fn: callables taking ``*operands``; when captured they must return
            the same structure of tensors with the same ranks and dtypes, must not return
            an operand (or a view of it) nor write into one while autograd records.
        operands: a tuple or list of (possibly nested dict/list/tuple of) tensors.
    """
    if isinstance(pred, (bool, int, float)):
        rec = _recorder()
        if rec is not None and getattr(rec, "exporting", False):
            import warnings
            warnings.warn("Pred is a Python constant. When used with torch.cond, it "
                          "specializes on one of the branches. If you want torch.cond to "
                          "preserve two branches, please make the predicate a boolean tensor "
                          "or a SymBool.", UserWarning, stacklevel=2)
        return true_fn(*operands) if pred else false_fn(*operands)
    _validate_input(pred, true_fn, false_fn, operands)
    rec = _recorder()
    if rec is not None and rec.recording:
        from ember._higher_order_ops._capture import capture_cond
        return capture_cond(rec, pred, true_fn, false_fn, operands)
    return run_checked(true_fn if pred else false_fn, operands, "cond")


def _storages(leaves):
    return {t.untyped_storage()._cdata for t in leaves if isinstance(t, TensorBase)}


def run_checked(fn, operands, op_name):
    """``fn(*operands)`` eagerly; while autograd records, an operand written in place or
    returned (or a view of it) is refused, as PyTorch refuses it."""
    from ember._dynamo.pytree import tree_flatten
    from ember.autograd.grad_mode import is_grad_enabled
    if not is_grad_enabled():
        return fn(*operands)
    leaves = [t for t in tree_flatten(operands)[0] if isinstance(t, TensorBase)]
    versions = [t._version for t in leaves]
    out = fn(*operands)
    if any(t._version != v for t, v in zip(leaves, versions)):
        _refuse(op_name, "input mutation", "Higher order ops do not support input mutation.",
                "Consider using the debug context to change user code to avoid mutation.")
    if _storages(tree_flatten(out)[0]) & _storages(leaves):
        _refuse(op_name, "aliasing", "Higher order ops do not support aliasing.",
                "Replace `return input` with `return input.clone()` to avoid aliasing.")
    return out


def _refuse(op_name, what, explanation, hint):
    from ember._dynamo.exc import UncapturedHigherOrderOpError
    raise UncapturedHigherOrderOpError(
        f"This higher order operator doesn't work unless it is captured completely with "
        f"torch.compile. Got graph break/error:\n\nEncountered {what} during higher order op "
        f"tracing\n  Higher Order Operator: torch.{op_name}\n  Explanation: {explanation}\n"
        f"  Hint: {hint}")
