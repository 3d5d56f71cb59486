"""``ember.utils.tensorboard``: ``SummaryWriter`` writing TensorBoard event files through
the ``tensorboard`` package (its protobufs and event-file writer)."""
try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError("ember.utils.tensorboard needs the 'tensorboard' package, which is not "
                      "installed: pip install tensorboard") from e

from ember.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]
