"""Convolutions for ``ember.nn.functional``: the core's conv1d/conv2d (core/conv.py)."""
from ember.core.conv import conv1d, conv2d

__all__ = ["conv1d", "conv2d"]

# conv3d and the transposed convolutions: composites over the core's conv1d/conv2d
from ember.nn._functional.conv3d import conv3d  # noqa: E402
from ember.nn._functional.conv_transpose import (  # noqa: E402
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)

__all__ += ["conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
