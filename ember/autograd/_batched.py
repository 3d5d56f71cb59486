"""autograd.grad(..., is_grads_batched=True): a vector-Jacobian product per row of the
grad_outputs, through vmap (core/gradients.py's engine sits below ember.func)."""
from ember.core._tensor import TensorBase
from ember.core.gradients import _tensors, grad
from ember.func import vmap

__all__ = ["batched_grad"]


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 materialize_grads):
    """grad(..., is_grads_batched=True): grad over vmap of the grad_outputs' first dim."""
    outputs = _tensors(outputs, "grad")
    if grad_outputs is None:
        raise RuntimeError("autograd.grad: is_grads_batched=True needs grad_outputs")
    gos = (grad_outputs,) if isinstance(grad_outputs, TensorBase) else tuple(grad_outputs)
    for i, (o, g) in enumerate(zip(outputs, gos)):
        if g is not None and tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension "
                               f"of each grad_output as the batch dimension. The sizes of the "
                               f"remaining dimensions are expected to match the shape of "
                               f"corresponding output, but a mismatch was detected: "
                               f"grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                               f"has a shape of {o.shape}.")

    def one(*rows):             # called once, on the batch (the rows' wrappers)
        return grad(outputs, inputs, rows, retain_graph=retain_graph, create_graph=create_graph,
                    allow_unused=allow_unused, materialize_grads=materialize_grads)
    return tuple(vmap(one)(*gos))
