"""Flatten and Unflatten (``torch.nn.modules.flatten``)."""
from ember.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims start_dim..end_dim into one (the batch dim 0 stays by default)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size`` (a tuple/list of ints, or a
    torch.Size)."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)):
                raise TypeError(f"unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
            for i, size in enumerate(unflattened_size):
                if not isinstance(size, int):
                    raise TypeError(f"unflattened_size must be tuple of ints, but found "
                                    f"element of type {type(size).__name__} at pos {i}")
        else:
            raise TypeError(f"invalid argument 'dim': expected int, got "
                            f"{type(dim).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
