"""The host fallback: a device runs the primitives its plugin does not implement on the host.

A plugin's kernel table needs only the memory core (alloc, free, fill, copy, to_host,
from_host).  Any other primitive entry may be NULL, and any entry may answer
EMBER_ERR_NOT_IMPLEMENTED for an op code or dtype it does not handle.  The core then copies
the bytes each operand spans to a host buffer through `to_host`, runs the CPU plugin's
kernel on host views with the same strides, and copies the results back through
`from_host`, as PyTorch's CPU fallback lets a new backend start at a dozen ops.  Every
(op, dtype) that falls back is counted and warns once (``ember.backends.host_fallbacks``).

The wrappers below have the entries' own C signatures, so the core calls every device the
same way; a wrapper finds its device through a thread-local that ``KernelTable.activate``
sets on the calling thread right before the call.  Fused entries (softmax, norm, nll, conv,
pool, adam) and the newer optional entries (sort) are not wrapped: NULL there already
means "run the core's composite" (or its host path).
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from ember_abi cimport *

cdef extern from *:
    """
    /* the fallback_state of the table whose entry this thread is about to call */
    static __thread void *ember_fallback_current = NULL;
    """
    void *ember_fallback_current

DEF MAX_OPERANDS = 4                  # where: out, cond, a, b

cdef dict _counts = {}                # device type -> {op key: calls that fell back}
cdef set _warned = set()              # (device type, op key) already warned about
cdef object _pending = None           # an exception raised while staging (warnings as errors)
cdef char _empty_byte = 0            # the data of a host view with no elements


cdef class KernelTable:
    """The table the core calls for one device type (see _fallback.pxd)."""

    def __cinit__(self, backend, size_t table_address, bint host):
        cdef const ember_kernel_table *t = <const ember_kernel_table*>table_address
        cdef size_t n = <size_t>t.size if t.size < sizeof(ember_kernel_table) \
            else sizeof(ember_kernel_table)
        memset(&self.state.dev, 0, sizeof(ember_kernel_table))
        memcpy(&self.state.dev, t, n)        # entries a table of an older minor lacks: NULL
        self.state.host = NULL
        self.state.backend = <void*>backend
        self.table = self.state.dev
        self.wrapped = not host
        if host:
            return
        self.table.copy = fb_copy
        self.table.fill = fb_fill
        self.table.unary = fb_unary
        self.table.binary = fb_binary
        self.table.reduce = fb_reduce
        self.table.matmul = fb_matmul
        self.table.random = fb_random
        self.table.where = fb_where
        self.table.scan = fb_scan
        self.table.index = fb_index
        self.table.search = fb_search

    def address(self):
        """The address of the table the core calls (an int)."""
        return <size_t>&self.table

    @property
    def abi(self):
        """The ABI version the plugin's table was built for, as "major.minor"."""
        return f"{self.state.dev.abi_version}.{self.state.dev.abi_minor}"

    def entries(self):
        """The names of the entries the plugin's own table sets (see _abi.ENTRIES)."""
        from ember.backends._abi import ENTRIES
        cdef void **slot = entry_slots(&self.state.dev)
        return [name for i, name in enumerate(ENTRIES) if slot[i] != NULL]


cdef inline void **entry_slots(ember_kernel_table *t) noexcept:
    """The table's entries as an array of pointers, in the order of _abi.ENTRIES (abi.h
    declares nothing but function pointers after the header)."""
    return <void**>&t.alloc


cdef void set_current(fallback_state *s) noexcept nogil:
    global ember_fallback_current
    ember_fallback_current = <void*>s


cdef object take_pending():
    global _pending
    e, _pending = _pending, None
    return e


def host_fallbacks(device_type=None):
    """{op key: calls} that ran through the host fallback on ``device_type`` (all device
    types: {type: {...}}), since the process started or the last reset."""
    if device_type is None:
        return {t: dict(c) for t, c in _counts.items() if c}
    return dict(_counts.get(device_type, {}))


def reset_host_fallbacks():
    """Forget the counts (warnings already shown stay shown)."""
    for c in _counts.values():
        c.clear()


# ---- staging: device operands <-> host buffers ---------------------------------------------

cdef struct staged:
    int n, nout                       # operands, the first `nout` of them written
    const ember_view *dev[MAX_OPERANDS]
    ember_view view[MAX_OPERANDS]     # the host views the CPU kernel gets
    const ember_view *arg[MAX_OPERANDS]
    char *buf[MAX_OPERANDS]
    int64_t lo[MAX_OPERANDS]          # bytes from the lowest element to data
    int64_t nbytes[MAX_OPERANDS]


cdef inline int64_t itemsize(int32_t dt) noexcept nogil:
    if dt == EMBER_UINT8 or dt == EMBER_INT8 or dt == EMBER_BOOL:
        return 1
    if dt == EMBER_INT16 or dt == EMBER_FLOAT16 or dt == EMBER_BFLOAT16 or dt == EMBER_UINT16:
        return 2
    if dt == EMBER_INT32 or dt == EMBER_FLOAT32 or dt == EMBER_UINT32:
        return 4
    return 8


cdef int fail(ember_ctx *ctx, int rc, str msg) noexcept:
    cdef bytes b = msg.encode("utf-8")[:EMBER_ERROR_LEN - 1]
    memcpy(ctx.error, <char*>b, len(b))
    ctx.error[len(b)] = 0
    return rc


cdef int note(fallback_state *s, ember_ctx *ctx, str entry, int32_t op, tuple dtypes) noexcept:
    """Count one fallback, warn at its first, and make sure the host's table is loaded."""
    global _pending
    backend = <object>s.backend
    try:
        from ember.backends._abi import op_key
        key = op_key(entry, op, dtypes)
        counts = _counts.setdefault(backend.type, {})
        counts[key] = counts.get(key, 0) + 1
        if (backend.type, key) not in _warned:     # once, even after a reset of the counts
            _warned.add((backend.type, key))
            import warnings
            warnings.warn(f"{key} is not implemented by device '{backend.type}' (plugin "
                          f"{backend.plugin!r}); it falls back to run on the host through "
                          f"the CPU plugin, copying its operands (this may be slow)",
                          UserWarning)
        if s.host == NULL:
            from ember.core import _device
            cpu = _device._backend_for_type(_device.HOST_TYPE)
            if cpu is None or cpu.plugin is None:
                return fail(ctx, EMBER_ERR_NOT_IMPLEMENTED,
                            f"{key} is not implemented by device '{backend.type}', and the "
                            f"host fallback needs the CPU plugin: pip install ember-cpu")
            s.host = <ember_kernel_table*><size_t>cpu._table_address()
    except BaseException as e:      # raised by the core once the call returns
        _pending = e
        return fail(ctx, EMBER_ERR_RUNTIME, "")
    return EMBER_OK


cdef int stage(fallback_state *s, ember_ctx *ctx, staged *st, bint read_out) noexcept:
    """Copy every device operand's bytes to a host buffer and point a host view at it.
    Outputs are read too when the op reads them (scatter) or when they have gaps, whose
    bytes must survive the copy back."""
    cdef int i, d, rc
    cdef const ember_view *v
    cdef int64_t size, lo, hi, numel, isz
    for i in range(st.n):
        st.buf[i] = NULL
        st.nbytes[i] = 0
    for i in range(st.n):
        v = st.dev[i]
        if v == NULL or v.flags & EMBER_VIEW_HOST_SCALAR:
            st.arg[i] = v                     # absent, or already host memory
            continue
        st.view[i] = v[0]
        st.arg[i] = &st.view[i]
        isz = itemsize(v.dtype)
        lo = hi = 0
        numel = 1
        for d in range(v.ndim):
            size = v.sizes[d]
            numel *= size
            if v.strides[d] > 0:
                hi += (size - 1) * v.strides[d]
            else:
                lo += (size - 1) * v.strides[d]
        if numel == 0:
            st.view[i].data = &_empty_byte
            continue
        st.lo[i] = -lo * isz
        st.nbytes[i] = (hi - lo + 1) * isz
        st.buf[i] = <char*>malloc(st.nbytes[i])
        if st.buf[i] == NULL:
            unstage(st)
            return fail(ctx, EMBER_ERR_MEMORY, f"host fallback: cannot allocate "
                        f"{st.nbytes[i]} bytes")
        st.view[i].data = st.buf[i] + st.lo[i]
        if i >= st.nout or read_out or st.nbytes[i] != numel * isz:
            with nogil:
                rc = s.dev.to_host(ctx, st.buf[i], v.data - st.lo[i], st.nbytes[i])
            if rc:
                unstage(st)
                return rc
    return EMBER_OK


cdef int finish(fallback_state *s, ember_ctx *ctx, staged *st, int rc) noexcept:
    """After the host kernel: copy the outputs back (unless it failed), free the buffers."""
    cdef int i
    if rc == EMBER_OK:
        for i in range(st.nout):
            if st.buf[i] != NULL:
                with nogil:
                    rc = s.dev.from_host(ctx, st.dev[i].data - st.lo[i], st.buf[i], st.nbytes[i])
                if rc:
                    break
    unstage(st)
    return rc


cdef void unstage(staged *st) noexcept:
    cdef int i
    for i in range(st.n):
        free(st.buf[i])
        st.buf[i] = NULL


cdef inline fallback_state *current() noexcept nogil:
    return <fallback_state*>ember_fallback_current


cdef int begin(fallback_state *s, ember_ctx *ctx, staged *st, str entry, int32_t op,
               tuple dtypes, bint read_out) noexcept:
    cdef int rc = note(s, ctx, entry, op, dtypes)
    if rc == EMBER_OK:
        rc = stage(s, ctx, st, read_out)
    return rc


# ---- the wrappers: the device's kernel first, the host's when it has none -----------------
# Each runs the device's entry when it is set and returns its answer unless that answer is
# EMBER_ERR_NOT_IMPLEMENTED; then it stages the operands (outputs first), runs the host's
# entry with the same op and scalars, and copies the outputs back.

cdef int fb_copy(ember_ctx *ctx, const ember_view *out, const ember_view *a) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.copy != NULL:
        rc = s.dev.copy(ctx, out, a)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1] = 2, 1, out, a
    with gil:
        rc = begin(s, ctx, &st, "copy", 0, (a.dtype, out.dtype), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.copy(ctx, st.arg[0], st.arg[1]))
    return rc


cdef int fb_fill(ember_ctx *ctx, const ember_view *out, const void *value) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.fill != NULL:
        rc = s.dev.fill(ctx, out, value)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0] = 1, 1, out
    with gil:
        rc = begin(s, ctx, &st, "fill", 0, (out.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.fill(ctx, st.arg[0], value))
    return rc


cdef int fb_unary(ember_ctx *ctx, int32_t op, const ember_view *out,
                  const ember_view *a) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.unary != NULL:
        rc = s.dev.unary(ctx, op, out, a)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1] = 2, 1, out, a
    with gil:
        rc = begin(s, ctx, &st, "unary", op, (a.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.unary(ctx, op, st.arg[0], st.arg[1]))
    return rc


cdef int fb_binary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                   const ember_view *b) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.binary != NULL:
        rc = s.dev.binary(ctx, op, out, a, b)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1], st.dev[2] = 3, 1, out, a, b
    with gil:
        rc = begin(s, ctx, &st, "binary", op, (a.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.binary(ctx, op, st.arg[0], st.arg[1], st.arg[2]))
    return rc


cdef int fb_reduce(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                   int32_t nreduce) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.reduce != NULL:
        rc = s.dev.reduce(ctx, op, out, a, nreduce)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1] = 2, 1, out, a
    with gil:
        rc = begin(s, ctx, &st, "reduce", op, (a.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.reduce(ctx, op, st.arg[0], st.arg[1], nreduce))
    return rc


cdef int fb_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                   const ember_view *b) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.matmul != NULL:
        rc = s.dev.matmul(ctx, out, a, b)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1], st.dev[2] = 3, 1, out, a, b
    with gil:
        rc = begin(s, ctx, &st, "matmul", 0, (a.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.matmul(ctx, st.arg[0], st.arg[1], st.arg[2]))
    return rc


cdef int fb_random(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                   uint64_t offset, double p0, double p1) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.random != NULL:
        rc = s.dev.random(ctx, op, out, seed, offset, p0, p1)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0] = 1, 1, out
    with gil:
        rc = begin(s, ctx, &st, "random", op, (out.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.random(ctx, op, st.arg[0], seed, offset, p0, p1))
    return rc


cdef int fb_where(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                  const ember_view *a, const ember_view *b) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.where != NULL:
        rc = s.dev.where(ctx, out, cond, a, b)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout = 4, 1
    st.dev[0], st.dev[1], st.dev[2], st.dev[3] = out, cond, a, b
    with gil:
        rc = begin(s, ctx, &st, "where", 0, (a.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.where(ctx, st.arg[0], st.arg[1], st.arg[2],
                                                  st.arg[3]))
    return rc


cdef int fb_scan(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
                 const ember_view *a) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.scan != NULL:
        rc = s.dev.scan(ctx, op, out, indices, a)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1], st.dev[2] = 3, 2, out, indices, a
    with gil:
        rc = begin(s, ctx, &st, "scan", op, (a.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.scan(ctx, op, st.arg[0], st.arg[1], st.arg[2]))
    return rc


cdef int fb_index(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                  const ember_view *index, int32_t dim) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.index != NULL:
        rc = s.dev.index(ctx, op, out, a, index, dim)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1], st.dev[2] = 3, 1, out, a, index
    with gil:   # scatters update `out` in place: it is read too
        rc = begin(s, ctx, &st, "index", op & ~EMBER_INDEX_WRAP, (a.dtype,), True)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.index(ctx, op, st.arg[0], st.arg[1], st.arg[2],
                                                  dim))
    return rc


cdef int fb_search(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
                   const ember_view *values) noexcept nogil:
    cdef fallback_state *s = current()
    cdef int rc
    if s.dev.search != NULL:
        rc = s.dev.search(ctx, op, out, sorted, values)
        if rc != EMBER_ERR_NOT_IMPLEMENTED:
            return rc
    cdef staged st
    st.n, st.nout, st.dev[0], st.dev[1], st.dev[2] = 3, 1, out, sorted, values
    with gil:
        rc = begin(s, ctx, &st, "search", op, (sorted.dtype,), False)
        if rc == EMBER_OK:
            rc = finish(s, ctx, &st, s.host.search(ctx, op, st.arg[0], st.arg[1], st.arg[2]))
    return rc


# ---- a device that implements part of the ABI (tests, the conformance suite's self-test) --

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New


cdef void free_table(object capsule) noexcept:
    free(PyCapsule_GetPointer(capsule, EMBER_KERNEL_TABLE_CAPSULE))


def table_subset(capsule, keep, *, version=None):
    """A new kernel-table capsule: a copy of ``capsule``'s table in which only the entries
    named in ``keep`` (see ``ember.backends._abi.ENTRIES``) are set, the others NULL.  A
    plugin handing it over is a device that implements that part of the ABI: every other
    primitive runs through the host fallback.  ``version=(major, minor, size)`` rewrites
    the table's header, as a plugin built for another ABI would have it."""
    from ember.backends._abi import ENTRIES
    unknown = set(keep) - set(ENTRIES)
    if unknown:
        raise ValueError(f"table_subset: unknown entries {sorted(unknown)}")
    cdef ember_kernel_table *src = <ember_kernel_table*>PyCapsule_GetPointer(
        capsule, EMBER_KERNEL_TABLE_CAPSULE)
    cdef ember_kernel_table *t = <ember_kernel_table*>malloc(sizeof(ember_kernel_table))
    if t == NULL:
        raise MemoryError()
    memcpy(t, src, sizeof(ember_kernel_table))
    t.size = sizeof(ember_kernel_table)
    if version is not None:
        t.abi_version, t.abi_minor, t.size = version
    cdef void **slot = entry_slots(t)
    for i, name in enumerate(ENTRIES):
        if name not in keep:
            slot[i] = NULL
    return PyCapsule_New(t, EMBER_KERNEL_TABLE_CAPSULE, free_table)


def unknown_op_answers(backend):
    """{entry: (return code, message)} of each op-coded primitive of ``backend`` (a
    Backend) called with an op code no ABI version defines, on one-element operands; the
    contract's answer is EMBER_ERR_NOT_IMPLEMENTED.  Entries the plugin left out are
    absent.  For the conformance suite."""
    cdef KernelTable kt = backend.kernel_table()
    cdef const ember_kernel_table *t = &kt.state.dev
    cdef ember_ctx ctx
    memset(&ctx, 0, sizeof(ember_ctx))
    cdef char *buf = <char*>t.alloc(&ctx, 64)
    if buf == NULL:
        raise MemoryError(ctx.error.decode("utf-8", "replace"))
    cdef char zeros[64]
    memset(zeros, 0, 64)
    cdef ember_view f, i, s0
    memset(&f, 0, sizeof(ember_view))
    f.data, f.ndim, f.sizes[0], f.strides[0], f.dtype = buf, 1, 1, 1, EMBER_FLOAT32
    i = f
    i.data, i.dtype = buf + 32, EMBER_INT64
    s0 = f
    s0.ndim = 0
    cdef int32_t bad = 0x7FFF0000          # no family has this many op codes
    cdef double params[3]
    params[0] = params[1] = params[2] = 0.0
    answers = {}
    try:
        if t.from_host(&ctx, buf, zeros, 64):
            raise RuntimeError(ctx.error.decode("utf-8", "replace"))
        for name in ("unary", "binary", "reduce", "random", "scan", "index", "search",
                     "softmax", "activation", "ternary"):
            ctx.error[0] = 0
            if name == "unary" and t.unary != NULL:
                rc = t.unary(&ctx, bad, &f, &f)
            elif name == "binary" and t.binary != NULL:
                rc = t.binary(&ctx, bad, &f, &f, &f)
            elif name == "reduce" and t.reduce != NULL:
                rc = t.reduce(&ctx, bad, &s0, &f, 1)
            elif name == "random" and t.random != NULL:
                rc = t.random(&ctx, bad, &f, 0, 0, 0.0, 1.0)
            elif name == "scan" and t.scan != NULL:
                rc = t.scan(&ctx, bad, &f, NULL, &f)
            elif name == "index" and t.index != NULL:
                rc = t.index(&ctx, bad, &f, &f, &i, 0)
            elif name == "search" and t.search != NULL:
                rc = t.search(&ctx, bad, &i, &f, &f)
            elif name == "softmax" and t.softmax != NULL:
                rc = t.softmax(&ctx, bad, &f, &f, NULL)
            elif name == "activation" and t.activation != NULL:
                rc = t.activation(&ctx, bad, params, &f, &f, NULL)
            elif name == "ternary" and t.ternary != NULL:
                rc = t.ternary(&ctx, bad, &f, &f, &f, &f, 0.0)
            else:
                continue
            answers[name] = (rc, ctx.error.decode("utf-8", "replace"))
    finally:
        t.free(ctx.device, buf)
    return answers
