"""Joining and splitting (cat, split, chunk, unbind) and the storage-level tensor methods
(set_, resize_, the version counter).  An extension module split from the Tensor module
(core/_tensor.pyx re-exports its public names) so the core compiles in parallel.
"""
include "_core_cimports.pxi"

from ember.core._dispatch cimport SAVE_RESULT
from ember.core._tensor cimport (
    Storage, TensorBase, allocate, can_cast, check_write, copy_into, derive, effective_keys,
    new_empty, new_tensor, op_copy, own_device, grant_out_write, prepare_out, run_copy, st_name,
    storage_nbytes, wrap_dim)

cdef uint64_t PYTHON_KEY_BIT = <uint64_t>1 << DispatchKey.Python
from ember.core._views cimport narrow_c, select_c, unsqueeze_c

from ember.core._factories import zeros
from ember.core._tensor import _numpy_names

include "_joining.pxi"
include "_storage_access.pxi"
