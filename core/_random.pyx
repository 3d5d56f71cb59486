"""Random numbers: the Generator, the in-place random fills (uniform_, normal_) and the
random factories (rand, randn, *_like).  An extension module split from the Tensor module
(core/_tensor.pyx re-exports its public names) so the core compiles in parallel.
"""
include "_core_cimports.pxi"

from ember.core._dispatch cimport WRITES_SELF
from ember.core._tensor cimport (
    TensorBase, as_tensor_arg, derive, effective_keys, factory_size, init_ctx, new_empty,
    new_like, parse_size, raise_kernel_error, report_allocation, report_side_effect, st_name,
    with_grad)

from ember.core._factories cimport real_view_c

from ember.core import _factories
from ember.core._factories import tensor, zeros_like

cdef extern from "Python.h":
    ctypedef struct PyTypeObject:
        const char* tp_name
    void PyType_Modified(PyTypeObject*)

include "_random.pxi"
include "_random_factories.pxi"
