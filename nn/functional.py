"""``ember.nn.functional``: a thin façade over the modules of nn/_functional."""

# conv and pooling
from ember.nn._functional.conv import conv1d as conv1d
from ember.nn._functional.conv import conv2d as conv2d
from ember.nn._functional.pooling import adaptive_avg_pool1d as adaptive_avg_pool1d
from ember.nn._functional.pooling import adaptive_avg_pool2d as adaptive_avg_pool2d
from ember.nn._functional.pooling import adaptive_max_pool1d as adaptive_max_pool1d
from ember.nn._functional.pooling import (
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d_with_indices,
)
from ember.nn._functional.pooling import adaptive_max_pool2d as adaptive_max_pool2d
from ember.nn._functional.pooling import (
    adaptive_max_pool2d_with_indices as adaptive_max_pool2d_with_indices,
)
from ember.nn._functional.pooling import avg_pool1d as avg_pool1d
from ember.nn._functional.pooling import avg_pool2d as avg_pool2d
from ember.nn._functional.pooling import max_pool1d as max_pool1d
from ember.nn._functional.pooling import max_pool1d_with_indices as max_pool1d_with_indices
from ember.nn._functional.pooling import max_pool2d as max_pool2d
from ember.nn._functional.pooling import max_pool2d_with_indices as max_pool2d_with_indices
