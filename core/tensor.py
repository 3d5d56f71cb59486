"""ember.Tensor: the Python-level tensor class (the Cython TensorBase does the work)."""
from ember.core._tensor import TensorBase, _set_tensor_class

__all__ = ["Tensor"]


class Tensor(TensorBase):
    """A multi-dimensional array on a device; PyTorch's ``torch.Tensor``.

    Subclass it from Python (``Parameter`` does); ops return plain ``Tensor``s."""

    __slots__ = ()
    __module__ = "ember"
    # NumPy defers to our reflected operators: `ndarray + tensor` gives a tensor
    __array_priority__ = 1000


_set_tensor_class(Tensor)
