# Storages seen from Python (ember.UntypedStorage wraps one), and the tensor methods that
# change a tensor's storage: set_, resize_, the version counter's bump.


def _storage_of(TensorBase t):
    """The core Storage under ``t``."""
    return t._storage


def _storage_device(Storage s):
    return s.device


def _new_storage(int64_t nbytes, dev):
    """A fresh storage of ``nbytes`` bytes on ``dev`` (uninitialised)."""
    cdef device d = as_device(dev)
    return allocate(backend_for(d), d, nbytes)


cdef int _geometry(TensorBase t, sizes, strides) except -1:
    cdef int nd = len(sizes)
    cdef int i
    if nd > MAX_DIM:
        raise RuntimeError(f"ember tensors have at most {MAX_DIM} dims, got {nd}")
    t._ndim = nd
    for i in range(nd):
        t._sizes[i] = sizes[i]
        t._strides[i] = strides[i]
    t._shape = None
    return 0


def _tensor_over(Storage s, dtype dt, sizes, strides, int64_t offset):
    """A new tensor of ``dt`` viewing ``s`` with the given geometry (its own version)."""
    cdef int64_t sz[MAX_DIM]
    cdef int64_t st[MAX_DIM]
    cdef int i, nd = len(sizes)
    for i in range(nd):
        sz[i] = sizes[i]
        st[i] = strides[i]
    return new_tensor(s, dt, nd, sz, st, offset)


def _set_storage(TensorBase t, Storage s, int64_t offset, sizes, strides):
    """``t.set_(storage, offset, size, stride)``: t views ``s`` with that geometry."""
    check_write(t)
    cdef int64_t end = offset
    cdef int i
    for i in range(len(sizes)):
        if sizes[i] == 0:
            end = offset - 1
            break
        end += (sizes[i] - 1) * strides[i]
    if (end + 1) * t._dtype.itemsize > s._nbytes and end >= offset:
        raise RuntimeError(f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage "
                           f"offset {offset}, and itemsize {t._dtype.itemsize} requiring a "
                           f"storage size of {(end + 1) * t._dtype.itemsize} are out of "
                           f"bounds for storage of size {s._nbytes}")
    t._storage, t._device, t._backend = s, s.device, s.backend
    t._keys = (t._keys & ~BACKEND_MASK) | (<uint64_t>1 << s.backend.key)
    t._offset = offset
    _geometry(t, sizes, strides)
    t._base_ref = None
    t.bump()
    return t


def _resize(TensorBase t, sizes):
    """``t.resize_(sizes)``: contiguous strides; the storage grows (its bytes kept) when the
    new shape needs more."""
    check_write(t)
    cdef int nd = len(sizes)
    cdef int64_t sz[MAX_DIM]
    cdef int64_t st[MAX_DIM]
    cdef int i
    for i in range(nd):
        if sizes[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {sizes[i]}: "
                               f"{list(sizes)}")
        sz[i] = sizes[i]
    cdef int64_t nbytes = storage_nbytes(nd, sz, st, t._dtype.itemsize)
    cdef int64_t need = nbytes + t._offset * t._dtype.itemsize if nbytes else 0
    cdef Storage grown
    cdef TensorBase old_bytes, new_bytes
    cdef int64_t one = 1
    if need > t._storage._nbytes:
        grown = allocate(t._backend, t._device, need)
        if t._storage._nbytes and not t._backend.is_meta:
            old_bytes = new_tensor(t._storage, _dtypes.uint8, 1, &t._storage._nbytes, &one, 0)
            new_bytes = new_tensor(grown, _dtypes.uint8, 1, &t._storage._nbytes, &one, 0)
            run_copy(new_bytes, old_bytes)
        t._storage = grown
    t._ndim = nd
    for i in range(nd):
        t._sizes[i] = sz[i]
        t._strides[i] = st[i]
    t._shape = None
    t.bump()
    return t


def _bump_version(TensorBase t):
    """Count one in-place write of ``t`` (autograd.graph.increment_version); the counter is
    made if nothing observed it yet, so the count shows."""
    t.version()
    t.bump()


def _version_of(TensorBase t):
    return t.version().value
