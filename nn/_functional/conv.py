"""Convolutions for ``ember.nn.functional``: the core's conv1d/conv2d (core/conv.py)."""
from ember.core.conv import conv1d, conv2d

__all__ = ["conv1d", "conv2d"]
