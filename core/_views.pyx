"""The view ops (view, reshape, permute, transpose, expand, squeeze, narrow, select,
diagonal, as_strided, basic indexing, ...): metadata only, one implementation for every
device.  An extension module split from the Tensor module: core/_tensor.pyx re-exports its
public names and reaches the ones its methods call through the hooks this module sets.
"""
include "_core_cimports.pxi"

from ember.core cimport _tensor as _T
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, clone_c, contiguous_copy, contiguous_strides, copy_into, derive,
    fill_c, make_view, new_empty, new_tensor, parse_shape, restrided, routed, st_name, wrap_dim,
    zeros_for)

from ember.core._tensor import _dim_or_axis, _make_batched, _numpy_names

include "_views.pxi"

_T.view_c = view_c
_T.view_dtype_c = view_dtype_c
_T.reshape_c = reshape_c
_T.expand_c = expand_c
_T.permute_c = permute_c
_T.transpose_c = transpose_c
_T.squeeze_c = squeeze_c
_T.unsqueeze_c = unsqueeze_c
_T.narrow_c = narrow_c
_T.select_c = select_c
_T.diagonal_c = diagonal_c
_T.as_strided_c = as_strided_c
_T.getitem = getitem
_T.setitem = setitem

# advanced indexing is the index family's (it cimports this module, so it loads after it)
from ember.core._indexing import adv_getitem, adv_setitem
