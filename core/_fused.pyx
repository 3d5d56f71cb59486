"""The backends' optional fused entries that replace a sequence of ops (a whole Adam or SGD
step, a whole LSTM layer), the exact GELU, the pointwise activations as one kernel each
way, and lerp/addcmul/addcdiv in one pass.  An extension module split
from the Tensor module (core/_tensor.pyx re-exports its public names) so the core compiles
in parallel.
"""
include "_core_cimports.pxi"

from ember.core cimport _tensor as _T
from ember.core._dispatch cimport SAVE_INPUTS
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, binary_op, cast_to, check_writable, contiguous_copy, derive,
    derive_binary, derive_unary, effective_keys, empty_c, expanded_view, grant_out_write,
    init_ctx,
    is_grad_enabled_c, raise_kernel_error, report_side_effect, routed, same_device, st_name,
    unary_op)

from ember.core._tensor import exp

include "_special.pxi"
include "_optim.pxi"
include "_rnn.pxi"
include "_activation.pxi"
include "_ternary.pxi"

_T.axpy_c = axpy_inplace
