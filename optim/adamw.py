"""AdamW (Loshchilov & Hutter): Adam with decoupled weight decay (``torch.optim.adamw``)."""
from .adam import Adam

__all__ = ["AdamW"]


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
