# Storage (a device buffer and its owner) and the version counter shared by views.


class OutOfMemoryError(RuntimeError):
    """A device allocator could not satisfy a request (``ember.OutOfMemoryError``, also
    ``ember.cuda.OutOfMemoryError``, as PyTorch's)."""


OutOfMemoryError.__module__ = "ember"

# no_gc_clear: a storage reachable only from a reference cycle (a tensor in an object that
# refers to itself, vmap's wrappers) is collected by the cyclic GC, whose clear would set
# backend to None before __dealloc__ runs, so the block was never freed (18 MB a call of
# per-sample gradients leaked).  A storage refers to no tensor, so it closes no cycle.
@cython.no_gc_clear
cdef class Storage:
    """A device buffer: (data pointer, nbytes, device, owner)."""

    def __dealloc__(self):
        if self.owned and self.data is not NULL and self.backend is not None:
            self.backend._table.free(device_index(self.device), self.data)
            self.data = NULL

    def data_ptr(self):
        return <size_t>self.data

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def __repr__(self):
        return f"<ember storage of {self._nbytes} bytes on {self.device}>"


cdef Storage allocate(Backend b, device dev, int64_t nbytes):
    report_allocation()
    cdef Storage s = Storage.__new__(Storage)
    s.backend = b
    s.device = dev
    s._nbytes = nbytes
    s.owner = None
    if b.is_meta:
        s.data = NULL
        s.owned = False
        return s
    cdef ember_kernel_table* t = b.kernels()
    s.device = resolve_index(b, dev)
    cdef ember_ctx ctx
    init_ctx_on(&ctx, s.device)
    s.data = <char*>t.alloc(&ctx, nbytes)
    if s.data is NULL:
        msg = ctx.error[:].decode("utf-8", "replace")
        raise OutOfMemoryError(msg or f"{s.device}: out of memory trying to allocate "
                               f"{nbytes} bytes")
    s.owned = True
    return s


cdef Storage foreign_storage(Backend b, device dev, char* data, int64_t nbytes, object owner):
    cdef Storage s = Storage.__new__(Storage)
    s.backend = b
    s.device = dev
    s.data = data
    s._nbytes = nbytes
    s.owner = owner
    s.owned = False
    return s


cdef class VersionCounter:
    """Counts in-place writes; shared by a tensor and all its views."""
