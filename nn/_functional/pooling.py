"""Pooling for ``ember.nn.functional``: the core's pooling functions (core/pooling.py), and
the ``*_with_indices`` spellings of PyTorch's functional module."""
from functools import partial

from ember.core.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "max_pool1d",
           "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices"]

max_pool1d_with_indices = partial(max_pool1d, return_indices=True)
max_pool2d_with_indices = partial(max_pool2d, return_indices=True)
adaptive_max_pool1d_with_indices = partial(adaptive_max_pool1d, return_indices=True)
adaptive_max_pool2d_with_indices = partial(adaptive_max_pool2d, return_indices=True)
