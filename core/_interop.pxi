# Leaving and entering ember: Python numbers, lists, NumPy (zero-copy on the CPU), DLPack,
# pickling.

cdef TensorBase one_element(TensorBase t, str what):
    if t.numel_c() != 1:
        raise RuntimeError(f"a Tensor with {t.numel_c()} elements cannot be converted to Scalar")
    return t


cdef object item_c(TensorBase t):
    """The first element as a Python number (copied through host memory)."""
    if t._bt is not None:
        refuse_batched(t, True)
    report_data_read(t, "item")
    if t._backend.is_meta:
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    if t.numel_c() == 0:
        raise RuntimeError("a Tensor with 0 elements cannot be converted to Scalar")
    cdef scalar_buf buf
    cdef ember_ctx ctx
    init_ctx(&ctx, t)
    cdef int rc = t._backend.kernels().to_host(
        &ctx, &buf, t._storage.data + t._offset * t._dtype.itemsize, t._dtype.itemsize)
    if rc:
        raise_sync_error(rc, &ctx)
    return read_scalar(<char*>&buf, t._dtype.code)


cdef object host_array(TensorBase t):
    """A NumPy copy of t's values (bfloat16 comes out as float32), on any device."""
    if t._bt is not None:
        refuse_batched(t, False)
    report_data_read(t, "host copy")
    if t._backend.is_meta:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    np = numpy()
    cdef TensorBase s = t
    if s._dtype.np_dtype is None:
        s = cast_to(s, _dtypes.float32)
    if not s.contiguous_c():
        s = contiguous_copy(s)
    out = np.empty(tuple(s.shape), dtype=s._dtype.np_dtype)
    cdef int64_t nbytes = out.nbytes
    cdef ember_ctx ctx
    cdef int rc
    if nbytes:
        init_ctx(&ctx, s)
        rc = s._backend.kernels().to_host(
            &ctx, <void*><size_t>out.ctypes.data,
            s._storage.data + s._offset * s._dtype.itemsize, nbytes)
        if rc:
            raise_sync_error(rc, &ctx)
    return out


cdef class _ArrayInterface:
    """Hands NumPy a view of a CPU tensor's memory; keeps the tensor alive."""
    cdef readonly dict __array_interface__
    cdef object tensor


cdef object numpy_view(TensorBase t, bint force):
    if t._bt is not None:
        refuse_batched(t, False)
    report_data_read(t, "numpy")
    if force:
        return host_array(t)
    if t._keys & AUTOGRAD_BIT:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if t._device.type != "cpu":
        raise TypeError(f"can't convert {t._device} device type tensor to numpy. Use "
                        f"Tensor.cpu() to copy the tensor to host memory first.")
    if t._dtype.np_dtype is None:
        raise TypeError(f"Got unsupported ScalarType {st_name(t._dtype)}")
    np = numpy()
    cdef _ArrayInterface holder = _ArrayInterface.__new__(_ArrayInterface)
    cdef int itemsize = t._dtype.itemsize
    holder.tensor = t
    holder.__array_interface__ = {
        "data": (<size_t>(t._storage.data + t._offset * itemsize), False),
        "shape": tuple(t.shape),
        "strides": tuple([t._strides[i] * itemsize for i in range(t._ndim)]),
        "typestr": t._dtype.np_dtype.str,
        "version": 3,
    }
    return np.asarray(holder)


def from_numpy(ndarray):
    """A CPU tensor sharing memory with the NumPy array ``ndarray``."""
    return from_numpy_c(ndarray, True)


cdef object from_numpy_c(object ndarray, bint warn_readonly):
    np = numpy()
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    from ember.core._dtype import dtype_from_numpy
    cdef dtype d = dtype_from_numpy(ndarray.dtype)
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    if ndarray.ndim > MAX_DIM:
        raise RuntimeError(f"ember supports at most {MAX_DIM} dimensions, got {ndarray.ndim}")
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int i, nd = ndarray.ndim
    cdef int64_t span = 1
    for i in range(nd):
        sizes[i] = ndarray.shape[i]
        st = ndarray.strides[i]
        if st < 0:
            raise ValueError("At least one stride in the given numpy array is negative, and "
                             "tensors with negative strides are not currently supported. (You "
                             "can probably work around this by making a copy of your array  "
                             "with array.copy().) ")
        if st % d.itemsize:
            raise ValueError("given numpy array strides not a multiple of the element byte "
                             "size. Copy the numpy array to reallocate the memory.")
        strides[i] = st // d.itemsize
        span += (sizes[i] - 1) * strides[i]
    if ndarray.size == 0:
        span = 0
    if warn_readonly and not ndarray.flags.writeable:
        import warnings
        warnings.warn("The given NumPy array is not writable, and ember does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior.", UserWarning, stacklevel=2)
    cdef device cpu = cpu_device()
    cdef Storage s = foreign_storage(backend_for(cpu), cpu,
                                     <char*><size_t>ndarray.__array_interface__["data"][0],
                                     span * d.itemsize, ndarray)
    return new_tensor(s, d, nd, sizes, strides, 0)


class _Capsule:
    """Wraps a bare DLPack capsule so NumPy's from_dlpack can take it."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing memory with a DLPack-exporting object (or a DLPack capsule)."""
    np = numpy()
    if isinstance(ext_tensor, TensorBase):
        t = <TensorBase>ext_tensor
        return make_view(t, t._ndim, t._sizes, t._strides, t._offset)
    src = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    if hasattr(src, "__dlpack_device__") and src.__dlpack_device__()[0] != 1:
        raise BufferError("from_dlpack: only CPU (kDLCPU) memory can be imported yet")
    # NumPy marks DLPack imports read-only; the memory is the exporter's to share
    return from_numpy_c(np.from_dlpack(src), False)


def _rebuild_tensor(array, str dtype_name, str device_str):
    """Unpickling: values as a NumPy array, plus the dtype and device."""
    return from_host_array(array, _dtypes._dtype_by_name[dtype_name], as_device(device_str))


def _to_host(TensorBase t):
    """t's values as a new NumPy array (bfloat16 as float32): for the host-side ops."""
    return host_array(t)


def _from_host(arr, dtype dt, device dev):
    """A tensor on `dev` with dtype `dt` holding a copy of the NumPy array `arr`."""
    return from_host_array(arr, dt, dev)
