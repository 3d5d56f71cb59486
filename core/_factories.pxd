# What the other op modules call of core/_factories.pyx (the Tensor module reaches the ones
# it calls through its hooks, _tensor.pxd).
from ember_abi cimport ember_view

from ember.core._device cimport device
from ember.core._dtype cimport dtype
from ember.core._tensor cimport TensorBase

cdef TensorBase from_host_array(object arr, dtype dt, device dev)
cdef object host_array(TensorBase t)
cdef object item_c(TensorBase t)
cdef object complex_ops()
cdef TensorBase real_view_c(TensorBase t)
cdef int complex_where_views(dtype rt, ember_view* vo, ember_view* vc, ember_view* va,
                             ember_view* vb) except -1
cdef int complex_index_views(int code, TensorBase out, TensorBase a, str op, ember_view* vo,
                             ember_view* va, ember_view* vi) except -1
