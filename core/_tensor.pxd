# The Tensor: storage + strided metadata + dispatch keys + version counter.
from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t)

from ember.core cimport _state
from ember.core._device cimport Backend, device
from ember.core._dispatch cimport DispatchKey, Op
from ember.core._dtype cimport EMBER_BOOL, dtype

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
    cdef bint _no_grad_view           # a view of a tensor requiring grad made under no_grad
    cdef int _level                   # the ember.func transform it was made in (0: none)
    # function transforms (core/_autograd.pyx's forward AD, ember.func's vmap): the
    # ForwardAD key is set while _fw holds tangents, the Batched key on vmap's wrappers
    cdef object _fw                   # {level: tangent} or None
    cdef BatchLevel _bt               # a vmap wrapper's physical tensor, or None
    cdef dict __dict__
    cdef object __weakref__

    cdef int64_t numel_c(self) noexcept
    cdef bint contiguous_c(self) noexcept
    cdef int view_c(self, ember_view* v) except -1     # refuses vmap wrappers
    cdef VersionCounter version(self)
    cdef int bump(self) except -1


cdef bint inference_mode_c() noexcept
cdef void set_inference_mode_c(bint mode) noexcept
cdef int refuse_inference_write(TensorBase t) except -1
cdef int func_level_c() noexcept
cdef int set_func_level_c(int level) noexcept
cdef int refuse_write(TensorBase t) except -1
cdef void* out_grant_c() noexcept
cdef int grant_out_write(object out, object a, object b) noexcept
cdef int end_out_grant(TensorBase t) noexcept


cdef inline int check_write(TensorBase t) except -1:
    """Refuse an in-place write into t, before it happens, where PyTorch does: an
    inference tensor outside inference_mode, a tensor captured by a function transform
    (unless an out= op was granted the write: grant_out_write)."""
    if t._inference or (t._level < func_level_c() and <void*>t != out_grant_c()):
        refuse_write(t)
    return 0


cdef TensorBase new_tensor(Storage s, dtype dt, int ndim, const int64_t* sizes,
                           const int64_t* strides, int64_t offset)
cdef TensorBase empty_c(int ndim, const int64_t* sizes, dtype dt, device dev)
cdef TensorBase make_view(TensorBase base, int ndim, const int64_t* sizes,
                          const int64_t* strides, int64_t offset)
cdef int raise_kernel_error(int rc, ember_ctx* ctx) except -1
cdef int raise_sync_error(int rc, ember_ctx* ctx) except -1
cdef TensorBase detach_c(TensorBase t, bint share_version)
cdef object sum_to(TensorBase g, object shape)
cdef object binary_dunder(Op op, TensorBase self, object other, bint reflected)


# --- what the op modules split from this one (core/_views.pyx, core/_math.pyx, ...) call:
# cdef functions of the .pxi files _tensor.pyx includes, and inline helpers (the common
# case of a call inline, the rest out of line)

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


cdef inline object routed(Op op, TensorBase t):
    """The kernel registered for this call's dispatch key, or None: run the core's own."""
    cdef int k = op.resolve(effective_keys(t._keys))
    return op._table[k] if (op._kernel_mask >> k) & 1 else None


cdef inline object routed_n(Op op, tuple tensors):
    """routed() for a call on several inputs: the keys of every tensor in `tensors` (other
    items skipped), so a vmap-batched index or source beside a plain self reaches the
    batching rule."""
    cdef uint64_t keys = 0
    for t in tensors:
        if isinstance(t, TensorBase):
            keys |= (<TensorBase>t)._keys
    cdef int k = op.resolve(effective_keys(keys))
    return op._table[k] if (op._kernel_mask >> k) & 1 else None


cdef inline object routed2(Op op, TensorBase t, object other):
    """routed() for an op with a second tensor input (a source, src or value)."""
    cdef uint64_t keys = t._keys | ((<TensorBase>other)._keys if isinstance(other, TensorBase)
                                    else 0)
    cdef int k = op.resolve(effective_keys(keys))
    return op._table[k] if (op._kernel_mask >> k) & 1 else None


# _autograd_support.pxi
cdef void derive(Op op, object formula, object entry, int save)
cdef TensorBase with_grad(TensorBase t, object requires_grad)
# _capture_hooks.pxi
cdef int report_side_effect(str what) except -1
cdef int report_data_read(TensorBase t, str what) except -1
cdef object captured_factory(str kind, tuple args)
cdef bint capture_live() noexcept
cdef int report_allocation() except -1
# _storage.pxi, _tensor_alloc.pxi
cdef Storage allocate(Backend b, device dev, int64_t nbytes)
cdef Storage foreign_storage(Backend b, device dev, char* data, int64_t nbytes, object owner)
cdef int64_t contiguous_strides(int ndim, const int64_t* sizes, int64_t* strides) noexcept
cdef int64_t storage_nbytes(int ndim, const int64_t* sizes, int64_t* strides,
                            int itemsize) except -1
# _promotion.pxi: a Python scalar as a kernel operand
ctypedef union scalar_buf:
    uint8_t u8
    int8_t i8
    int16_t i16
    int32_t i32
    int64_t i64
    uint16_t u16
    uint32_t u32
    uint64_t u64
    float f32
    double f64
    float c64[2]            # complex: (real, imag)
    double c128[2]


cdef inline bint is_scalar(object x):
    return isinstance(x, (int, float, bool, complex)) or other_scalar(x)


cdef bint other_scalar(object x)


cdef str st_name(dtype d)
cdef bint can_cast(dtype src, dtype dst) noexcept
cdef dtype result_type2(object a, object b, str op)
cdef dtype scalar_dtype(object x, str op)
cdef dtype default_complex_dtype()
cdef object read_scalar(const char* p, int code)
cdef void scalar_view(ember_view* v, int ndim, const int64_t* sizes, scalar_buf* buf,
                      int code) noexcept
cdef int write_scalar(object value, dtype dt, scalar_buf* buf, str op) except -1
cdef int check_scalar_range(object value, dtype dt, str op) except -1
# _limited.pxi
cdef int refuse_limited_named(str name, dtype dt) except -1
cdef int refuse_limited(Op op, dtype dt) except -1
# _transforms.pxi
cdef object zeros_for(object g, object shape)
cdef int refuse_batched(TensorBase t, bint item) except -1
# _arguments.pxi
cdef TensorBase not_a_tensor(object x, str op, str arg)


cdef inline TensorBase as_tensor_arg(object x, str op, str arg):
    """x as a tensor argument of `op`; TypeError with PyTorch's message otherwise."""
    if isinstance(x, TensorBase):
        return <TensorBase>x
    return not_a_tensor(x, op, arg)


cdef int same_device(str op, TensorBase a, TensorBase b) except -1
cdef int wrap_dim(object dim, int ndim, str op) except -100
cdef int parse_shape(tuple args, int64_t* out, str op) except -1
# _elementwise.pxi: the ops the Tensor's operators and methods call, which the op modules
# cimport rather than look up again
cdef Op op_add, op_sub, op_mul, op_div, op_neg, op_exp, op_relu, op_abs, op_pow
cdef Op op_floor_divide, op_remainder, op_trunc, op_eq, op_ne, op_lt, op_le, op_gt, op_ge
cdef Op op_logical_and, op_logical_xor, op_sum, op_prod, op_amax, op_amin, op_mean
cdef TensorBase cast_copy(TensorBase t, dtype dt)


cdef inline TensorBase cast_to(TensorBase t, dtype dt):
    """t itself if it already has dtype dt, else a contiguous converted copy."""
    return t if t._dtype is dt else cast_copy(t, dt)


cdef TensorBase operand(object t, dtype ct)
cdef object binary_op(Op op, object a, object b, object alpha, object out)
cdef object unary_op(Op op, TensorBase a, object out)
cdef void derive_binary(Op op, formula, int save)
cdef void derive_unary(Op op, formula, int save)
cpdef object conj_of(object x)
cdef int check_writable(TensorBase o, object a, object b) except -1
cdef object unary_entry(Op op)
cdef object binary_entry(Op op)
cdef Op table_op(object d, int family, object rule)
cdef int broadcast_into(int nd, int64_t* out, TensorBase t) except -1
cdef int expanded_view(TensorBase t, int nd, const int64_t* sizes, ember_view* v) except -1
cdef object operator_op(Op op, object a, object b)
cdef TensorBase checked_out(object out, int nd, const int64_t* sizes, dtype dt,
                            device dev, str op)


cdef inline TensorBase prepare_out(object out, int nd, const int64_t* sizes, dtype dt,
                                   device dev, str op):
    """A fresh result, or `out` checked (device, castable dtype) and resized if needed."""
    if out is None:
        return empty_c(nd, sizes, dt, dev)
    return checked_out(out, nd, sizes, dt, dev, op)


# _copy.pxi
cdef Op op_copy
cdef int copy_into(TensorBase dst, TensorBase src, str op) except -1
cdef int run_copy(TensorBase dst, TensorBase src) except -1
cdef TensorBase clone_c(TensorBase t)
cdef TensorBase contiguous_copy(TensorBase t)
cdef int fill_c(TensorBase dst, object value) except -1
cdef int kernel_fill(TensorBase dst, object value) except -1
cdef object to_c(TensorBase t, object dev, object dt, bint copy)
# _tensor_alloc.pxi: what the factories allocate through
cdef object numpy()
cdef TensorBase new_empty(tuple size, object dt, object dev, str op)
cdef TensorBase restrided(TensorBase t, object strides)
cdef object own_device(TensorBase a)      # a fake tensor's device, not its meta data's
cdef TensorBase new_like(object input, object dt, object dev, str op,
                         object memory_format=*)
cdef tuple parse_size(tuple size)
cdef tuple factory_size(tuple size, dict kwargs, str op)


# --- hooks: the op modules' functions this module calls at the C level.  Each op module sets
# its own when it loads; this module imports them at its end, so none is NULL once
# `ember.core._tensor` has loaded (nothing in its own module-level code may call them).
# core/_reduce.pyx: sum, prod, amax, amin, mean
cdef object (*reduce_op)(Op op, TensorBase a, object dim, bint keepdim, object dtype_arg,
                         object out)
# core/_views.pyx: the view ops the Tensor's methods and autograd's formulas call
cdef TensorBase (*view_c)(TensorBase t, tuple args)
cdef TensorBase (*view_dtype_c)(TensorBase t, dtype dt)
cdef TensorBase (*reshape_c)(TensorBase t, tuple args)
cdef TensorBase (*expand_c)(TensorBase t, tuple args)
cdef TensorBase (*permute_c)(TensorBase t, object dims)
cdef TensorBase (*transpose_c)(TensorBase t, object dim0, object dim1)
cdef TensorBase (*squeeze_c)(TensorBase t, object dim)
cdef TensorBase (*unsqueeze_c)(TensorBase t, object dim)
cdef TensorBase (*narrow_c)(TensorBase t, object dim, int64_t start, int64_t length,
                            int64_t step)
cdef TensorBase (*select_c)(TensorBase t, object dim, int64_t index)
cdef TensorBase (*diagonal_c)(TensorBase t, int64_t offset, object dim1, object dim2)
cdef TensorBase (*as_strided_c)(TensorBase t, object size, object stride,
                                object storage_offset)
cdef object (*getitem)(TensorBase t, object index)
cdef object (*setitem)(TensorBase t, object index, object value)
# core/_fused.pyx: self += alpha * other in one pass (the backend's `sgd` entry), or False
cdef bint (*axpy_c)(TensorBase self, object other, double alpha) except -1
# core/_factories.pyx: a tensor's values on the host, and complex dtypes' paths
cdef TensorBase (*one_element)(TensorBase t, str what)
cdef object (*item_c)(TensorBase t)
cdef object (*host_array)(TensorBase t)
cdef object (*numpy_view)(TensorBase t, bint force)
cdef object (*complex_ops)()
cdef int (*complex_copy)(TensorBase dst, TensorBase src) except -1
cdef int (*complex_fill)(TensorBase dst, object value) except -1
