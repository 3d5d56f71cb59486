"""``torch.utils.data._utils.collate``: default_collate, default_convert, collate and the
per-type collate functions of ``default_collate_fn_map`` (ember.utils.data._collate's, under
PyTorch's names), for custom collate functions that extend the default one."""
from .._collate import _ERR as default_collate_err_msg_format
from .._collate import _STR_OR_OBJECT as np_str_obj_array_pattern
from .._collate import _collate_floats as collate_float_fn
from .._collate import _collate_ints as collate_int_fn
from .._collate import _collate_numpy_arrays as collate_numpy_array_fn
from .._collate import _collate_numpy_scalars as collate_numpy_scalar_fn
from .._collate import _collate_strings as collate_str_fn
from .._collate import _collate_tensors as collate_tensor_fn
from .._collate import collate as collate
from .._collate import default_collate as default_collate
from .._collate import default_collate_fn_map as default_collate_fn_map
from .._collate import default_convert as default_convert

__all__ = ["collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn",
           "collate_numpy_scalar_fn", "collate_str_fn", "collate_tensor_fn", "default_collate",
           "default_collate_err_msg_format", "default_collate_fn_map", "default_convert",
           "np_str_obj_array_pattern"]
