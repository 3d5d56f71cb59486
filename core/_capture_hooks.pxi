# What ember.compile's capture (ember._dynamo) cannot see through the dispatcher.  A capture
# watches a call through the PythonMode key, which sees every op; factories (no tensor to
# dispatch on) and reads of a tensor's values into Python (the start of data-dependent control
# flow) are not ops, so they report here instead.  Only while a capture is installed and the
# PythonMode key is live on this thread: an op's own implementation runs with the key
# excluded, so its internal reads are not reported.  None otherwise: eager code pays one
# pointer test.

cdef object _capture_hooks = None
cdef uint64_t PYTHON_MODE_BIT = <uint64_t>1 << DispatchKey.PythonMode


def _set_capture_hooks(hooks):
    """Install ``hooks`` (an object with ``factory(kind, *args)``, ``data_read(tensor,
    what)``, ``side_effect(what)`` and ``untracked_allocation()``), or None; returns the
    previous ones."""
    global _capture_hooks
    prev = _capture_hooks
    _capture_hooks = hooks
    return prev


cdef inline bint capturing() noexcept:
    return _capture_hooks is not None and \
        (_state.tls_included() & ~_state.tls_excluded() & PYTHON_MODE_BIT) != 0


cdef bint capture_live() noexcept:
    """capturing(), for the modules split from this one."""
    return capturing()


cdef object captured_factory(str kind, tuple args):
    """The capture's tensor for a factory call, or None (no capture live, or it declines)."""
    if capturing():
        return _capture_hooks.factory(kind, *args)
    return None


cdef int report_data_read(TensorBase t, str what) except -1:
    if capturing():
        _capture_hooks.data_read(t, what)
    return 0


cdef int report_side_effect(str what) except -1:
    # state outside tensors changed (a generator reseeded): a replay would not redo it
    if capturing():
        _capture_hooks.side_effect(what)
    return 0


cdef int report_allocation() except -1:
    # memory allocated while the key is live belongs to no op and no factory: some code
    # computes a tensor past the dispatcher, which a captured graph would not redo
    if capturing():
        _capture_hooks.untracked_allocation()
    return 0
