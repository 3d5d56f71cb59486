"""Normalisation layers and the negative log-likelihood losses: the backends' optional
`norm`/`nll` entries and their composites.  An extension module split from the Tensor
module (core/_tensor.pyx re-exports its public names) so the core compiles in parallel.
"""
include "_core_cimports.pxi"

from ember.core._dispatch cimport SAVE_INPUTS, SAVE_RESULT
from ember.core._math cimport op_log_softmax, softmax_forward
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, derive, init_ctx, is_grad_enabled_c,
    raise_kernel_error, routed_n, same_device, set_func_level_c, st_name)

from ember.core._math import where
from ember.core._factories import empty, zeros

include "_norm.pxi"
include "_nll.pxi"
