# Recurrent layers through a backend's optional `rnn` entry (ABI 6.2, abi.h EMBER_RNN_*): one
# call runs a whole LSTM layer in one direction, the time loop inside the kernel.  The
# module (nn/modules/rnn.py) asks here first and runs its per-step ops when this says no:
# a NULL entry, a table of an older minor version, or a kernel answering "not implemented"
# for the dtype.

cdef bint plain_operand(object t) noexcept:
    """A tensor a kernel may read as it is: not a vmap wrapper (whose memory holds every
    sample) and carrying no forward-AD tangent (the kernel would drop it)."""
    return (isinstance(t, TensorBase) and (<TensorBase>t)._bt is None
            and not ((<TensorBase>t)._keys & (<uint64_t>1 << DispatchKey.ForwardAD)))


def _plain_operands(*tensors):
    """Whether every one of ``tensors`` is a plain tensor (see plain_operand): what an op may
    update in place without asking how a vmap or forward-AD wrapper takes the write."""
    return all(plain_operand(t) for t in tensors)


def _has_fused_rnn(t, *others):
    """Whether ``t``'s backend fills the optional `rnn` entry, ``t`` is a floating tensor it
    could take, and ``t`` and ``others`` (None skipped) are plain tensors: under vmap or
    forward AD the per-step ops run, as their batching rules and tangents need."""
    if not plain_operand(t) or any(o is not None and not plain_operand(o) for o in others):
        return False
    cdef TensorBase x = <TensorBase>t
    if x._backend.is_meta or not x._dtype.is_floating_point or x._dtype.is_complex:
        return False
    return x._backend.kernels().rnn is not NULL


def _fused_rnn(int op, list tensors, bint reverse):
    """Run the `rnn` entry with ``op`` (an EMBER_RNN_* code) on ``tensors`` (None: a NULL
    slot; the layout is the op's, abi.h), every one C-contiguous, of one dtype, on one
    device.  True when it ran; False when the kernel answered "not implemented" (nothing
    was written that the caller keeps).  Outputs are written in place."""
    cdef Py_ssize_t n = len(tensors), k
    if n > 16:
        raise ValueError("_fused_rnn: at most 16 operands")
    # the kernel writes its outputs in place, past the dispatcher: a captured graph would
    # hold the empty buffers and not the layer (ember.compile runs such calls eagerly)
    report_side_effect("the fused RNN layer writes its outputs past the dispatcher")
    cdef ember_view views[16]
    cdef const ember_view* ptrs[16]
    cdef TensorBase t = None, first = None
    for k in range(n):
        ptrs[k] = NULL
        if tensors[k] is None:
            continue
        t = <TensorBase?>tensors[k]
        if not plain_operand(t):
            return False                  # never hand a kernel a wrapper's memory
        if first is None:
            first = t
        else:
            same_device("lstm", first, t)
            if t._dtype is not first._dtype:
                raise RuntimeError(f"lstm: operands must share one dtype, got "
                                   f"{st_name(first._dtype)} and {st_name(t._dtype)}")
        if not t.contiguous_c():
            raise RuntimeError("lstm: the fused kernel takes contiguous operands")
        t.view_c(&views[k])
        ptrs[k] = &views[k]
    cdef ember_kernel_table* tab = first._backend.kernels()
    if tab.rnn is NULL:
        return False
    cdef ember_ctx ctx
    cdef int rc
    init_ctx(&ctx, first)
    with nogil:
        rc = tab.rnn(&ctx, op, ptrs, reverse)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return False
    if rc:
        raise_kernel_error(rc, &ctx)
    return True


RNN_LSTM = EMBER_RNN_LSTM
RNN_LSTM_BACKWARD = EMBER_RNN_LSTM_BACKWARD
