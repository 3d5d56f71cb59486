"""ember.nn.utils (``torch.nn.utils``): gradient clipping, parameter/vector conversion,
weight and spectral normalization, parametrizations, BatchNorm fusion, functional calls."""
from ember.nn.utils import parametrizations, parametrize, rnn, stateless
from ember.nn.utils.clip_grad import clip_grad_norm as clip_grad_norm
from ember.nn.utils.clip_grad import clip_grad_norm_ as clip_grad_norm_
from ember.nn.utils.clip_grad import clip_grad_value_ as clip_grad_value_
from ember.nn.utils.clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from ember.nn.utils.clip_grad import get_total_norm as get_total_norm
from ember.nn.utils.convert_parameters import parameters_to_vector as parameters_to_vector
from ember.nn.utils.convert_parameters import vector_to_parameters as vector_to_parameters
from ember.nn.utils.fusion import fuse_conv_bn_eval as fuse_conv_bn_eval
from ember.nn.utils.fusion import fuse_conv_bn_weights as fuse_conv_bn_weights
from ember.nn.utils.fusion import fuse_linear_bn_eval as fuse_linear_bn_eval
from ember.nn.utils.fusion import fuse_linear_bn_weights as fuse_linear_bn_weights
from ember.nn.utils.init import skip_init as skip_init
from ember.nn.utils.memory_format import (
    convert_conv2d_weight_memory_format as convert_conv2d_weight_memory_format,
)
from ember.nn.utils.memory_format import (
    convert_conv3d_weight_memory_format as convert_conv3d_weight_memory_format,
)
from ember.nn.utils.spectral_norm import remove_spectral_norm as remove_spectral_norm
from ember.nn.utils.spectral_norm import spectral_norm as spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm as remove_weight_norm
from ember.nn.utils.weight_norm import weight_norm as weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "get_total_norm", "parameters_to_vector",
           "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
           "rnn", "skip_init", "spectral_norm", "stateless", "vector_to_parameters",
           "weight_norm"]
