# The backward pass: find the graph from the roots (iteratively), order it topologically
# (Kahn), run each node once with the sum of the gradients that reached it.

cdef int64_t _epoch = 0


cdef object _add_grad(list buf, int nr, object g):
    buf[nr] = g if buf[nr] is None else buf[nr] + g
    return None


def run_backward(tuple tensors, tuple grad_tensors, bint keep_graph, bint create_graph,
                 tuple inputs=(), bint allow_unused=False, bint accumulate=True,
                 tuple foreign=None):
    """The engine behind Tensor.backward (accumulate=True) and autograd.grad
    (accumulate=False: the gradients of `inputs` are returned instead)."""
    global _epoch, _current
    cdef Node n, m
    cdef TensorBase t
    cdef Py_ssize_t i
    roots = []
    for i in range(len(tensors)):
        t = <TensorBase>tensors[i]
        e = edge_of(t)
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        roots.append(e)
    # targets: the (node, input_nr) whose incoming gradient is wanted
    targets = {}
    for i in range(len(inputs)):
        t = <TensorBase>inputs[i]
        e = edge_of(t)
        if e is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.setdefault((id(e[0]), e[1]), []).append(i)
    _epoch += 1
    cdef int64_t epoch = _epoch
    # a run inside a running backward (a Function's backward calling autograd.grad) may
    # share nodes with the outer run: it keeps their per-run state here and puts it back
    cdef list outer = [] if _current is not None else None
    # 1. discover every node reachable from the roots and count its incoming edges
    stack = []
    for e in roots:
        n = <Node>e[0]
        if n._epoch != epoch:
            if outer is not None:
                outer.append((n, n._epoch, n._deps, n._needed, n._buffer))
                n._buffer = None
            n._epoch, n._deps, n._needed = epoch, 0, False
            stack.append(n)
    seen = list(stack)
    while stack:
        n = <Node>stack.pop()
        for e in n.next_edges:
            if e is None:
                continue
            m = <Node>e[0]
            if m._epoch != epoch:
                if outer is not None:
                    outer.append((m, m._epoch, m._deps, m._needed, m._buffer))
                    m._buffer = None
                m._epoch, m._deps, m._needed = epoch, 0, False
                stack.append(m)
                seen.append(m)
            m._deps += 1
    # 2. a topological order: a node comes after every node that sends it a gradient
    order = []
    ready = [n for n in dict.fromkeys(e[0] for e in roots) if (<Node>n)._deps == 0]
    while ready:
        n = <Node>ready.pop()
        order.append(n)
        for e in n.next_edges:
            if e is None:
                continue
            m = <Node>e[0]
            m._deps -= 1
            if m._deps == 0:
                ready.append(m)
    # 3. with targets, run only the nodes that lead to one; a target that leads to no
    # other is not run at all (its gradient is captured as it arrives)
    target_nodes = {k[0] for k in targets}
    cdef set stop = set()
    if targets:
        for i in range(len(order) - 1, -1, -1):
            n = <Node>order[i]
            down = any(e is not None and (<Node>e[0])._needed for e in n.next_edges)
            n._needed = down or id(n) in target_nodes
            if not down:
                stop.add(id(n))
    captured = [None] * len(inputs)
    cdef GraphTask task = GraphTask.__new__(GraphTask)
    task.foreign = {id(g) for g in (grad_tensors if foreign is None else foreign)}
    task.stolen = set()
    task.epoch, task.pruned = epoch, bool(targets)
    task.callbacks = []
    prev_task = _current
    _current = task
    cdef uint64_t ex = _state.tls_excluded()
    cdef int below = _state.ag_below()
    _state.set_tls_excluded(ex & ~AG if create_graph else ex | AG)
    _state.set_ag_below(0)            # the engine's no-recording is a no_grad
    try:
        for i in range(len(roots)):
            n = <Node>roots[i][0]
            if n._buffer is None:
                n._buffer = [None] * n.num_outputs
            _add_grad(n._buffer, roots[i][1], grad_tensors[i])
        for n in order:
            run_node(n, targets, captured, keep_graph, accumulate, stop)
        while task.callbacks:               # a callback may queue another
            task.callbacks.pop(0)()
    finally:
        _state.set_tls_excluded(ex)
        _state.set_ag_below(below)
        _current = prev_task
        for n in seen:
            n._buffer = None
        if outer is not None:
            for n, outer_epoch, deps, needed, buf in outer:
                n._epoch, n._deps, n._needed, n._buffer = outer_epoch, deps, needed, buf
    if accumulate:
        for i in range(len(inputs)):          # backward(inputs=[non-leaf]) fills its .grad
            t = <TensorBase>inputs[i]
            if t._grad_fn is not None and captured[i] is not None:
                g = detach_c(<TensorBase>captured[i], False)
                t._grad = g.clone() if t._grad is None else t._grad + g
    else:
        for i in range(len(inputs)):
            if captured[i] is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
    return captured


def _will_execute(Node n):
    """Whether the backward pass running now will run ``n`` (False outside backward): what
    autograd.graph.register_multi_grad_hook counts its tensors with."""
    if _current is None:
        return False
    cdef GraphTask task = <GraphTask>_current
    return n._epoch == task.epoch and (not task.pruned or n._needed)


def _current_pass():
    """The number of the backward pass running now (None outside backward)."""
    return None if _current is None else (<GraphTask>_current).epoch


cdef object hooked(object fn, object g):
    """Tensor hook ``fn`` on gradient g: its result (g when it returns None), which must
    keep g's size and dtype, as PyTorch checks."""
    r = fn(g)
    if r is None:
        return g
    if not isinstance(r, TensorBase):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    cdef TensorBase a = <TensorBase>r, b = <TensorBase>g
    if a._ndim != b._ndim or memcmp(a._sizes, b._sizes, a._ndim * sizeof(int64_t)):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was "
                           f"{g.type()} got {r.type()})")
    return r


cdef str _hook_name(object fn):
    return getattr(fn, "__name__", type(fn).__name__)


cdef int run_node(Node n, dict targets, list captured, bint keep_graph,
                  bint accumulate, set stop) except -1:
    buf = n._buffer
    if buf is None:
        return 0
    n._buffer = None
    cdef bint capture = bool(targets)
    if capture and not n._needed:
        return 0
    cdef int nr
    cdef TensorBase t
    # tensor hooks (Tensor.register_hook), then retain_grad, then the node's pre-hooks
    if isinstance(n, AccumulateGrad):
        t = (<AccumulateGrad>n).variable
        if t._ag is not None and buf[0] is not None:
            for fn in list((<AutogradMeta>t._ag).hooks.values()):
                buf[0] = hooked(fn, buf[0])
    elif n._tensor_hooks:
        for nr, fn in list(n._tensor_hooks.values()):
            if buf[nr] is not None:
                buf[nr] = hooked(fn, buf[nr])
    if n._retain:
        for nr, ref in n._retain:
            t = ref()
            if t is not None and buf[nr] is not None:
                g = detach_c(<TensorBase>buf[nr], False)
                t._grad = g.clone() if t._grad is None else t._grad + g
    if capture:
        for nr in range(len(buf)):
            for k in targets.get((id(n), nr), ()):
                captured[k] = buf[nr]
        if id(n) in stop and not isinstance(n, AccumulateGrad):
            return 0
    grads = tuple(buf)
    del buf
    if n._pre_hooks:
        for fn in list(n._pre_hooks.values()):
            r = fn(grads)
            if r is not None:
                grads = tuple(r)
    if isinstance(n, AccumulateGrad):
        if accumulate and (not capture or (id(n), 0) in targets):
            n.apply(grads)
        return 0
    try:
        out = n.apply(grads)
    except Exception as exc:
        if n._trace is not None:
            import warnings
            warnings.warn(f"Error detected in {n.name()}. Traceback of forward call that "
                          f"caused the error:\n{n._trace}", RuntimeWarning, stacklevel=2)
        raise
    if n._hooks:
        for fn in list(n._hooks.values()):
            r = fn(out, grads)
            if r is not None:
                out = tuple(r)
    if _anomaly and _anomaly_nan:
        check_nan(n, out)
    if not keep_graph:
        n.release()
    cdef Node m
    cdef Py_ssize_t i
    for i in range(min(len(out), len(n.next_edges))):
        e = n.next_edges[i]
        g = out[i]
        if e is None or g is None:
            continue
        m = <Node>e[0]
        if capture and not m._needed:
            continue
        if m._buffer is None:
            m._buffer = [None] * m.num_outputs
        _add_grad(m._buffer, e[1], g)
    return 0


cdef int check_nan(Node n, tuple out) except -1:
    for i, g in enumerate(out):
        if isinstance(g, TensorBase) and (<TensorBase>g)._dtype.is_floating_point \
                and bool((g != g).any()):
            msg = f"Function '{n.name()}' returned nan values in its {i}th output."
            if n._trace is not None:
                msg += f"\nTraceback of the forward call that caused the error:\n{n._trace}"
            raise RuntimeError(msg)
    return 0


def _reaches_other_leaves(tuple tensors, tuple inputs):
    """Whether the graph behind ``tensors`` leads to a tensor that requires grad other than
    ``inputs``: an enclosing differentiation (a closure's parameter, an outer grad's input)
    then needs the gradients to be recorded (ember.func.grad's create_graph)."""
    cdef Node n, m
    own = set()
    for t in inputs:
        e = edge_of(<TensorBase>t)
        if e is not None and isinstance(e[0], AccumulateGrad):
            own.add(id(e[0]))
    stack = []
    seen = set()
    for t in tensors:
        e = edge_of(<TensorBase>t) if isinstance(t, TensorBase) else None
        if e is not None and id(e[0]) not in seen:
            seen.add(id(e[0]))
            stack.append(e[0])
    while stack:
        n = <Node>stack.pop()
        if isinstance(n, AccumulateGrad) and id(n) not in own:
            return True
        for e in n.next_edges:
            if e is not None and id(e[0]) not in seen:
                seen.add(id(e[0]))
                stack.append(e[0])
    return False
