# The Tensor: storage + strided metadata + dispatch keys + version counter.
from libc.stdint cimport int32_t, int64_t, uint64_t

from ember.core cimport _state
from ember.core._device cimport Backend, device
from ember.core._dispatch cimport DispatchKey, Op
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


# --- what the op modules split from this one (core/_conv_pool.pyx, ...) call: cdef functions
# of the .pxi files _tensor.pyx includes, and the inline helpers every kernel call uses

cdef inline void init_ctx(ember_ctx* ctx, TensorBase on) noexcept:
    """A fresh kernel context for an op running on `on`'s device."""
    init_ctx_on(ctx, on._device)


cdef inline void init_ctx_on(ember_ctx* ctx, device d) noexcept:
    """A fresh kernel context for a call on device `d` (an op, or an allocation)."""
    ctx.deterministic = _state.deterministic()
    ctx.device = device_index(d)
    ctx.matmul_precision = _state.matmul_precision()
    ctx.reserved = 0
    ctx.error[0] = 0


cdef inline int32_t device_index(device d) noexcept:
    return 0 if d.index is None else <int32_t>d.index


cdef inline uint64_t effective_keys(uint64_t keys) noexcept:
    return (keys | _state.tls_included()) & ~_state.tls_excluded()


cdef inline bint is_grad_enabled_c() noexcept:
    return not (_state.tls_excluded() & (<uint64_t>1 << DispatchKey.Autograd))


# _autograd_support.pxi
cdef void derive(Op op, object formula, object entry, int save)
cdef TensorBase with_grad(TensorBase t, object requires_grad)
# _capture_hooks.pxi
cdef int report_side_effect(str what) except -1
# _storage.pxi, _tensor_alloc.pxi
cdef Storage allocate(Backend b, device dev, int64_t nbytes)
cdef int64_t storage_nbytes(int ndim, const int64_t* sizes, int64_t* strides,
                            int itemsize) except -1
# _promotion.pxi
cdef str st_name(dtype d)
# _views.pxi
cdef TensorBase as_tensor_arg(object x, str op, str arg)
cdef int wrap_dim(object dim, int ndim, str op) except -100
cdef TensorBase narrow_c(TensorBase t, object dim, int64_t start, int64_t length,
                         int64_t step=*)
cdef TensorBase select_c(TensorBase t, object dim, int64_t index)
cdef TensorBase unsqueeze_c(TensorBase t, object dim)
# _elementwise.pxi
cdef TensorBase cast_to(TensorBase t, dtype dt)
cdef TensorBase operand(object t, dtype ct)
cdef object binary_op(Op op, object a, object b, object alpha, object out)
cdef object unary_op(Op op, TensorBase a, object out)
cdef void derive_binary(Op op, formula, int save)
cdef void derive_unary(Op op, formula, int save)
# _math.pxi
cdef object unary_function(Op op)
# _softmax.pxi
cdef Op op_log_softmax
cdef object softmax_forward(Op op, object input, object dim, object dtype_arg)
# _copy.pxi
cdef Op op_copy
cdef int copy_into(TensorBase dst, TensorBase src, str op) except -1
cdef int run_copy(TensorBase dst, TensorBase src) except -1
# _indexing.pxi
cdef int same_device(str op, TensorBase a, TensorBase b) except -1
# _factories.pxi
cdef object numpy()
cdef TensorBase new_empty(tuple size, object dt, object dev, str op)
cdef TensorBase new_like(object input, object dt, object dev, str op,
                         object memory_format=*)
cdef tuple parse_size(tuple size)
