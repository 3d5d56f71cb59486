"""Full backward hooks: identity autograd Functions around a module's tensor inputs and
outputs catch grad_output (on the way in) and grad_input (on the way out)."""
from ember.core.tensor import Tensor

from ember.autograd.function import Function
from ember.autograd.grad_mode import is_grad_enabled

__all__ = ["BackwardHook"]


class _Identity(Function):
    """Returns its tensors unchanged (as views); backward hands the gradients to
    ``on_grads``, which may replace them."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(False)
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


def _wrap(values, on_grads):
    """``values`` (a tuple) with its grad-requiring tensors passed through _Identity;
    returns the new tuple and the positions wrapped (None when none was)."""
    where = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
    if not where or not is_grad_enabled():
        return values, None
    outs = _Identity.apply(on_grads, *(values[i] for i in where))
    values = list(values)
    for i, out in zip(where, outs):
        values[i] = out
    return tuple(values), where


def _pack(where, grads, size):
    packed = [None] * size
    for i, g in zip(where, grads):
        packed[i] = g
    return tuple(packed)


class BackwardHook:
    """One forward call's backward hooks (register_full_backward_(pre_)hook)."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_where = None

    def wrap_inputs(self, args):
        self.n_inputs = len(args)
        args, self.input_where = _wrap(args, self._on_input_grads)
        return args

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not isinstance(values, tuple):
            return result               # outputs that are not tensors: nothing to hook
        self.n_outputs = len(values)
        values, self.output_where = _wrap(values, self._on_output_grads)
        return values[0] if single else values

    def _on_output_grads(self, grads):
        grad_outputs = _pack(self.output_where, grads, self.n_outputs)
        for hook in self.module._backward_pre_hook_list():
            out = hook(self.module, grad_outputs)
            if out is not None:
                out = out if isinstance(out, tuple) else (out,)
                if len(out) != len(grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(out)}, but expected "
                                       f"{len(grad_outputs)}")
                grad_outputs = out
        self.grad_outputs = grad_outputs
        if self.input_where is None:    # no input needs a gradient: the hooks run now
            none = (None,) * self.n_inputs
            for hook in self.module._backward_hook_list():
                out = hook(self.module, none, grad_outputs)
                if out is not None and any(g is not None for g in out):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return [grad_outputs[i] for i in self.output_where]

    def _on_input_grads(self, grads):
        grad_inputs = _pack(self.input_where, grads, self.n_inputs)
        for hook in self.module._backward_hook_list():
            out = hook(self.module, grad_inputs, self.grad_outputs)
            if out is not None:
                out = out if isinstance(out, tuple) else (out,)
                if len(out) != len(grad_inputs):
                    raise RuntimeError(f"Backward hook returned an invalid number of "
                                       f"grad_input, got {len(out)}, but expected "
                                       f"{len(grad_inputs)}")
                grad_inputs = out
        return [grad_inputs[i] for i in self.input_where]
