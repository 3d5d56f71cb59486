# Making tensors: allocation with contiguous strides, views over a base, aliasing, and
# the inference-mode flag (included by _tensor.pyx before the TensorBase class).

cdef extern from "Python.h":
    ctypedef struct PyTypeObject:
        PyObject* (*tp_new)(PyTypeObject*, PyObject*, PyObject*)
        const char* tp_name
    void PyType_Modified(PyTypeObject*)

cdef tuple _no_args = ()

# inference_mode is thread-local; it lives here because every new tensor reads it
cdef extern from *:
    """
    static __thread int ember_tls_inference = 0;
    """
    int ember_tls_inference


cdef bint inference_mode_c() noexcept:
    return ember_tls_inference != 0


cdef void set_inference_mode_c(bint mode) noexcept:
    global ember_tls_inference
    ember_tls_inference = mode


cdef int refuse_inference_write(TensorBase t) except -1:
    """PyTorch's rule: an inference tensor is written in place only under inference_mode."""
    if t._inference and not ember_tls_inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    return 0


cdef TensorBase new_tensor(Storage s, dtype dt, int ndim, const int64_t* sizes,
                           const int64_t* strides, int64_t offset):
    # the tensor class's tp_new slot directly: `TensorBase.__new__(cls)` would be a
    # Python-level method call costing more than the rest of this function
    cdef PyTypeObject* tp = <PyTypeObject*>_tensor_cls
    cdef PyObject* obj = tp.tp_new(tp, <PyObject*>_no_args, NULL)
    if obj is NULL:
        raise MemoryError()
    cdef TensorBase t = <TensorBase>obj
    Py_DECREF(<object>obj)
    t._storage = s
    t._dtype = dt
    t._device = s.device
    t._backend = s.backend
    t._ndim = ndim
    if ndim:
        memcpy(t._sizes, sizes, ndim * sizeof(int64_t))
        memcpy(t._strides, strides, ndim * sizeof(int64_t))
    t._offset = offset
    t._keys = DEFAULT_TENSOR_KEYS | (<uint64_t>1 << s.backend.key)
    t._inference = ember_tls_inference != 0
    return t


cdef TensorBase empty_c(int ndim, const int64_t* sizes, dtype dt, device dev):
    cdef int64_t strides[MAX_DIM]
    cdef int64_t nbytes = storage_nbytes(ndim, sizes, strides, dt.itemsize)
    return new_tensor(allocate(backend_for(dev), dev, nbytes), dt, ndim, sizes, strides, 0)


cdef int64_t storage_nbytes(int ndim, const int64_t* sizes, int64_t* strides,
                            int itemsize) except -1:
    """Contiguous strides for `sizes` and the bytes they span; RuntimeError (never a
    wrapped-around small buffer) when that does not fit in 64 bits.  A zero size counts as 1
    in the strides, as PyTorch's."""
    cdef int64_t n = 1, step = 1
    cdef bint empty = False
    cdef int i
    for i in range(ndim - 1, -1, -1):
        strides[i] = step
        if sizes[i] == 0:
            empty = True
        elif mul_overflow(step, sizes[i], &step):
            break
    else:
        if empty:
            return 0
        if not mul_overflow(step, itemsize, &n):
            return n
    raise RuntimeError(f"Storage size calculation overflowed with sizes="
                       f"{[sizes[j] for j in range(ndim)]}")


cdef TensorBase make_view(TensorBase base, int ndim, const int64_t* sizes,
                          const int64_t* strides, int64_t offset):
    if base._bt is not None:       # a vmap wrapper's own geometry is sample 0's: refuse
        refuse_batched(base, False)
    cdef TensorBase t = new_tensor(base._storage, base._dtype, ndim, sizes, strides, offset)
    t._version = base.version()
    t._base_ref = base._base_ref if base._base_ref is not None else base
    t._inference = base._inference        # a view is what its base is (torch)
    return t


cdef object _tuple_new = tuple.__new__


cdef object shape_c(TensorBase t):
    """t.shape as an ember.Size, built once per tensor."""
    if t._shape is None:
        t._shape = _tuple_new(Size, [t._sizes[i] for i in range(t._ndim)])
    return t._shape


cdef void adopt(TensorBase t, TensorBase src):
    """Make the fresh object t an alias of src: same storage, metadata and version."""
    t._storage, t._dtype, t._device, t._backend = src._storage, src._dtype, src._device, \
        src._backend
    t._ndim, t._offset, t._keys = src._ndim, src._offset, src._keys
    memcpy(t._sizes, src._sizes, src._ndim * sizeof(int64_t))
    memcpy(t._strides, src._strides, src._ndim * sizeof(int64_t))
    t._version = src.version()
    t._bt = src._bt                       # an alias of a vmap wrapper is one too


cdef int64_t contiguous_strides(int ndim, const int64_t* sizes, int64_t* strides) noexcept:
    """Fill row-major strides (a zero size counts as 1 there, as PyTorch's); return numel."""
    cdef int64_t n = 1, step = 1
    cdef int i
    for i in range(ndim - 1, -1, -1):
        strides[i] = step
        n *= sizes[i]
        step *= sizes[i] if sizes[i] else 1
    return n
