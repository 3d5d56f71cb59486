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
    check_writable, conj_of, contiguous_copy, copy_into, derive, derive_binary, derive_unary,
    effective_keys, empty_c, expanded_view, init_ctx, is_grad_enabled_c, is_scalar, numpy,
    op_abs, op_amax, op_amin, op_div, op_eq, op_exp, op_floor_divide, op_ge, op_gt, op_le,
    op_logical_and, op_logical_xor, op_lt, op_mul, op_ne, op_pow, op_remainder, op_sub,
    op_sum, op_trunc, operator_op, grant_out_write, prepare_out, raise_kernel_error, reduce_op,
    refuse_limited_named, result_type2, routed, run_copy, scalar_buf, scalar_view, st_name,
    unary_entry, unary_op, wrap_dim, write_scalar, check_scalar_range)
from ember.core._views cimport expand_c, reshape_c, squeeze_c, transpose_c, unsqueeze_c

from ember.core._factories import zeros_like
from ember.core._tensor import _dim_or_axis, _numpy_names, _result_out


include "_math.pxi"
include "_softmax.pxi"
include "_matmul.pxi"
