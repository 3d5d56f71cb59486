"""Convolution and pooling: the backends' optional `conv`/`pool` entries and the composites
that run where a backend has none.  An extension module of its own, split from the Tensor
module (core/_tensor.pyx re-exports its public names) so the core compiles in parallel.
"""
include "_core_cimports.pxi"

from ember.core._dispatch cimport SAVE_INPUTS, SAVE_RESULT
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, cast_to, derive, effective_keys, empty_c, init_ctx,
    is_grad_enabled_c, numpy, operand, raise_kernel_error, same_device, st_name)

from ember.core._math import where
from ember.core._factories import full, tensor, zeros

include "_conv.pxi"
include "_pool.pxi"
