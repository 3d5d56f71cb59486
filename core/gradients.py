"""backward and grad: the Python entry points of the autograd engine (core/_autograd.pyx),
as ``ember.autograd.backward``/``grad`` and ``Tensor.backward`` call them."""
import threading

from ember.core import _autograd as _ag
from ember.core._tensor import TensorBase

__all__ = ["accumulating", "backward", "grad"]

_run = threading.local()      # whether the backward running in this thread fills .grad


def accumulating():
    """Whether the backward pass running now accumulates into the leaves' ``.grad``
    (backward()) or only returns gradients (grad()): what a custom Function that runs
    autograd inside its backward (checkpoint) must do likewise."""
    return getattr(_run, "accumulate", True)


def _run_backward(outputs, grads, retain, create, inputs, allow_unused, accumulate, given):
    before = accumulating()
    _run.accumulate = accumulate
    try:
        return _ag.run_backward(outputs, grads, retain, create, inputs, allow_unused,
                                accumulate, given)
    finally:
        _run.accumulate = before


def _tensors(x, name):
    if isinstance(x, TensorBase):
        return (x,)
    x = tuple(x)
    for t in x:
        if not isinstance(t, TensorBase):
            raise TypeError(f"{name}: expected a Tensor or a sequence of Tensors, got "
                            f"{type(t).__name__}")
    return x


def _make_grads(outputs, grads):
    """The gradients to start from: given ones (checked), or ones for scalar outputs.
    Returns (grads, the caller's own tensors among them)."""
    from ember.core import _tensor as _T
    if grads is None or isinstance(grads, TensorBase):
        grads = (grads,) * len(outputs) if grads is None else (grads,)
    grads = tuple(grads)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got "
                           f"{len(grads)} gradients for {len(outputs)} outputs")
    out, given = [], []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t.requires_grad and t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t.requires_grad and t.is_complex():
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {t.dtype}")
            g = _T.ones_like(t)
        else:
            if not isinstance(g, TensorBase):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {t.shape}.")
            given.append(g)
        out.append(g)
    return tuple(out), tuple(given)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` w.r.t. the graph's leaves into their
    ``.grad`` (or only into ``inputs``')."""
    tensors = _tensors(tensors, "backward")
    grads, given = _make_grads(tensors, grad_tensors if grad_variables is None
                               else grad_variables)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _tensors(inputs, "backward")
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _run_backward(tensors, grads, bool(retain_graph), bool(create_graph), inputs or (), True,
                  True, given)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs`` (nothing accumulates into .grad).
    ``is_grads_batched`` needs vmap, a layer above: ember.autograd.grad takes it."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True: call ember.autograd.grad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    outputs = _tensors(outputs, "grad")
    inputs = _tensors(inputs, "grad")
    grads, given = _make_grads(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    res = _run_backward(outputs, grads, bool(retain_graph), bool(create_graph), inputs,
                        bool(allow_unused or materialize_grads), False, given)
    if materialize_grads:
        from ember.core import _tensor as _T
        res = [_T.zeros_like(x) if g is None else g for x, g in zip(inputs, res)]
    return tuple(res)
