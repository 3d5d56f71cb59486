"""Flatten parameters into one vector and back (``torch.nn.utils.convert_parameters``)."""
from ember.core.shapes import cat
from ember.core.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _same_device(params):
    device = None
    for p in params:
        if device is None:
            device = p.device
        elif p.device != device:
            raise TypeError("Found two parameters on different devices, this is currently "
                            "not supported.")
        yield p


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's values, in order."""
    return cat([p.reshape(-1) for p in _same_device(parameters)])


def vector_to_parameters(vec, parameters):
    """Make each parameter's data the next slice of the 1-D ``vec`` (shared, not
    copied)."""
    if not isinstance(vec, Tensor):
        from ember import typename
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    offset = 0
    for p in _same_device(parameters):
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
