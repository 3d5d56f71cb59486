"""GradBucket: what a DistributedDataParallel communication hook receives (PyTorch's
``torch.distributed.GradBucket``)."""

__all__ = ["GradBucket"]


class GradBucket:
    """One bucket of gradients ready to be reduced: ``buffer()`` is their flat
    concatenation, ``gradients()`` views of it per parameter, ``parameters()`` the
    parameters, ``index()`` its position in launch order, ``is_last()`` whether it is the last
    of the iteration (the first layers of the model)."""

    def __init__(self, index, bucket_count, buffer, gradients, parameters):
        self._index = index
        self._count = bucket_count
        self._buffer = buffer
        self._gradients = gradients
        self._parameters = parameters

    def index(self):
        """The bucket's index (0 is the first to be reduced)."""
        return self._index

    def buffer(self):
        """The gradients as one flat 1-D tensor."""
        return self._buffer

    def gradients(self):
        """One tensor per parameter, views of ``buffer()``."""
        return list(self._gradients)

    def is_last(self):
        """Whether this is the iteration's last bucket."""
        return self._index == self._count - 1

    def parameters(self):
        """The parameters whose gradients the bucket holds."""
        return list(self._parameters)

    def set_buffer(self, buffer):
        """Replace the tensor ``buffer()`` returns (a hook wrapper casting the bucket)."""
        self._buffer = buffer

    def __repr__(self):
        return f"<GradBucket {self._index} of {self._count}: {self._buffer.numel()} elements>"


GradBucket.__module__ = "ember.distributed"
