"""ember.nn.utils: gradient clipping and parameter/vector conversion."""
from ember.nn.utils.clip_grad import clip_grad_norm_ as clip_grad_norm_
from ember.nn.utils.clip_grad import clip_grad_value_ as clip_grad_value_
from ember.nn.utils.clip_grad import get_total_norm as get_total_norm
from ember.nn.utils.convert_parameters import parameters_to_vector as parameters_to_vector
from ember.nn.utils.convert_parameters import vector_to_parameters as vector_to_parameters

# loads the submodule ember.nn.utils.rnn (torch.nn.utils.rnn: padding and packing)
from ember.nn.utils.rnn import PackedSequence as _PackedSequence  # noqa: F401
