"""DistributedDataParallel communication hooks (``ddp.register_comm_hook(state, hook)``):
``default_hooks`` holds PyTorch's built-in ones."""
from . import default_hooks as default_hooks

__all__ = ["default_hooks"]
