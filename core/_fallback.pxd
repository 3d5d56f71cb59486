# The kernel table the core calls for one device type: the plugin's table copied into a
# full-size struct (entries past the size it was built with stay NULL), and for a device
# other than the host, its primitive entries wrapped by the host fallback (_fallback.pyx).
from ember_abi cimport ember_kernel_table


cdef struct fallback_state:
    ember_kernel_table dev            # the plugin's own table (full size, NULL-padded)
    ember_kernel_table *host          # the CPU plugin's, loaded at the first fallback
    void *backend                     # the Backend (borrowed: it lives for the process)


cdef class KernelTable:
    cdef ember_kernel_table table     # what the core calls
    cdef fallback_state state
    cdef bint wrapped                 # primitives go through the host fallback
    cdef inline void activate(self) noexcept:
        """Call before this table's entries: the wrappers find their device through it
        (one thread-local, set right before the call on the calling thread)."""
        if self.wrapped:
            set_current(&self.state)


cdef void set_current(fallback_state *s) noexcept nogil
cdef object take_pending()            # an exception a fallback could not raise, or None
