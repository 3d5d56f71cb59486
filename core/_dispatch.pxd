# Dispatch keys, key sets (64-bit masks) and per-op kernel tables.
from libc.stdint cimport uint64_t

# The order is the priority: a higher key handles a call first.  See _dispatch.pyx for
# why each key sits where it does.
cpdef enum DispatchKey:
    Undefined = 0
    # backend keys: where the data lives (bits 1..31)
    CPU = 1
    CUDA = 2
    MPS = 3
    XPU = 4
    Meta = 5
    PrivateUse1 = 6
    # bits 8..31: device types registered by plugins at run time
    # functionality keys (bits 40..): what happens before the data is touched
    BackendSelect = 40
    Python = 41
    ADInplaceOrView = 42
    Batched = 43            # vmap's wrappers (PyTorch's FuncTorchBatched)
    Autograd = 44
    ForwardAD = 45          # tangents of forward-mode AD
    VmapMode = 46           # mode key while a vmap runs (PyTorch's FuncTorchVmapMode)
    Autocast = 47
    PythonMode = 48
    Profiler = 49

# What an op's derivative record (Op.derivative = (formula, entry, flags)) says its formula
# reads and whether the op writes its first argument; see _autograd_support.pxi.
cpdef enum DerivativeFlags:
    SAVE_INPUTS = 1
    SAVE_RESULT = 2
    SAVE_FIRST = 4          # only the first positional argument
    WRITES_SELF = 8         # the op writes its first argument (copy_, fill_, index_put)
    SELF_FOR_OTHERS = 16    # self is read only for the other inputs' gradients (mul, div):
                            # kept (an in-place write: a copy of it) only when one needs it
    OTHER_FOR_SELF = 32     # the other inputs are read only for self's gradient (mul)

cdef enum:
    FIRST_DYNAMIC_BACKEND = 8
    LAST_DYNAMIC_BACKEND = 31
    NUM_KEYS = 64

cdef uint64_t BACKEND_MASK          # bits 1..31
cdef uint64_t DEFAULT_TENSOR_KEYS   # functionality keys every tensor carries
cdef uint64_t _fallthrough          # keys whose global fallback is "fall through"
cdef list _fallbacks                # per key: None or factory(op) -> that op's kernel there

cdef inline int highest_key(uint64_t ks) noexcept nogil:
    return 63 - __builtin_clzll(ks) if ks else 0

cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil


cdef class Op:
    cdef readonly str name
    cdef readonly str schema
    cdef readonly int family          # FAMILY_* (_ops.pxd)
    cdef readonly int code            # the abi.h op code within its family
    cdef readonly object shape_rule   # plain Python over size tuples
    cdef public object derivative     # set by the autograd layer
    cdef public object entry          # runs the op again below the calling key (redispatch)
    cdef list _table                  # 64 entries: None or a Python kernel
    cdef uint64_t _kernel_mask        # keys with a real kernel in _table
    cdef uint64_t _ft_mask            # keys this op registered as FALLTHROUGH
    # The key whose handler runs for `keys`; raises if a functionality key has no kernel
    # and does not fall through.  A backend key means "the backend's primitive kernels"
    # unless _table holds an override for it.
    cdef int resolve(self, uint64_t keys) except -1
