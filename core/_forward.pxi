# Forward-mode AD: tangents carried through the dispatcher on the ForwardAD key.
#
# * A tensor holds its tangents in TensorBase._fw, {level: tangent}, and carries the
#   ForwardAD key while it holds any (a tensor without tangents pays nothing).
# * Levels are transform levels: forward AD's (dual_level, ember.func.jvp) and vmap's share
#   one counter, so nested transforms are ordered by when they started.  A level that
#   ended is dropped from a tensor the next time the tensor reaches the ForwardAD kernel.
# * The kernel (ForwardKernel) handles the innermost live level L among its inputs: it
#   hides L on the thread (the ceiling), runs the op again (which handles the next level,
#   then the backward graph, then the backend), then the op's forward formula on the
#   tangents at L, and gives the results their tangent at L.  A vmap wrapper of a newer
#   level than L goes first: the kernel steps aside and the Batched key takes the call.
# * Forward formulas (core/forward_formulas.py) are looked up per op when the first level
#   starts; an op without one raises PyTorch's NotImplementedError when a tangent reaches
#   it, never a silent zero.
# * The output an op saves for backward shares its tangent dict (PyTorch's SavedVariable
#   keeps the forward grad), so forward-over-reverse sees tangents in backward formulas.

cdef uint64_t FW = <uint64_t>1 << DispatchKey.ForwardAD
cdef int FW_KEY = DispatchKey.ForwardAD
cdef int NO_CEILING = 0x7fffffff

cdef int _next_level = 1
cdef set _live = set()             # live transform levels (forward AD and vmap)
cdef set _live_dual = set()        # the forward AD ones
cdef int _n_dual = 0               # how many: saved outputs share tangent dicts only then
cdef object _install_forward = None


def _new_level(bint dual):
    """Start a transform level (a forward AD level if ``dual``, else a vmap level)."""
    global _next_level, _n_dual
    cdef int level = _next_level
    _next_level += 1
    _live.add(level)
    if dual:
        if _install_forward is not None:
            _install_forward()
        _live_dual.add(level)
        _n_dual += 1
    return level


def _end_level(int level):
    global _n_dual
    _live.discard(level)
    if level in _live_dual:
        _live_dual.discard(level)
        _n_dual -= 1


def _set_forward_installer(fn):
    """fn() registers the ForwardAD kernels; called (once) when a dual level starts."""
    global _install_forward
    _install_forward = fn


cdef inline object tangent_at(TensorBase t, int level):
    return t._fw.get(level) if t._fw is not None else None


cdef void scan_tensor(TensorBase t, int ceiling, int* fw, int* bt):
    """Raise fw[0] to t's innermost live tangent level below `ceiling`, bt[0] to its vmap
    level; drop the tangents of levels that ended."""
    cdef int lv
    cdef list dead = None
    if t._fw is not None and t._keys & FW:
        for lv in t._fw:
            if lv in _live_dual:
                if lv < ceiling and lv > fw[0]:
                    fw[0] = lv
            else:
                if dead is None:
                    dead = []
                dead.append(lv)
        if dead is not None:
            for lv in dead:
                del t._fw[lv]
            if not t._fw:
                t._keys &= ~FW
    if t._bt is not None and t._bt.level > bt[0]:
        bt[0] = t._bt.level


cdef void scan_args(tuple args, dict kwargs, int ceiling, int* fw, int* bt):
    for a in args:
        if isinstance(a, TensorBase):
            scan_tensor(<TensorBase>a, ceiling, fw, bt)
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TensorBase):
                    scan_tensor(<TensorBase>x, ceiling, fw, bt)
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, TensorBase):
                scan_tensor(<TensorBase>a, ceiling, fw, bt)


cdef uint64_t keys_of(tuple args, dict kwargs):
    cdef uint64_t keys = 0
    for a in args:
        if isinstance(a, TensorBase):
            keys |= (<TensorBase>a)._keys
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TensorBase):
                    keys |= (<TensorBase>x)._keys
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, TensorBase):
                keys |= (<TensorBase>a)._keys
    return keys


cdef object below_forward(Op op, tuple args, dict kwargs):
    """Run op as the dispatcher would below ForwardAD, the key excluded meanwhile."""
    cdef uint64_t ex = _state.tls_excluded()
    cdef uint64_t keys = (keys_of(args, kwargs) | _state.tls_included()) & ~(ex | FW)
    _state.set_tls_excluded(ex | FW)
    try:
        return op.redispatch(FW_KEY, keys, args, kwargs)
    finally:
        _state.set_tls_excluded(ex)


cdef class ForwardCtx:
    """What a forward formula sees: the op's inputs (primals: the level being
    differentiated hidden), their tangents at that level (None where there is none, lists
    of them for list arguments), the op's result, and - so that elementwise formulas can be
    derived from the backward ones - the attributes a backward formula reads."""
    cdef public Op op
    cdef public tuple args
    cdef public dict kwargs
    cdef public object result
    cdef public tuple tangents
    cdef public int level

    @property
    def shapes(self):
        return tuple(a.shape if isinstance(a, TensorBase) else None for a in self.args)


cdef tuple tangents_of(tuple args, int level):
    out = []
    for a in args:
        if isinstance(a, TensorBase):
            out.append(tangent_at(<TensorBase>a, level))
        elif isinstance(a, (list, tuple)) and any(isinstance(x, TensorBase) for x in a):
            out.append([tangent_at(<TensorBase>x, level) if isinstance(x, TensorBase)
                        else None for x in a])
        else:
            out.append(None)
    return tuple(out)


cdef str unsupported(str name):
    return (f"Trying to use forward AD with {name} that does not support it because it has "
            f"not been implemented yet.\nPlease file an issue to PyTorch at "
            f"https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so "
            f"that we can prioritize its implementation.")


cdef class ForwardKernel:
    """What the dispatcher calls at the ForwardAD key for one op."""
    cdef Op op
    cdef object rule               # rule(ForwardCtx) -> tangent(s), or None: unsupported
    cdef bint writes_first         # the op writes args[0] (copy_, fill_, index_put, ...)

    def __call__(self, *args, **kwargs):
        return self.run(args, kwargs)

    cdef object run(self, tuple args, dict kwargs):
        cdef int ceiling = _state.fw_ceiling(), level = -1, bt = -1
        scan_args(args, kwargs, ceiling, &level, &bt)
        if level < 0 or bt > level:
            return below_forward(self.op, args, kwargs)
        out = kwargs.get("out")
        cdef bint inplace = self.writes_first or (out is not None and len(args) > 0
                                                  and out is args[0])
        if out is not None and not inplace:
            raise NotImplementedError(f"Trying to use forward AD with {self.op.name}_out that "
                                      f"does not support it because it is an out= function")
        if self.rule is None:
            raise NotImplementedError(unsupported(self.op.name))
        cdef ForwardCtx ctx = ForwardCtx.__new__(ForwardCtx)
        ctx.op, ctx.kwargs, ctx.level = self.op, kwargs, level
        _state.set_fw_ceiling(level)
        try:
            ctx.tangents = tangents_of(args, level)
            if inplace:
                # the formula reads the values before the write
                old = _T.clone(args[0])
                r = self.run(args, kwargs)
                ctx.args = (old,) + args[1:]
            else:
                r = self.run(args, kwargs)
                ctx.args = args
            ctx.result = r
            t = self.rule(ctx)
        finally:
            _state.set_fw_ceiling(ceiling)
        if inplace:
            set_tangent_inplace(<TensorBase>args[0], t, level)
        elif isinstance(r, TensorBase):
            attach_tangent(<TensorBase>r, t, level)
        elif t is not None:
            for x, tx in zip(r, t):
                if isinstance(x, TensorBase):
                    attach_tangent(<TensorBase>x, tx, level)
        return r


cdef ForwardKernel forward_kernel(Op op, object rule):
    cdef ForwardKernel k = ForwardKernel.__new__(ForwardKernel)
    k.op = op
    k.rule = rule
    k.writes_first = op.derivative is not None and (op.derivative[2] & WRITES_SELF) != 0
    return k


def install_forward(dict rules):
    """Register the ForwardAD kernel of every op with a forward formula in ``rules``
    ({op name: rule}); the known non-differentiable ops fall through; every other op gets
    a kernel that refuses tangents (PyTorch's NotImplementedError), also ops defined
    later (the key's fallback)."""
    for name, op in _dispatch.all_ops().items():
        if name in rules:
            op.register(FW_KEY, forward_kernel(op, rules[name]))
        elif name in NON_DIFFERENTIABLE:
            op.register(FW_KEY, _dispatch.FALLTHROUGH)
    _dispatch.set_fallback(FW_KEY, lambda op: forward_kernel(op, None))
    _dispatch.set_fallthrough(FW_KEY, False)


# --- giving tensors their tangents ------------------------------------------------------

cdef object conform_tangent(TensorBase r, object t):
    """A formula's tangent brought to r's shape and dtype (broadcast formulas, scalars)."""
    cdef TensorBase tt
    if not isinstance(t, TensorBase):
        return _T.full(r.shape, t, dtype=r._dtype, device=r._device)
    tt = <TensorBase>t
    if tt.shape != r.shape:
        tt = tt.expand(r.shape)
    if tt._dtype is not r._dtype:
        tt = tt.to(r._dtype)
    return tt


cdef void attach_tangent(TensorBase r, object t, int level):
    if t is None or not (r._dtype.is_floating_point or r._dtype.is_complex):
        return
    if r._fw is None:
        r._fw = {}
    r._fw[level] = conform_tangent(r, t)
    r._keys |= FW


cdef void set_tangent_inplace(TensorBase s, object t, int level):
    """After an in-place op: s's tangent at `level` becomes t, written into the tangent s
    already has (so views of it, and of s's base, follow), or into a fresh zero tangent of
    s's base when s is a view (PyTorch's rule for views)."""
    if t is None or not (s._dtype.is_floating_point or s._dtype.is_complex):
        return
    cur = tangent_at(s, level)
    cdef TensorBase base
    # a tangent batched by a vmap (jacfwd's basis) written into an unbatched one: the
    # tangent is re-made batched (a backward formula's zeros with a region written, under
    # hessian = jacfwd(jacrev))
    cdef bint batched = isinstance(t, TensorBase) and (<TensorBase>t)._bt is not None
    if cur is not None and batched and (<TensorBase>cur)._bt is None:
        if s._base_ref is None:
            attach_tangent(s, t, level)     # the op wrote all of s
            return
        cur = None
    if cur is None and s._base_ref is not None:
        base = <TensorBase>s._base_ref
        bt = tangent_at(base, level)
        if bt is None or (<TensorBase>bt).stride() != base.stride() \
                or (<TensorBase>bt)._offset != base._offset \
                or (batched and (<TensorBase>bt)._bt is None):
            # a zero tangent laid out as the base is (strides and all), so that every view
            # of the base finds its tangent at the same geometry
            n = base._storage._nbytes // max(base._dtype.itemsize, 1)
            buf = _T._zeros_for(t, (n,)) if batched else \
                _T.zeros(n, dtype=base._dtype, device=base._device)
            nbt = buf.as_strided(tuple(base.shape), base.stride(), base._offset)
            if bt is not None:
                nbt.copy_(bt)
            attach_tangent(base, nbt, level)
            bt = nbt
        cur = bt.as_strided(tuple(s.shape), s.stride(), s._offset)
        attach_tangent(s, cur, level)
    if cur is None:
        attach_tangent(s, t, level)
    else:
        cur.copy_(conform_tangent(s, t))


# --- for ember.autograd.forward_ad, Function and ember.func ------------------------------

def _tracked(x):
    """Whether ``x`` takes part in a differentiation: it requires grad (with grad mode on)
    or carries a live tangent (one this thread does not hide).  Host-computed ops
    (sorting, LAPACK) take their differentiable path then."""
    if not isinstance(x, TensorBase):
        return False
    cdef TensorBase t = <TensorBase>x
    if t._keys & AG and grad_enabled():
        return True
    cdef int fw = -1, bt = -1
    if t._keys & FW:
        scan_tensor(t, _state.fw_ceiling(), &fw, &bt)
    return fw >= 0


def _fw_scan(args, kwargs=None):
    """(innermost live tangent level below this thread's ceiling, innermost vmap level)
    among the tensors in ``args`` (lists included); -1 where there is none."""
    cdef int fw = -1, bt = -1
    scan_args(tuple(args), kwargs or {}, _state.fw_ceiling(), &fw, &bt)
    return fw, bt


def _fw_tangent(TensorBase t, level=None):
    """t's tangent at ``level`` (None: its innermost live level), or None."""
    if t._fw is None or not t._fw:
        return None
    if level is None:
        live = [lv for lv in t._fw if lv in _live_dual]
        return t._fw[max(live)] if live else None
    return t._fw.get(level) if level in _live_dual else None


def _fw_attach(TensorBase t, int level, tangent):
    """Give t the tangent ``tangent`` at ``level`` (as it is: same shape and dtype)."""
    if t._fw is None:
        t._fw = {}
    t._fw[level] = tangent
    t._keys |= FW


def _fw_copy_tangents(TensorBase src, TensorBase dst):
    """dst gets src's tangents (the same tensors): an alias keeps its tangents."""
    if src._fw:
        dst._fw = dict(src._fw)
        dst._keys |= FW


def _fw_ceiling_get():
    return _state.fw_ceiling()


def _fw_ceiling_set(int level):
    _state.set_fw_ceiling(level)


def _fw_hidden_call(int level, fn, *args, **kwargs):
    """fn(*args, **kwargs) with tangent levels >= ``level`` hidden on this thread."""
    cdef int prev = _state.fw_ceiling()
    _state.set_fw_ceiling(min(level, prev))
    try:
        return fn(*args, **kwargs)
    finally:
        _state.set_fw_ceiling(prev)


def _fw_visible_call(int level, fn, *args, **kwargs):
    """fn(*args, **kwargs) with tangent level ``level`` visible again (a formula derived by
    running a decomposition on the dual inputs)."""
    cdef int prev = _state.fw_ceiling()
    _state.set_fw_ceiling(max(level + 1, prev))
    try:
        return fn(*args, **kwargs)
    finally:
        _state.set_fw_ceiling(prev)
