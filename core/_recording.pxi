# Included by _autograd.pyx: recording.  The Autograd kernel the dispatcher calls for a
# differentiable op, how an op's outputs become its node's outputs (attach), how an in-place
# write rebases a tensor's history (rebase), and install(), which registers the kernels.

# --- recording: the Autograd kernel ----------------------------------------------------

cdef class AutogradKernel:
    """What the dispatcher calls at the Autograd key for a differentiable op."""
    cdef Op op
    cdef object formula, entry
    cdef int save
    cdef bint writes_first           # the op writes args[0] (WRITES_SELF: copy_, fill_, ...)

    def __call__(self, *args, **kwargs):
        out = kwargs.get("out")
        if self.writes_first:
            return self.inplace(args, kwargs, <TensorBase>args[0])
        if out is not None:
            if args and out is args[0]:
                return self.inplace(args, kwargs, <TensorBase>out)
            if requires(out) or any(requires(a) for a in args):
                raise RuntimeError(f"{self.op.name}(): functions with out=... arguments don't "
                                   "support automatic differentiation, but one of the "
                                   "arguments requires grad.")
            return self.below(args, kwargs)
        cdef bint any_req = False
        for a in args:
            if requires(a):
                any_req = True
                break
        r = self.below(args, kwargs)
        if not any_req:
            return r
        refuse_complex_result(self.op.name, r)
        edges = input_edges(args)
        node = self.make_node(args, kwargs, edges, None, -1)
        attach(node, r, self.save & SAVE_RESULT)
        return r

    cdef object below(self, tuple args, dict kwargs):
        cdef uint64_t ex = _state.tls_excluded()
        cdef int depth = _state.ag_below()
        _state.set_tls_excluded(ex | AG)
        _state.set_ag_below(depth + 1)
        try:
            return self.entry(*args, **kwargs)
        finally:
            _state.set_tls_excluded(ex)
            _state.set_ag_below(depth)

    cdef OpNode make_node(self, tuple args, dict kwargs, tuple edges, TensorBase clone_of_self,
                          int self_pos):
        cdef OpNode n = OpNode.__new__(OpNode)
        n.op = self.op
        n.formula = self.formula
        n.next_edges = edges
        n.kwargs = kwargs
        n.num_outputs = 1
        saved = []
        meta = []
        cdef Py_ssize_t i
        # as PyTorch, an input read only for the others' gradients is not saved when none of
        # them requires grad, so writing into it later (b[1] * 3, then b[0] = ...) breaks
        # no backward: self (mul, div), the others (mul)
        cdef bint self_unneeded = self.save & SELF_FOR_OTHERS and self_pos < 0 and \
            not requires_from(args, 1)
        cdef bint others_unneeded = self.save & OTHER_FOR_SELF and self_pos < 0 and \
            not requires(args[0])
        for i in range(len(args)):
            a = args[i]
            if isinstance(a, TensorBase):
                t = <TensorBase>a
                meta.append((t.shape, t._dtype, t._device))
                if i == self_pos and clone_of_self is None and self.save & SELF_FOR_OTHERS:
                    saved.append(None)      # no other input needs self (inplace below)
                elif (i == 0 and self_unneeded) or (i > 0 and others_unneeded):
                    saved.append(None)
                elif self.save & SAVE_INPUTS or (self.save & SAVE_FIRST and i == 0):
                    saved.append(save(clone_of_self if i == self_pos else t, -1))
                else:
                    saved.append(None)
            else:
                meta.append(None)
                saved.append(a)
        n._args = tuple(saved)
        n._meta = tuple(meta)
        if _anomaly:
            import traceback
            n._trace = "".join(traceback.format_stack()[:-2])
        return n

    cdef object inplace(self, tuple args, dict kwargs, TensorBase self_t):
        who = multi_view_output(self_t) if self_t._keys & AG else None
        if who is not None:
            raise RuntimeError(f"{who} is a view and is being modified inplace. {_MULTI_VIEW}")
        if self_t._keys & AG:
            if self_t._grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
        base = self_t._base_ref
        if base is not None and (<TensorBase>base)._keys & AG \
                and (<TensorBase>base)._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        cdef bint any_req = requires(self_t)
        for a in args:
            any_req = any_req or requires(a)
        if not any_req:
            return self.below(args, kwargs)
        edges = input_edges(args)
        clone = None
        if self.save & (SAVE_INPUTS | SAVE_FIRST) and not (
                self.save & SELF_FOR_OTHERS and not requires_from(args, 1)):
            clone = detach_c(self_t, False).clone()
        # the node (and what it saves) before the write: an input that aliases self
        # (b.mul_(b)) is then saved at its old version, and the backward refuses it as
        # PyTorch's does (saved after, it read the new values: a wrong gradient).  It keeps
        # no `out=self`: that would be a cycle (tensor -> node -> tensor), and the tensor
        # and its graph would wait for the garbage collector
        node = self.make_node(args, kwargs if "out" not in kwargs else
                              {k: v for k, v in kwargs.items() if k != "out"}, edges, clone, 0)
        r = self.below(args, kwargs)
        if self.save & SAVE_RESULT:
            node._result = save(self_t, 0)
        rebase(self_t, node)
        return r


cdef bint requires_from(tuple args, Py_ssize_t start):
    """Whether any of ``args[start:]`` requires grad (no generator on the recording path)."""
    cdef Py_ssize_t i
    for i in range(start, len(args)):
        if requires(args[i]):
            return True
    return False


cdef tuple input_edges(tuple args):
    """One edge per positional argument, up to the last tensor among them."""
    cdef Py_ssize_t last = -1, i
    for i in range(len(args)):
        if isinstance(args[i], TensorBase):
            last = i
    return tuple(edge_of(<TensorBase>args[i]) if isinstance(args[i], TensorBase) else None
                 for i in range(last + 1))


cdef inline void own_output(TensorBase t):
    """An output that is a view of a buffer the op made itself (a reshape of its result,
    outside any graph) becomes a tensor of its own, as PyTorch's outputs of non-view ops
    are: an in-place op on it (ReLU(inplace=True) after BatchNorm) must rebase onto this
    node, not onto that buffer, which has no history and dropped the gradient."""
    cdef object b = t._base_ref
    if b is not None and not ((<TensorBase>b)._keys & AG):
        t._base_ref = None


# the ops whose derivatives hold for complex tensors (PyTorch's conjugate convention):
# the linear ones (views, copies, sums, joins), and those whose formula conjugates what it
# reads of complex inputs (the table's holomorphic rows, core/optable.py conj_saved; mul,
# div, pow, matmul)
cdef frozenset COMPLEX_DIFFERENTIABLE = frozenset((
    "mul", "add", "sub", "neg", "div", "pow", "matmul", "exp", "log", "sqrt", "sin", "cos",
    "reciprocal", "square", "tanh", "sigmoid", "rsqrt", "expm1", "log1p", "log2", "log10",
    "exp2", "sinh", "cosh", "tan",
    "view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "transpose", "permute",
    "expand", "clone", "narrow", "select", "_to_copy", "as_strided", "contiguous",
    "sum", "mean", "cumsum", "cat", "stack", "flip", "roll", "index_select", "repeat",
    "where", "index", "masked_fill", "index_put"))


cdef int refuse_complex_result(str op, object r) except -1:
    """A complex output of an op autograd records without a complex derivative: refused,
    where it would otherwise leave the history silently."""
    if op in COMPLEX_DIFFERENTIABLE:
        return 0
    for x in ((r,) if isinstance(r, TensorBase) else r if isinstance(r, tuple) else ()):
        if isinstance(x, TensorBase) and (<TensorBase>x)._dtype.is_complex:
            raise NotImplementedError(f"{op}: its result is complex, and ember's complex "
                                      f"results of {op} cannot carry gradients yet (an "
                                      f"input requires grad)")
    return 0


cdef void attach(OpNode node, object r, int save_result):
    """Make the op's floating outputs the node's outputs."""
    cdef TensorBase t
    if isinstance(r, TensorBase):
        t = <TensorBase>r
        if t._dtype.is_floating_point or t._dtype.is_complex:
            own_output(t)
            t._grad_fn = node
            t._output_nr = 0
            t._keys |= AG
            if t._base_ref is not None:
                meta_of(t).view_version = t.version().value
            if save_result:
                node._result = save(t, 0)
        return
    outs = tuple(r)
    node.num_outputs = len(outs)
    saved = []
    cdef int i
    for i in range(len(outs)):
        x = outs[i]
        if isinstance(x, TensorBase) and ((<TensorBase>x)._dtype.is_floating_point or
                                          (<TensorBase>x)._dtype.is_complex):
            t = <TensorBase>x
            own_output(t)
            t._grad_fn = node
            t._output_nr = i
            t._keys |= AG
            if t._base_ref is not None:          # split/unbind: views, as one output is
                meta_of(t).view_version = t.version().value
            saved.append(save(t, i) if save_result else None)
        elif save_result and isinstance(x, TensorBase):
            # a non-differentiable output (max_pool2d_with_indices' indices): plain data
            saved.append(save(<TensorBase>x, -1))
        else:
            saved.append(None)
    if save_result:
        node._result = tuple(saved)


cdef void move_retain(TensorBase t, Node new_fn) except *:
    """retain_grad follows t to its new history (PyTorch: the gradient of the version an
    in-place op made, not of the one before)."""
    cdef Node old = t._grad_fn
    if t._ag is None or not (<AutogradMeta>t._ag).retains_grad or old is None:
        return
    if old._retain:
        old._retain = [(nr, ref) for nr, ref in old._retain if ref() is not t]
    new_fn._retain_output(0, t)


cdef void rebase(TensorBase t, Node node) except *:
    """After an in-place op: t's history is `node` (through its base, if t is a view)."""
    cdef TensorBase base
    cdef CopySlices cs
    cdef ViewOfBase v
    if t._base_ref is None:
        move_retain(t, node)
        t._grad_fn = node
        t._output_nr = 0
        t._keys |= AG
        return
    base = <TensorBase>t._base_ref
    cs = CopySlices.__new__(CopySlices)
    cs.fn = node
    cs.base_geom = geometry(base)
    cs.view_geom = geometry(t)
    cs.next_edges = (edge_of(base),) + node.next_edges[1:]
    cs.num_outputs = 1
    move_retain(base, cs)
    base._grad_fn = cs
    base._output_nr = 0
    base._keys |= AG
    v = ViewOfBase.__new__(ViewOfBase)
    v.base_geom, v.view_geom = cs.base_geom, cs.view_geom
    v.next_edges = ((cs, 0),)
    v.num_outputs = 1
    move_retain(t, v)
    t._grad_fn = v
    t._output_nr = 0
    t._keys |= AG
    meta_of(t).view_version = t.version().value


cdef dict _kernels = {}


cdef AutogradKernel kernel_for(Op op):
    k = _kernels.get(op)
    if k is None:
        formula, entry, save_flags = op.derivative
        k = AutogradKernel.__new__(AutogradKernel)
        (<AutogradKernel>k).op = op
        (<AutogradKernel>k).formula = formula
        (<AutogradKernel>k).entry = entry
        (<AutogradKernel>k).save = save_flags
        (<AutogradKernel>k).writes_first = (save_flags & WRITES_SELF) != 0
        _kernels[op] = k
    return <AutogradKernel>k


# ops whose results carry no gradient (comparisons, integer math, positions, random)
NON_DIFFERENTIABLE = frozenset([
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "floor_divide", "argmax", "argmin", "searchsorted", "multinomial"])


def install():
    """Register the Autograd kernel of every op with a derivative, let the known
    non-differentiable ops fall through, and make every other op refuse tensors that
    require grad (a missing formula must fail loudly, not give wrong gradients)."""
    for name, op in _dispatch.all_ops().items():
        if op.derivative is not None:
            op.register(DispatchKey.Autograd, kernel_for(op))
        elif name in NON_DIFFERENTIABLE:
            op.register(DispatchKey.Autograd, _dispatch.FALLTHROUGH)
    _dispatch.set_fallthrough(DispatchKey.Autograd, False)
