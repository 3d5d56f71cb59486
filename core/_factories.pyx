"""The factories (tensor, empty, zeros, ones, full, arange and the *_like ones), NumPy and
DLPack interop, and complex tensors' paths through the real primitives.  An extension
module split from the Tensor module: core/_tensor.pyx re-exports its public names and
reaches the ones it calls through the hooks this module sets.
"""
include "_core_cimports.pxi"

from ember.core cimport _tensor as _T
from ember.core._tensor cimport (
    Storage, TensorBase, as_tensor_arg, binary_op, broadcast_into, capture_live,
    captured_factory,
    cast_to, check_writable, contiguous_copy, default_complex_dtype, detach_c, empty_c,
    factory_size, fill_c, foreign_storage, init_ctx, is_scalar, kernel_fill, make_view, new_empty,
    new_like, new_tensor, numpy, op_ne, prepare_out, raise_kernel_error, raise_sync_error,
    grant_out_write,
    is_grad_enabled_c, read_scalar, refuse_batched, refuse_limited_named, report_data_read,
    restrided,
    run_copy, scalar_buf, scalar_dtype, st_name, to_c, with_grad)


include "_factories.pxi"
include "_interop.pxi"
include "_complex.pxi"

_T.one_element = one_element
_T.item_c = item_c
_T.host_array = host_array
_T.numpy_view = numpy_view
_T.complex_ops = complex_ops
_T.complex_copy = complex_copy
_T.complex_fill = complex_fill
