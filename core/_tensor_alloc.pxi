# Making tensors: allocation with contiguous strides, views over a base, aliasing, and
# the inference-mode flag (included by _tensor.pyx before the TensorBase class).

cdef extern from "Python.h":
    ctypedef struct PyTypeObject:
        PyObject* (*tp_new)(PyTypeObject*, PyObject*, PyObject*)
        const char* tp_name
    void PyType_Modified(PyTypeObject*)

cdef tuple _no_args = ()

# inference_mode and the running function transform's level are thread-local; they live
# here because every new tensor reads them
cdef extern from *:
    """
    static __thread int ember_tls_inference = 0;
    static __thread int ember_tls_func_level = 0;
    static __thread void *ember_tls_out_grant = NULL;
    """
    int ember_tls_inference
    int ember_tls_func_level
    void *ember_tls_out_grant

cdef int _next_func_level = 1     # process-wide, never reused: a later transform's is larger


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


cdef int func_level_c() noexcept:
    return ember_tls_func_level


# PyTorch's rule for grad, vjp, jvp and the transforms built on them: the function they
# run may write in place only into tensors made while it runs (its inputs count, and
# views of them).  A tensor made in a transform carries that transform's level (views
# their base's); levels only grow, so "made before the running transform began" is a
# level below the running one.
cdef str _CAPTURED_WRITE = (
    "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call "
    "in-place operation ({}) that would mutate a captured Tensor. This is not supported; "
    "please rewrite the function being transformed to explicitly accept the mutated "
    "Tensor(s) as inputs.")


cdef int refuse_write(TensorBase t) except -1:
    """check_write's slow path: raise for whichever rule t breaks."""
    refuse_inference_write(t)
    if t._level < ember_tls_func_level and <void*>t != ember_tls_out_grant:
        raise RuntimeError(_CAPTURED_WRITE.format(
            f"a write into a tensor of shape {list(shape_c(t))} made outside the function"))
    return 0


# The rule covers in-place ops only, as PyTorch's transforms check in-place schemas alone: an
# op writing into its out= tensor (one that is not also its operand) may write a captured
# one.  That op grants the write before its checks; the tensor's bump after the write ends
# the grant (so does any change of the running level: set_func_level_c).
cdef void* out_grant_c() noexcept:
    return ember_tls_out_grant


cdef int grant_out_write(object out, object a, object b) noexcept:
    """Let the coming out= write into ``out`` (not the operand a or b) pass the captured-
    tensor rule."""
    global ember_tls_out_grant
    if isinstance(out, TensorBase) and out is not a and out is not b and \
            (<TensorBase>out)._level < ember_tls_func_level:
        ember_tls_out_grant = <void*>out
    return 0


cdef int end_out_grant(TensorBase t) noexcept:
    global ember_tls_out_grant
    if <void*>t == ember_tls_out_grant:
        ember_tls_out_grant = NULL
    return 0


def _enter_func_level():
    """Start a function transform's level on this thread: (its level, the previous one)."""
    global _next_func_level
    cdef int previous = ember_tls_func_level, level = _next_func_level
    _next_func_level += 1
    set_func_level_c(level)
    return level, previous


def _exit_func_level(int previous):
    set_func_level_c(previous)


cdef int set_func_level_c(int level) noexcept:
    """Make ``level`` this thread's running transform level (ending any out= grant); the
    previous one is returned."""
    global ember_tls_func_level, ember_tls_out_grant
    cdef int previous = ember_tls_func_level
    ember_tls_func_level = level
    ember_tls_out_grant = NULL
    return previous


def _tensor_level(TensorBase t):
    return t._level


def _set_tensor_level(TensorBase t, int level):
    """t counts as made in transform ``level`` (a transform's inputs: it may write them)."""
    t._level = level


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
    t._level = ember_tls_func_level
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
    t._level = base._level
    # PyTorch's creation meta: an in-place write into it with grad on is refused (no_grad
    # hid the view from autograd, so the write could not be recorded on the base)
    t._no_grad_view = base._no_grad_view or (
        ((<TensorBase>t._base_ref)._keys & (<uint64_t>1 << DispatchKey.Autograd)) != 0
        and not is_grad_enabled_c())
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
    t._level = src._level


cdef int64_t contiguous_strides(int ndim, const int64_t* sizes, int64_t* strides) noexcept:
    """Fill row-major strides (a zero size counts as 1 there, as PyTorch's); return numel."""
    cdef int64_t n = 1, step = 1
    cdef int i
    for i in range(ndim - 1, -1, -1):
        strides[i] = step
        n *= sizes[i]
        step *= sizes[i] if sizes[i] else 1
    return n


# --- what the factories allocate through (they are core/_factories.pyx)

cdef object _np = None


cdef object numpy():
    global _np
    if _np is None:
        import numpy as np
        _np = np
    return _np


# Sizes that are not plain ints (ember.SymInt) go to this hook, which makes a fake tensor
# (ember._subclasses.fake_tensor sets it when symbolic shapes are first used); None until
# then, so eager factories pay nothing.
cdef object _symbolic_factory = None


def _set_symbolic_factory(fn):
    global _symbolic_factory
    _symbolic_factory = fn


cdef bint plain_sizes(tuple size):
    cdef object seq = size
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        seq = size[0]
    for s in seq:
        if type(s) is not int:
            return False
    return True


cdef TensorBase new_empty(tuple size, object dt, object dev, str op):
    if capturing():
        r = _capture_hooks.factory("empty", size, dt, dev, op)
        if r is not None:
            return r
    if _symbolic_factory is not None and not plain_sizes(size):
        r = _symbolic_factory(size, dt, dev, op)
        if r is not None:
            return r
    cdef int64_t sizes[MAX_DIM]
    cdef int nd = parse_shape(size, sizes, op)
    cdef int i
    for i in range(nd):
        if sizes[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {sizes[i]}: "
                               f"{[sizes[j] for j in range(nd)]}")
    cdef dtype d = <dtype>_state.default_dtype() if dt is None else as_dtype(dt, op, "dtype")
    return empty_c(nd, sizes, d, as_device(dev))


cdef TensorBase batched_like(TensorBase like, tuple size, object dt, object dev, str op):
    """An uninitialised tensor of ``size`` with every vmap batch level of ``like`` (a
    wrapper): what new_empty / *_like give inside vmap, as functorch's rules do, so that
    per-sample values can be written into it."""
    if like._bt is None:
        return new_empty(size, like._dtype if dt is None else dt,
                         like._device if dev is None else dev, op)
    cdef TensorBase v = <TensorBase>like._bt.value
    return _make_batched(batched_like(v, (v._sizes[0],) + parse_size(size), dt, dev, op),
                         like._bt.level)


cdef TensorBase new_like(object input, object dt, object dev, str op,
                         object memory_format=None):
    """An uninitialised tensor shaped like ``input`` (its dtype/device unless given), laid out
    as ``memory_format`` says (preserve_format by default, as PyTorch); batched like a vmap
    wrapper ``input``."""
    cdef TensorBase a = as_tensor_arg(input, op, "input")
    if a._bt is not None:
        return batched_like(a, (a.shape,), dt, dev, op)
    cdef TensorBase t = new_empty((a.shape,), a._dtype if dt is None else dt,
                                  own_device(a) if dev is None else dev, op)
    if memory_format is None and a.contiguous_c() and a.numel_c():
        return t
    from ember.core import memory_format as _mf
    return restrided(t, _mf.strides_for(a, memory_format, op))


cdef uint64_t PYTHON_KEY_BIT = <uint64_t>1 << DispatchKey.Python


cdef object own_device(TensorBase a):
    """The device a new tensor "like" ``a`` goes to: a fake tensor (the Python key) stands
    for a device other than its meta data's (a dynamic capture's zeros_like(x) had made a
    meta tensor)."""
    return a.device if a._keys & PYTHON_KEY_BIT else a._device


cdef TensorBase restrided(TensorBase t, object strides):
    """The fresh contiguous t relaid with ``strides``: dense strides that permute its
    contiguous layout (a memory format's), so the storage it has fits them."""
    cdef int i
    if strides is not None:
        for i in range(t._ndim):
            t._strides[i] = strides[i]
    return t


cdef tuple factory_size(tuple size, dict kwargs, str op):
    """A factory's ``*size`` with PyTorch's keyword form (``empty(size=(2, 3))``, which was
    ignored: a 0-d result); ``layout`` and ``pin_memory`` (strided, host memory) are taken
    and ignored, other keywords refused.  No size at all is a 0-d tensor, where PyTorch
    raises: ember's own code calls ``empty(*shape)`` with an empty shape."""
    given = kwargs.pop("size", None) if kwargs else None
    if kwargs:
        unknown = sorted(set(kwargs) - {"layout", "pin_memory"})
        if unknown:
            raise TypeError(f"{op}() got an unexpected keyword argument '{unknown[0]}'")
    if given is not None:
        if size:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        return (given,)
    return size


cdef tuple parse_size(tuple size):
    """A factory's sizes, given as varargs or as one sequence."""
    if len(size) == 1 and not isinstance(size[0], int):
        return tuple(size[0])
    return size
