"""AdamW (Loshchilov & Hutter): Adam with decoupled weight decay (``torch.optim.adamw``)."""
from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay, PyTorch's ``torch.optim.AdamW``.

    Args are Adam's; ``weight_decay`` defaults to 1e-2 and multiplies the parameter by
    ``1 - lr * weight_decay`` before the Adam update instead of entering the gradient.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        # AdamW decays decoupled whatever the saved groups say (older checkpoints lack
        # the key, and Adam's default for it is False)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
          capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
          has_complex=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """Functional AdamW (``torch.optim.adamw.adamw``): :func:`ember.optim.adam.adam` with
    decoupled weight decay."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach,
         capturable, differentiable, fused, grad_scale, found_inf, has_complex, True,
         amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
         eps=eps, maximize=maximize)
