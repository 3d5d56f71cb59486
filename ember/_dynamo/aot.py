"""Training through captured graphs: the forward graph runs inside an autograd Function
whose backward is the captured backward graph (PyTorch's AOTAutograd, in miniature).

The backward graph was recorded by running the autograd engine on the capture's outputs
with symbolic tangents, so it holds exactly the derivative formulas eager backward runs;
forward values it reads are extra outputs of the forward graph (saved for backward).  Both
graphs go through the same backend.  A backward that must itself be differentiable
(``create_graph=True``) is refused, as PyTorch's is: the saved values have no history.
"""
import threading

from ember.autograd.function import Function
from ember.autograd.grad_mode import is_grad_enabled

__all__ = ["CompiledJoint"]


class CompiledJoint:
    """A forward/backward pair compiled from one capture.

    Args:
        fw: compiled forward: (symbols, inputs...) -> (user outputs..., saved...).
        bw: compiled backward: (symbols, saved..., tangents...) -> one gradient per
            differentiable input.
        n_sym, n_user: how many symbol inputs / user outputs.
        diff_positions: for each backward output, the index of its input among the
            forward's tensor inputs.
        tangent_outputs: indices of the user outputs that get a tangent.
        non_diff: indices of user outputs that do not require grad.
        bw_lifted: tensors from outside the call that only the backward reads (its last
            inputs).
        n_reads: how many of the forward's last outputs are values for value guards.
    """

    def __init__(self, fw, bw, n_sym, n_user, diff_positions, tangent_outputs, non_diff,
                 bw_lifted=(), n_reads=0):
        self.fw, self.bw = fw, bw
        self.n_reads = n_reads
        self._reads = threading.local()
        self.n_sym, self.n_user = n_sym, n_user
        self.diff_positions = tuple(diff_positions)
        self.tangent_outputs = tuple(tangent_outputs)
        self.non_diff = tuple(non_diff)
        self.bw_lifted = tuple(bw_lifted)

    def __call__(self, syms, tensors):
        return _JointFunction.apply(self, tuple(syms), *tensors)

    def last_reads(self):
        """The values the last forward on this thread computed for the value guards."""
        return self._reads.values


class _JointFunction(Function):
    @staticmethod
    def forward(ctx, joint, syms, *tensors):
        outs = joint.fw(*syms, *tensors)
        end = len(outs) - joint.n_reads
        user, saved = outs[:joint.n_user], outs[joint.n_user:end]
        # values read into Python at capture (their guards): outside autograd's outputs
        joint._reads.values = outs[end:]
        ctx.joint, ctx.syms, ctx.n_in = joint, syms, len(tensors)
        ctx.save_for_backward(*saved)
        if joint.non_diff:
            ctx.mark_non_differentiable(*(user[i] for i in joint.non_diff))
        return tuple(user)

    @staticmethod
    def backward(ctx, *grads):
        joint = ctx.joint
        # the backward graph was traced with contiguous tangents (convert._trace_backward)
        tangents = [g if g is None or g.is_contiguous() else g.contiguous()
                    for g in (grads[i] for i in joint.tangent_outputs)]
        if is_grad_enabled():
            # the saved values are outputs of the compiled forward, with no history back
            # to the inputs: a recorded backward would miss their derivatives (second
            # derivatives came out wrong), so it is refused, as PyTorch's AOTAutograd does
            raise RuntimeError("ember.compile with aot_autograd does not currently support "
                               "double backward (create_graph=True through a compiled "
                               "graph); compute higher-order gradients eagerly "
                               "(ember.compiler.disable)")
        res = joint.bw(*ctx.syms, *ctx.saved_tensors, *tangents, *joint.bw_lifted)
        out = [None] * ctx.n_in
        for pos, g in zip(joint.diff_positions, res):
            out[pos] = g
        return (None, None, *out)
