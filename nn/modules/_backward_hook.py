"""Full backward hooks: an identity autograd Function around a module's tensor inputs and
another around its tensor outputs.  The outputs' node sees grad_output (and runs the
backward pre-hooks), the inputs' node sees grad_input (and runs the backward hooks)."""
import warnings

from ember.core.tensor import Tensor

from ember.autograd.function import Function
from ember.autograd.grad_mode import is_grad_enabled

__all__ = ["BackwardHook", "BackwardHookFunction"]

_INPLACE = ("Output {} of BackwardHookFunction is a view and is being modified inplace. This "
            "view was created inside a custom Function (or because an input was returned "
            "as-is) and the autograd logic to handle view+inplace would override the custom "
            "backward associated with the custom Function, leading to incorrect gradients. "
            "This behavior is forbidden. You can fix this by cloning the output of the custom "
            "Function.")


class BackwardHookFunction(Function):
    """Returns aliases of its tensors; its backward hands the gradients to ``on_grads``,
    which may replace them.  The aliases of tensors that need no gradient are
    non-differentiable, so their (zero) gradients reach the hooks but nothing else."""

    _node_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx, on_grads, materialize, as_views, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(materialize)
        # inputs get detached aliases, not views: an in-place op on a view would rebase its
        # history onto the base and skip this node (the module reports such ops itself)
        outs = tuple(t.view_as(t) if as_views else t.detach() for t in tensors)
        ctx.mark_non_differentiable(*(o for o, t in zip(outs, tensors) if not t.requires_grad))
        return outs

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, None) + tuple(ctx.on_grads(grads))


def _legacy_type(dtype, device):
    from ember.core._tensor import empty
    return empty(0, dtype=dtype, device=device).type()


def _check_replacement(new, old):
    """What PyTorch checks of a gradient a hook put in place of ``old`` ((shape, dtype,
    device) of the tensor whose gradient it is)."""
    if new is None:
        return
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    shape, dtype, device = old
    if new.dtype != dtype or new.device.type != device.type:
        raise RuntimeError(f"hook 'hook' has changed the type of value (was "
                           f"{_legacy_type(dtype, device)} got {new.type()})")
    if new.shape != shape:
        raise RuntimeError("hook 'hook' has changed the size of value")


class BackwardHook:
    """The backward hooks of one module call: ``user_hooks`` (``hook(module, grad_input,
    grad_output)``) and ``user_pre_hooks`` (``hook(module, grad_output)``), captured when
    the module ran, as PyTorch does."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors_index = self.output_tensors_index = None
        # per wrapped tensor: (detached alias, its version, requires_grad, (shape, dtype, device))
        self._inputs = self._outputs = ()

    def _apply_on_tensors(self, on_grads, values, as_views):
        """``values`` with every tensor passed through BackwardHookFunction when one of them
        requires grad; returns (new values, positions of the tensors or None, records)."""
        where = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not (is_grad_enabled() and any(values[i].requires_grad for i in where)):
            return values, None, ()
        outs = BackwardHookFunction.apply(on_grads, not as_views, as_views,
                                          *(values[i] for i in where))
        new = list(values)
        for i, out in zip(where, outs):
            new[i] = out
        new = tuple(new) if type(values) is tuple else type(values)(*new)   # namedtuples
        # detached aliases share the version counter: they tell whether an in-place op
        # touched a wrapped tensor without keeping its graph (and this hook) alive
        records = tuple((o.detach(), o._version, t.requires_grad, (o.shape, o.dtype, o.device))
                        for o, t in zip(outs, (values[i] for i in where)))
        return new, where, records

    def setup_input_hook(self, args):
        """Wrap the tensors of ``args`` (a tuple); returns the new tuple."""
        self.n_inputs = len(args)
        args, self.input_tensors_index, self._inputs = \
            self._apply_on_tensors(self._on_input_grads, args, False)
        return args

    def setup_output_hook(self, result):
        """Wrap ``result`` (a tensor, or the tensors of a tuple); returns the new result."""
        self._check_inplace(self._inputs)       # forward changed a wrapped input in place
        # from here on only the inputs' metadata is needed: let their memory go
        self._inputs = tuple((None, None, rg, meta) for _, _, rg, meta in self._inputs)
        single = not isinstance(result, tuple)
        values = (result,) if single else result
        self.n_outputs = len(values)
        values, self.output_tensors_index, self._outputs = \
            self._apply_on_tensors(self._on_output_grads, values, True)
        return values[0] if single else values

    @staticmethod
    def _check_inplace(records):
        # PyTorch refuses in-place ops on the aliases of tensors that require grad
        for i, (alias, version, requires_grad, _) in enumerate(records):
            if requires_grad and alias._version != version:
                raise RuntimeError(_INPLACE.format(i))

    @staticmethod
    def _pack(where, grads, size):
        packed = [None] * size
        for i, g in zip(where, grads):
            packed[i] = g
        return tuple(packed)

    @staticmethod
    def _unpack(where, values, records):
        out = [values[i] for i in where]
        for new, record in zip(out, records):
            _check_replacement(new, record[-1])
        return out

    def _on_output_grads(self, grads):
        self.grad_outputs = self._pack(self.output_tensors_index, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(out)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = out
        grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:    # no input needs a gradient: the hooks run now
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            none = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, none, grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(g is None for g in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return self._unpack(self.output_tensors_index, grad_outputs, self._outputs)

    def _on_input_grads(self, grads):
        if self.grad_outputs is None:
            # the outputs' node did not run: an output was changed in place after the call
            # (its history was rebased past that node), or the gradient reached the inputs
            # another way (double backward): PyTorch raises for the first at the in-place op
            self._check_inplace(self._outputs)
            return grads
        grad_inputs = self._pack(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, grad_inputs, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(grad_inputs)}")
            grad_inputs = out
        self.grad_outputs = None
        return self._unpack(self.input_tensors_index, grad_inputs, self._inputs)
