"""Reductions (sum, mean, prod, amax, amin, argmax, argmin), scans (cumsum, cumprod, cummax,
cummin) and their derivatives.  An extension module split from the Tensor module
(core/_tensor.pyx re-exports its public names and calls `reduce_op` through its hook) so
the core compiles in parallel.
"""
include "_core_cimports.pxi"

from ember.core cimport _tensor as _T
from ember.core._factories cimport complex_ops
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, cast_to, derive, effective_keys, empty_c, init_ctx, op_amax,
    op_amin, op_mean, op_prod, op_sum, prepare_out, raise_kernel_error, refuse_batched,
    grant_out_write,
    refuse_limited, run_copy, st_name, table_op, wrap_dim)
from ember.core._views cimport reshape_c

from ember.core._factories import zeros
from ember.core._indexing import scatter_add
from ember.core._math import where
from ember.core._tensor import _dim_or_axis, _numpy_names, _result_out
from ember.core._views import movedim

include "_reduce.pxi"
include "_select.pxi"

_T.reduce_op = reduce_op
