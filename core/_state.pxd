# Process-wide and thread-local state, in one module (PITFALLS: a `static __thread` in a
# shared header is a separate copy per extension module).  Read through these cdef
# functions; OpenMP workers never see thread-locals, so kernels get state as arguments.
from libc.stdint cimport uint64_t

cdef uint64_t tls_included() noexcept nogil
cdef uint64_t tls_excluded() noexcept nogil
cdef void set_tls_included(uint64_t keys) noexcept nogil
cdef void set_tls_excluded(uint64_t keys) noexcept nogil
# how many Autograd kernels are running their op below themselves on this thread (their
# exclusion of the Autograd key is not a no_grad: vmap's rules lift it for physical ops)
cdef int ag_below() noexcept nogil
cdef void set_ag_below(int depth) noexcept nogil
# forward AD: tangent levels at or above this one are hidden (the ForwardAD kernel's level)
cdef int fw_ceiling() noexcept nogil
cdef void set_fw_ceiling(int level) noexcept nogil

cdef bint deterministic() noexcept nogil
cdef int matmul_precision() noexcept nogil

cdef object default_dtype()                 # an ember dtype (process-wide, as PyTorch)
cdef object default_device()                # thread-local ember.device or None (= cpu)
