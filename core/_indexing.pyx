"""The index family (gather, scatter, index_select/add/copy/fill, take, put, searchsorted,
multinomial) and advanced indexing (t[idx], t[idx] = v).  An extension module split from the
Tensor module (core/_tensor.pyx re-exports its public names) so the core compiles in
parallel.
"""
include "_core_cimports.pxi"

from ember.core._factories cimport complex_index_views, from_host_array, host_array, item_c
from ember.core._math cimport where_c
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, binary_op, capture_live, cast_to, check_writable, clone_c, copy_into,
    derive, empty_c, fill_c, init_ctx, make_view, numpy, op_add, op_amin, op_div, op_eq,
    op_floor_divide, op_gt, op_mul, op_neg, op_sum, prepare_out, raise_kernel_error,
    grant_out_write,
    reduce_op, refuse_limited_named, result_type2, routed, routed2, routed_n, run_copy,
    same_device, st_name, to_c, unary_op, wrap_dim, zeros_for)
from ember.core._views cimport (
    expand_c, has_advanced, index_view, is_array, permute_c, reshape_c, unsqueeze_c)

from ember.core._factories import full, ones_like, tensor, zeros
from ember.core._math import nonzero, where
from ember.core._random import rand
from ember.core._tensor import _dim_or_axis


include "_indexing.pxi"
include "_advindex.pxi"
