"""Elementwise math beyond the arithmetic operators (the table's unary and binary functions,
comparisons, where, nonzero, their derivatives), softmax and matmul.  An extension module
split from the Tensor module (core/_tensor.pyx re-exports its public names) so the core
compiles in parallel.
"""
include "_core_cimports.pxi"

from ember.core._factories cimport (
    complex_ops, complex_where_views, from_host_array, host_array, item_c)
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, binary_entry, binary_op, broadcast_into, cast_to,
    check_writable, contiguous_copy, copy_into, derive, derive_binary, derive_unary,
    effective_keys, empty_c, expanded_view, init_ctx, is_grad_enabled_c, is_scalar, numpy,
    operator_op, prepare_out, raise_kernel_error, reduce_op, refuse_limited_named,
    result_type2, routed, run_copy, scalar_buf, scalar_view, st_name, unary_entry, unary_op,
    wrap_dim, write_scalar)
from ember.core._views cimport expand_c, reshape_c, squeeze_c, transpose_c, unsqueeze_c

from ember.core._factories import zeros_like
from ember.core._tensor import _numpy_names

# the ops of other families these formulas run (the registry's, looked up once)
cdef Op op_amax = get_op("amax")
cdef Op op_amin = get_op("amin")
cdef Op op_div = get_op("div")
cdef Op op_exp = get_op("exp")
cdef Op op_mul = get_op("mul")
cdef Op op_sub = get_op("sub")
cdef Op op_sum = get_op("sum")

include "_math.pxi"
include "_softmax.pxi"
include "_matmul.pxi"
