# The fused optimizer steps: a backend's optional `adam` and `sgd` entries (abi.h,
# ember_adam_params / ember_sgd_params) update every parameter of a group in one call
# instead of several elementwise ops per parameter.  optim/adam.py and optim/sgd.py ask
# here first and run their per-tensor ops when this says no; the in-place add_/sub_ with
# alpha runs through `sgd` too (one pass instead of a multiply and an add).

@cython.auto_pickle(False)
cdef class _Groups:
    """The views of groups of tensors (``width`` per group, None for an absent one) as a
    fused entry takes them: an array of view pointers, NULL for the absent ones."""
    cdef ember_view* views
    cdef const ember_view** ptrs
    cdef list groups
    cdef Py_ssize_t n

    def __dealloc__(self):
        PyMem_Free(self.views)
        PyMem_Free(self.ptrs)


cdef _Groups fused_groups(list groups, int width, TensorBase p0):
    """The groups' views, or None when a tensor is not on p0's device, not of its dtype,
    not contiguous, or not of its group's first tensor's size (the per-tensor ops run)."""
    cdef Py_ssize_t n = len(groups), i
    cdef int k
    for group in groups:
        for t in group:
            if t is None:
                continue
            if not isinstance(t, TensorBase) or (<TensorBase>t)._device != p0._device or \
                    (<TensorBase>t)._dtype is not p0._dtype or \
                    not (<TensorBase>t).contiguous_c() or \
                    (<TensorBase>t).numel_c() != (<TensorBase>group[0]).numel_c():
                return None
    cdef _Groups g = _Groups.__new__(_Groups)
    g.groups, g.n = groups, n
    g.views = <ember_view*>PyMem_Malloc(max(width * n, 1) * sizeof(ember_view))
    g.ptrs = <const ember_view**>PyMem_Malloc(max(width * n, 1) * sizeof(void*))
    if g.views is NULL or g.ptrs is NULL:
        raise MemoryError()
    for i in range(n):
        for k in range(width):
            t = groups[i][k]
            if t is None:
                g.ptrs[width * i + k] = NULL
            else:
                (<TensorBase>t).view_c(&g.views[width * i + k])
                g.ptrs[width * i + k] = &g.views[width * i + k]
    return g


cdef bint fused_done(int rc, ember_ctx* ctx, _Groups g, tuple written) except -1:
    """After a fused entry ran: False when it answered NOT_IMPLEMENTED (the ops run), an
    error raised, else True with the written tensors' versions moved as the ops' would."""
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return False
    if rc:
        raise_kernel_error(rc, ctx)
    for group in g.groups:
        for k in written:
            if group[k] is not None:
                (<TensorBase>group[k]).bump()
    return True


cdef bint fusable(TensorBase p0) noexcept:
    return not p0._backend.is_meta and p0._dtype.is_floating_point and \
        not p0._dtype.is_complex


def _fused_adam(list params, list grads, list exp_avgs, list exp_avg_sqs, list max_sqs,
                double lr, double beta1, double beta2, double eps, double weight_decay,
                double step_size, double bias_correction2_sqrt, bint decoupled, bint amsgrad,
                bint maximize):
    """One Adam/AdamW step over the parameters through the backend's `adam` entry: True
    when it ran, False when the backend (or these tensors' layout) does not take it."""
    if not params:
        return True
    cdef TensorBase p0 = <TensorBase?>params[0]
    if not fusable(p0):
        return False
    cdef ember_kernel_table* tab = p0._backend.kernels()
    if tab.adam is NULL:
        return False
    cdef _Groups g = fused_groups(
        [[params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], max_sqs[i] if amsgrad else None]
         for i in range(len(params))], 5, p0)
    if g is None:
        return False
    cdef ember_adam_params p
    p.lr, p.beta1, p.beta2, p.eps, p.weight_decay = lr, beta1, beta2, eps, weight_decay
    p.step_size, p.bias_correction2_sqrt = step_size, bias_correction2_sqrt
    p.decoupled, p.amsgrad, p.maximize, p.reserved = decoupled, amsgrad, maximize, 0
    cdef ember_ctx ctx
    cdef int rc
    init_ctx(&ctx, p0)
    with nogil:
        rc = tab.adam(&ctx, &p, g.ptrs, g.n)
    return fused_done(rc, &ctx, g, (0, 2, 3, 4))


cdef bint run_sgd(list groups, TensorBase p0, double lr, double momentum, double dampening,
                  double weight_decay, bint nesterov, bint maximize, bint first) except -1:
    cdef ember_kernel_table* tab = p0._backend.kernels()
    if tab.sgd is NULL:
        return False
    cdef _Groups g = fused_groups(groups, 3, p0)
    if g is None:
        return False
    cdef ember_sgd_params p
    p.lr, p.momentum, p.dampening, p.weight_decay = lr, momentum, dampening, weight_decay
    p.nesterov, p.maximize, p.first, p.reserved = nesterov, maximize, first, 0
    cdef ember_ctx ctx
    cdef int rc
    init_ctx(&ctx, p0)
    with nogil:
        rc = tab.sgd(&ctx, &p, g.ptrs, g.n)
    return fused_done(rc, &ctx, g, (0, 2))


def _fused_sgd(list params, list grads, list bufs, double lr, double momentum,
               double dampening, double weight_decay, bint nesterov, bint maximize,
               bint first):
    """One SGD step over the parameters through the backend's `sgd` entry (``bufs``: the
    momentum buffers, new ones when ``first``; ignored without momentum): True when it
    ran, False when the backend (or these tensors' layout) does not take it."""
    if not params:
        return True
    cdef TensorBase p0 = <TensorBase?>params[0]
    if not fusable(p0):
        return False
    return run_sgd([[params[i], grads[i], bufs[i] if momentum != 0 else None]
                    for i in range(len(params))], p0, lr, momentum, dampening, weight_decay,
                   nesterov, maximize, first)


cdef bint axpy_inplace(TensorBase self, object other, double alpha) except -1:
    """self += alpha * other in one pass through the backend's `sgd` entry (lr = -alpha),
    for a plain same-shaped floating operand of self's dtype and device, both contiguous;
    False when it does not apply (the multiply and the add run)."""
    if not isinstance(other, TensorBase) or not fusable(self):
        return False
    cdef TensorBase o = <TensorBase>other
    if o._dtype is not self._dtype or o._ndim != self._ndim or \
            memcmp(o._sizes, self._sizes, self._ndim * sizeof(int64_t)) != 0:
        return False
    return run_sgd([[self, o, None]], self, -alpha, 0.0, 0.0, 0.0, False, False, False)
