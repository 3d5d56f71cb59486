# The fused optimizer step: a backend's optional `adam` entry (abi.h, ember_adam_params)
# updates every parameter of a group in one call instead of ~14 elementwise ops per
# parameter.  optim/adam.py asks here first and runs its per-tensor ops when this says no.

def _fused_adam(list params, list grads, list exp_avgs, list exp_avg_sqs, list max_sqs,
                double lr, double beta1, double beta2, double eps, double weight_decay,
                double step_size, double bias_correction2_sqrt, bint decoupled, bint amsgrad,
                bint maximize):
    """One Adam/AdamW step over the parameters through the backend's `adam` entry: True
    when it ran, False when the backend (or these tensors' layout) does not take it."""
    cdef Py_ssize_t n = len(params), i, k
    if n == 0:
        return True
    cdef TensorBase p0 = <TensorBase?>params[0]
    if p0._backend.is_meta or not p0._dtype.is_floating_point or p0._dtype.is_complex:
        return False
    cdef ember_kernel_table* tab = p0._backend.kernels()
    if tab.adam is NULL:
        return False
    groups = []
    for i in range(n):
        group = [params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                 max_sqs[i] if amsgrad else None]
        for t in group:
            if t is None:
                continue
            if not isinstance(t, TensorBase) or (<TensorBase>t)._device != p0._device or \
                    (<TensorBase>t)._dtype is not p0._dtype or not (<TensorBase>t).contiguous_c() \
                    or (<TensorBase>t).numel_c() != (<TensorBase>params[i]).numel_c():
                return False
        groups.append(group)
    cdef ember_view* views = <ember_view*>PyMem_Malloc(5 * n * sizeof(ember_view))
    cdef const ember_view** ptrs = <const ember_view**>PyMem_Malloc(5 * n * sizeof(void*))
    if views is NULL or ptrs is NULL:
        PyMem_Free(views)
        PyMem_Free(ptrs)
        raise MemoryError()
    cdef ember_adam_params p
    p.lr, p.beta1, p.beta2, p.eps, p.weight_decay = lr, beta1, beta2, eps, weight_decay
    p.step_size, p.bias_correction2_sqrt = step_size, bias_correction2_sqrt
    p.decoupled, p.amsgrad, p.maximize, p.reserved = decoupled, amsgrad, maximize, 0
    cdef ember_ctx ctx
    cdef int rc
    try:
        for i in range(n):
            for k in range(5):
                t = groups[i][k]
                if t is None:
                    ptrs[5 * i + k] = NULL
                else:
                    (<TensorBase>t).view_c(&views[5 * i + k])
                    ptrs[5 * i + k] = &views[5 * i + k]
        init_ctx(&ctx, p0)
        with nogil:
            rc = tab.adam(&ctx, &p, ptrs, n)
    finally:
        PyMem_Free(views)
        PyMem_Free(ptrs)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return False
    if rc:
        raise_kernel_error(rc, &ctx)
    for group in groups:           # in-place writes: versions move as the ops' would
        for k in (0, 2, 3, 4):
            if group[k] is not None:
                (<TensorBase>group[k]).bump()
    return True
