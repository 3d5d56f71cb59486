# Devices and the backend registry: device type name <-> backend dispatch key <-> the
# kernel table a plugin hands over.
from ember_abi cimport ember_kernel_table
from ember.core._fallback cimport KernelTable


cdef class device:
    cdef readonly str type
    cdef readonly object index        # int or None
    cdef object _prev                 # for `with device(...)`
    cdef Py_hash_t _hash
    cdef object _backend              # its Backend, cached by backend_for


cdef class Backend:
    cdef readonly str type            # device type name
    cdef readonly int key             # its backend dispatch key
    cdef readonly str package         # the distribution that provides it, for messages
    cdef readonly bint is_meta        # shape-only: no storage, no kernels
    cdef public object plugin         # the plugin's name once one registered the type
    cdef object _loader               # () -> PyCapsule of an ember_kernel_table
    cdef object _capsule
    cdef KernelTable _kt              # the table the core calls (host fallback for others)
    cdef ember_kernel_table* _table   # &_kt.table once loaded
    cdef public object current_index  # () -> the runtime's current device index, or None
    # {(binary?, op code, dtype): function}: the op table's composites this device runs for
    # the elementwise kernels its plugin declares unimplemented (None: none), set on load
    cdef readonly object composites
    cdef ember_kernel_table* kernels(self) except NULL


cdef Backend backend_for(device d)
cdef device resolve_index(Backend b, device d)   # "cuda" -> "cuda:<current>" for storage
cdef device cpu_device()
cdef device as_device(object obj)           # device, str, int; None -> default device
