"""SparseAdam: Adam for sparse gradients (``torch.optim.SparseAdam``).

ember has no sparse tensor layout, so every gradient it produces is dense, and SparseAdam
refuses dense gradients exactly as PyTorch does.  The class exists so that code naming it
(and its argument checks and error messages) behaves as under torch."""
import ember

from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam: PyTorch's ``torch.optim.SparseAdam``.

    Args:
        params: parameters or parameter groups (dense, real tensors).
        lr (float or Tensor): learning rate, > 0 (default 1e-3).
        betas (tuple of two floats): decay rates of the running averages of the gradient and
            of its square (default (0.9, 0.999)).
        eps (float): added to the denominator, > 0 (default 1e-8).
        maximize (bool): maximize the objective instead of minimizing it.

    ``step`` raises RuntimeError for a dense gradient, which is every gradient in ember.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, ember.Tensor):
            ember._check_value(lr.numel() == 1, "Tensor lr must be 1-element")
        # strictly positive, unlike the other optimizers
        ember._check_value(0.0 < lr, lambda: f"Invalid learning rate: {lr}")
        ember._check_value(0.0 < eps, lambda: f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            ember._check_value(0.0 <= betas[i] < 1.0,
                               lambda: f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse, complex_ = [], []
        for g, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([g, i])
                if p.is_complex():
                    complex_.append([g, i])
        ember._check_value(not sparse, lambda: (
            f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors"))
        ember._check_value(not complex_, lambda: (
            f"Complex params at indices {complex_}: SparseAdam does not support complex "
            "parameters"))

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model and returns
        the loss.  Raises RuntimeError when a parameter has a (dense) gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        return loss
