# The Tensor: storage + strided metadata + dispatch keys + version counter.
from libc.stdint cimport int64_t, uint64_t

from ember.core._device cimport Backend, device
from ember.core._dispatch cimport Op
from ember.core._dtype cimport dtype

from ember_abi cimport ember_ctx, ember_view


cdef class Storage:
    cdef char* data
    cdef int64_t _nbytes
    cdef Backend backend
    cdef readonly device device
    cdef object owner                 # keeps foreign memory alive (NumPy array, DLPack)
    cdef bint owned                   # freed through the backend's allocator


cdef class VersionCounter:
    cdef public int64_t value


cdef class BatchLevel:
    # what a vmap wrapper holds (its own sizes and strides are the per-sample ones)
    cdef readonly object value        # the physical tensor, the batch dim first
    cdef readonly int level           # the vmap level that made it


cdef class TensorBase:
    cdef Storage _storage
    cdef dtype _dtype
    cdef device _device
    cdef Backend _backend
    cdef int _ndim
    cdef int64_t _sizes[16]
    cdef int64_t _strides[16]
    cdef int64_t _offset              # in elements
    cdef uint64_t _keys
    cdef VersionCounter _version      # created on first need, shared with views
    cdef object _base_ref             # the tensor this is a view of, or None
    cdef object _shape                # cached ember.Size (sizes never change in place)
    # autograd metadata (the engine, core/_autograd.pyx, owns what they mean); whether the
    # tensor requires grad is the Autograd bit of _keys
    cdef object _grad_fn              # the Node that produced this tensor, or None
    cdef int _output_nr               # which output of _grad_fn this tensor is
    cdef object _grad                 # accumulated gradient (leaves, retain_grad)
    cdef object _ag                   # AutogradMeta: hooks, accumulator, ... (or None)
    cdef bint _inference              # created under inference_mode (or a view of such)
    # function transforms (core/_autograd.pyx's forward AD, ember.func's vmap): the
    # ForwardAD key is set while _fw holds tangents, the Batched key on vmap's wrappers
    cdef object _fw                   # {level: tangent} or None
    cdef BatchLevel _bt               # a vmap wrapper's physical tensor, or None
    cdef dict __dict__
    cdef object __weakref__

    cdef int64_t numel_c(self) noexcept
    cdef bint contiguous_c(self) noexcept
    cdef void view_c(self, ember_view* v) noexcept
    cdef VersionCounter version(self)
    cdef int bump(self) except -1


cdef bint inference_mode_c() noexcept
cdef void set_inference_mode_c(bint mode) noexcept
cdef int refuse_inference_write(TensorBase t) except -1


cdef TensorBase new_tensor(Storage s, dtype dt, int ndim, const int64_t* sizes,
                           const int64_t* strides, int64_t offset)
cdef TensorBase empty_c(int ndim, const int64_t* sizes, dtype dt, device dev)
cdef TensorBase make_view(TensorBase base, int ndim, const int64_t* sizes,
                          const int64_t* strides, int64_t offset)
cdef int raise_kernel_error(int rc, ember_ctx* ctx) except -1
cdef TensorBase detach_c(TensorBase t, bint share_version)
cdef object sum_to(TensorBase g, object shape)
