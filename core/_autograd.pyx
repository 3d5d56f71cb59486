"""The autograd engine: graph nodes, saved tensors, the Autograd dispatch kernel and the
backward pass.

* Recording.  A tensor carries the Autograd dispatch key exactly while it requires grad,
  so an op reaches `AutogradKernel` only when one of its inputs does.  The kernel runs the
  op again below Autograd (the key excluded), then records an `OpNode` holding the op's
  derivative formula (next to the op's definition in the core) and what it saved.
* In-place ops rebase the written tensor's history onto the new node; on a view they
  rebase the view's base through `CopySlices` (PyTorch's scheme).  Saved tensors remember
  their version and refuse to unpack after an in-place write.
* Backward runs nodes in a topological order found without recursion (a 100k-node chain
  is fine); gradients flowing into a node are summed; leaves accumulate into `.grad`.
"""
cimport cython
from cpython.ref cimport Py_DECREF, PyObject
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcmp

from ember.core cimport _state
from ember.core._dispatch cimport (
    DispatchKey, Op, SAVE_INPUTS, SAVE_RESULT, SAVE_FIRST, WRITES_SELF, SELF_FOR_OTHERS,
    OTHER_FOR_SELF,
)
from ember.core._tensor cimport (
    TensorBase,
    detach_c,
    func_level_c,
    inference_mode_c,
    refuse_write,
    report_side_effect,
    set_inference_mode_c,
    sum_to,
)

import weakref
from collections import OrderedDict

from ember.core.hooks import RemovableHandle

from ember.core import _dispatch
from ember.core import _tensor as _T

cdef uint64_t AG = <uint64_t>1 << DispatchKey.Autograd


# --- grad modes (thread-local: the Autograd key in this thread's excluded set) -----------

cdef inline bint grad_enabled() noexcept:
    return not (_state.tls_excluded() & AG)


def is_grad_enabled():
    """True unless gradient recording is turned off in this thread (no_grad)."""
    return grad_enabled()


def _set_grad_enabled(bint mode):
    """Turn recording on or off in this thread; returns the previous mode."""
    cdef bint prev = grad_enabled()
    cdef uint64_t ex = _state.tls_excluded()
    _state.set_tls_excluded(ex & ~AG if mode else ex | AG)
    return prev


def is_inference_mode_enabled():
    return inference_mode_c()


def _set_inference_mode(bint mode):
    cdef bint prev = inference_mode_c()
    set_inference_mode_c(mode)
    return prev


cdef bint _anomaly = False          # record each node's forward stack
cdef bint _anomaly_nan = True       # and, while on, fail on a NaN gradient


def _set_anomaly_enabled(bint mode, bint check_nan=True):
    """Anomaly mode on or off, and whether it checks gradients for NaN; returns the previous
    (mode, check_nan)."""
    global _anomaly, _anomaly_nan
    prev = (_anomaly, _anomaly_nan)
    _anomaly, _anomaly_nan = mode, check_nan
    return prev


def is_anomaly_enabled():
    return _anomaly


def is_anomaly_check_nan_enabled():
    return _anomaly and _anomaly_nan


# --- per-tensor metadata beyond the fields on TensorBase -----------------------------

cdef class AutogradMeta:
    cdef object acc_ref          # weakref to this leaf's AccumulateGrad
    cdef object hooks            # Tensor.register_hook on a leaf: {handle id: fn}
    cdef object post_acc_hooks   # register_post_accumulate_grad_hook: {handle id: fn}
    cdef bint retains_grad
    cdef int64_t view_version    # a view's version when its grad_fn was set (-1: none)


cdef AutogradMeta meta_of(TensorBase t):
    cdef AutogradMeta m
    if t._ag is None:
        m = AutogradMeta.__new__(AutogradMeta)
        m.hooks = OrderedDict()
        m.post_acc_hooks = OrderedDict()
        m.view_version = -1
        t._ag = m
    return <AutogradMeta>t._ag


cdef inline bint requires(object x) noexcept:
    return isinstance(x, TensorBase) and ((<TensorBase>x)._keys & AG) != 0


cdef object edge_of(TensorBase t):
    """(node, input_nr) the gradient of t flows into, or None if t does not require grad."""
    if not (t._keys & AG):
        return None
    if t._grad_fn is not None:
        if t._base_ref is not None and t._ag is not None \
                and (<AutogradMeta>t._ag).view_version >= 0 \
                and t.version().value != (<AutogradMeta>t._ag).view_version:
            who = multi_view_output(t)
            if who is not None:
                raise RuntimeError(f"{who} is a view and its base or another view of its "
                                   f"base has been modified inplace. {_MULTI_VIEW}")
            refresh_view(t)            # the base was written through another view since
        return (t._grad_fn, t._output_nr)
    return (accumulator(t), 0)


# ops returning several views of one input (split, unbind): as in PyTorch, their outputs
# may not be written in place, nor used after their base was (the one node that made them
# cannot be rebased for a single output)
_MULTI_VIEW_OPS = frozenset(["split", "split_with_sizes", "unbind"])
_MULTI_VIEW = ("This view is the output of a function that returns multiple views. Such "
               "functions do not allow the output views to be modified inplace. You should "
               "replace the inplace operation by an out-of-place one.")


cdef object multi_view_output(TensorBase t):
    """"Output <nr> of <Op>" when t is a view made by a multi-output view op, else None."""
    g = t._grad_fn
    if type(g) is OpNode and t._base_ref is not None \
            and (<OpNode>g).op.name in _MULTI_VIEW_OPS:
        return f"Output {t._output_nr} of {(<OpNode>g).name()[:-len('Backward0')]}"
    return None


cdef void refresh_view(TensorBase t):
    """A view's history, rebuilt from its base's current one (PyTorch regenerates a view's
    grad_fn the same way when the shared version counter moved)."""
    cdef TensorBase base = <TensorBase>t._base_ref
    cdef ViewOfBase v = ViewOfBase.__new__(ViewOfBase)
    v.base_geom, v.view_geom = geometry(base), geometry(t)
    v.next_edges = (edge_of(base),)
    v.num_outputs = 1
    t._grad_fn = v
    t._output_nr = 0
    meta_of(t).view_version = t.version().value


cdef AccumulateGrad accumulator(TensorBase t):
    cdef AutogradMeta m = meta_of(t)
    acc = m.acc_ref() if m.acc_ref is not None else None
    if acc is None:
        acc = AccumulateGrad.__new__(AccumulateGrad)
        (<AccumulateGrad>acc).variable = t
        (<AccumulateGrad>acc).next_edges = ()
        (<AccumulateGrad>acc).num_outputs = 1
        m.acc_ref = weakref.ref(acc)
    return <AccumulateGrad>acc


cdef object _current = None      # the GraphTask running now


def _queue_callback(callback):
    """Run ``callback()`` when the backward pass running now has run its nodes (PyTorch's
    ``Variable._execution_engine.queue_callback``)."""
    if _current is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    (<GraphTask>_current).callbacks.append(callback)


cdef class GraphTask:
    """State of one backward run (runs nest: checkpoint's recomputation inside a node)."""
    cdef set foreign                 # ids of gradients the caller handed in
    cdef set stolen                  # ids of gradients already moved into some .grad
    cdef int64_t epoch               # the pass's mark on the nodes it reaches
    cdef bint pruned                 # only nodes leading to `inputs` run (autograd.grad)
    cdef list callbacks              # queue_callback's functions, run when the pass ends

    cdef bint may_steal(self, TensorBase g):
        """A gradient can become a leaf's .grad without a copy when nobody else holds it:
        not the caller's, not a view, not given to another leaf already."""
        if id(g) in self.foreign or id(g) in self.stolen or g._base_ref is not None \
                or not g.contiguous_c():
            return False
        self.stolen.add(id(g))
        return True



# --- saved tensors -------------------------------------------------------------------

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


# saved-tensor hooks (autograd.graph.saved_tensors_hooks): a stack of (pack, unpack) pairs;
# the innermost pair packs every tensor saved while it is active.  A message set by
# disable_saved_tensors_hooks makes registering hooks an error.
_saved_hooks = []
_saved_hooks_disabled = [None]


def _push_saved_hooks(pack, unpack):
    if _saved_hooks_disabled[0] is not None:
        raise RuntimeError(_saved_hooks_disabled[0])
    _saved_hooks.append((pack, unpack))


def _pop_saved_hooks():
    _saved_hooks.pop()


def _disable_saved_hooks(message):
    """Set (or, with None, clear) the message; returns the previous one."""
    prev = _saved_hooks_disabled[0]
    _saved_hooks_disabled[0] = message
    return prev


cdef class SavedTensor:
    """A tensor a formula reads in backward, with the version it had when saved.  An op's
    own output is kept without its grad_fn (no tensor <-> node cycle) and gets the node
    back on unpack, so higher-order gradients flow through it.  Under saved-tensor hooks
    the tensor is kept as what the pack hook returned, and unpack hands that back."""
    cdef TensorBase data
    cdef int64_t version
    cdef int output_nr           # -1: an input
    cdef bint was_leaf_grad
    cdef object packed           # the pack hook's result (data is then None)
    cdef object unpack_hook
    cdef tuple spec              # (shape, dtype, device) of a packed tensor

    cdef object unpack(self, Node owner):
        cdef TensorBase r
        if self.unpack_hook is not None:
            value = self.unpack_hook(self.packed)
            if not isinstance(value, TensorBase):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor "
                                f"but got result of type {type(value).__name__}")
            if self.output_nr < 0 or not grad_enabled():
                return value
            r = detach_c(<TensorBase>value, True)
            r._grad_fn = owner
            r._output_nr = self.output_nr
            r._keys |= AG
            return r
        if self.data is None:
            raise RuntimeError(_FREED)
        cdef int64_t now = self.data.version().value
        if now != self.version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{self.data.type()} {list(self.data.shape)}], which "
                f"is output {max(self.output_nr, 0)} of {owner.name()}, is at version {now}; "
                f"expected version {self.version} instead. Hint: the backtrace further above "
                f"can show the operation that failed to compute its gradient.")
        if self.data._fw:                 # an output's tangents (forward-over-reverse)
            self.data._keys |= FW
        if self.output_nr < 0 or not grad_enabled():
            return self.data
        r = detach_c(self.data, True)
        r._grad_fn = owner
        r._output_nr = self.output_nr
        r._keys |= AG
        if self.data._fw:
            r._fw = self.data._fw
            r._keys |= FW
        return r


cdef SavedTensor save(TensorBase t, int output_nr):
    if t._inference and not inference_mode_c():
        raise RuntimeError("Inference tensors cannot be saved for backward. To work around "
                           "you can make a clone to get a normal tensor and use it in "
                           "autograd.")
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    s.version = t.version().value
    s.output_nr = output_nr
    if _saved_hooks:
        pack, unpack = _saved_hooks[len(_saved_hooks) - 1]
        # tensors saved by ops inside the pack hook are saved plainly (no recursion)
        held = _saved_hooks[:]
        del _saved_hooks[:]
        try:
            s.packed = pack(detach_c(t, True) if output_nr >= 0 else t)
        finally:
            _saved_hooks[:] = held
        s.unpack_hook = unpack
        s.spec = (t.shape, t._dtype, t._device)
        return s
    s.data = detach_c(t, True) if output_nr >= 0 else t
    if output_nr >= 0 and _n_dual:
        # the forward AD kernel gives the output its tangents after this: share the dict
        if t._fw is None:
            t._fw = {}
        s.data._fw = t._fw
    return s


# --- nodes ---------------------------------------------------------------------------

@cython.trashcan(True)
cdef class Node:
    """A function of the backward graph: gradients of its outputs in, of its inputs out."""
    cdef public tuple next_edges      # per input: (Node, input_nr) or None
    cdef public int num_outputs
    # hooks, {handle id: hook} (RemovableHandle removes them)
    cdef object _pre_hooks
    cdef object _hooks
    cdef object _tensor_hooks         # {id: (output_nr, fn)} from Tensor.register_hook
    cdef list _retain                 # [(output_nr, weakref)] from retain_grad
    cdef dict _metadata
    cdef public object _trace         # the forward stack, in anomaly mode
    # engine scratch
    cdef list _buffer
    cdef int _deps
    cdef int64_t _epoch
    cdef bint _needed
    cdef object __weakref__

    cpdef tuple apply(self, tuple grads):
        raise NotImplementedError(f"{self.name()}.apply is not implemented")

    cpdef release(self):
        pass

    def __call__(self, *grads):
        return self.apply(grads)

    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple(e if e is not None else (None, 0) for e in self.next_edges)

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = OrderedDict()
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        return add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, int output_nr, fn):
        if self._tensor_hooks is None:
            self._tensor_hooks = OrderedDict()
        return add_hook(self._tensor_hooks, (output_nr, fn))

    def _retain_output(self, int output_nr, TensorBase t):
        if self._retain is None:
            self._retain = []
        self._retain.append((output_nr, weakref.ref(t)))

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


cdef object add_hook(object hooks, object entry):
    """Store `entry` in the ordered dict `hooks`; the handle's remove() takes it out."""
    h = RemovableHandle(hooks)
    hooks[h.id] = entry
    return h


cdef class AccumulateGrad(Node):
    """The sink of a leaf: adds the incoming gradient into `variable.grad`."""
    cdef public TensorBase variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    cpdef tuple apply(self, tuple grads):
        g = grads[0]
        if g is None:
            return ()
        cdef TensorBase t = self.variable
        cdef TensorBase gt = <TensorBase>g
        # PyTorch's layout contract: a contiguous leaf gets a contiguous .grad (a weight's
        # gradient arriving through its transposed view is copied), so optimizers and fused
        # steps see the parameter's layout
        cdef bint relayout = t.contiguous_c() and not gt.contiguous_c()
        if t._grad is None:
            if grad_enabled():                      # create_graph: keep g's history
                t._grad = g.contiguous() if relayout else \
                    (g if gt._base_ref is None else g.clone())   # .grad owns its memory
            elif relayout:
                t._grad = detach_c(gt, False).contiguous()
            elif _current is not None and (<GraphTask>_current).may_steal(gt):
                t._grad = detach_c(gt, False)
            else:
                t._grad = _T.clone(detach_c(gt, False))
        elif grad_enabled():
            t._grad = t._grad + g
        else:
            t._grad.add_(g)
        if t._ag is not None:
            for fn in list((<AutogradMeta>t._ag).post_acc_hooks.values()):
                if fn(t) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()


cdef class OpNode(Node):
    """The backward of one recorded op: its derivative formula and what it saved.
    Formulas see it as `ctx`: ctx.args (positional arguments, tensors unpacked), ctx.kwargs,
    ctx.result, ctx.needs_input_grad, ctx.shapes."""
    cdef readonly Op op
    cdef object formula
    cdef tuple _args                  # SavedTensor / None (tensor not saved) / plain value
    cdef public dict kwargs
    cdef object _result               # SavedTensor, tuple of them, or None
    cdef tuple _meta                  # per positional arg: (shape, dtype, device) or None
    cdef bint _released

    def name(self):
        return _node_name(self.op.name)

    @property
    def args(self):
        # an op that saves its inputs raises once released even when this call kept none
        # of them (x * 2: PyTorch saves the wrapped 2), as PyTorch's node would
        if self._released and (self.op.derivative[2] & SAVE_INPUTS or any(
                isinstance(a, SavedTensor) or a is _RELEASED for a in self._args)):
            raise RuntimeError(_FREED)
        return tuple((<SavedTensor>a).unpack(self) if isinstance(a, SavedTensor) else a
                     for a in self._args)

    @property
    def result(self):
        r = self._result
        if r is None or r is _RELEASED:
            raise RuntimeError(_FREED if self._released else
                               f"{self.name()}: the op's result was not saved")
        if isinstance(r, tuple):
            return tuple((<SavedTensor>x).unpack(self) if x is not None else None for x in r)
        return (<SavedTensor>r).unpack(self)

    def saved_result(self, int i):
        """Output ``i`` of the op alone.  A formula that reads some outputs of a
        multi-output op unpacks (and version-checks) only those: the user may change the
        others in place (ReLU(inplace=True) on BatchNorm's output)."""
        r = self._result
        if not isinstance(r, tuple):
            return self.result      # one output, or the error saying why none is saved
        x = r[i]
        return (<SavedTensor>x).unpack(self) if x is not None else None

    def nargs(self):
        return len(self._args)

    def arg(self, int i):
        """Positional input ``i`` alone (a saved tensor unpacked and version-checked): a
        formula that reads only some inputs (an index op's indices, not its source) must
        not be refused because another was written in place since."""
        if self._released:
            raise RuntimeError(_FREED)
        a = self._args[i]
        return (<SavedTensor>a).unpack(self) if isinstance(a, SavedTensor) else a

    def saved_geometry(self, int i):
        """(shape, stride, storage offset) of positional input ``i``, which the op saved: a
        view's backward needs where its input lay, not its values, so a later in-place
        write into the input is no error (it was for as_strided's double backward, after
        ``out[1:4] = x`` wrote into an as_strided view of a gradient)."""
        if self._released:
            raise RuntimeError(_FREED)
        cdef SavedTensor s = <SavedTensor>self._args[i]
        if s.unpack_hook is not None or s.data is None:
            t = s.unpack(self)
        else:
            t = s.data
        return tuple(t.shape), t.stride(), t.storage_offset()

    @property
    def needs_input_grad(self):
        return tuple(i < len(self.next_edges) and self.next_edges[i] is not None
                     for i in range(len(self._meta)))

    @property
    def shapes(self):
        return tuple(m[0] if m is not None else None for m in self._meta)

    cpdef tuple apply(self, tuple grads):
        cdef Py_ssize_t n = len(self.next_edges), i
        if self.num_outputs == 1:
            g = grads[0]
        else:
            g = list(grads)
            for i in range(self.num_outputs):
                if g[i] is None:
                    g[i] = self._zero_output(i)
            g = tuple(g)
        res = self.formula(self, g)
        out = [None] * n
        for i in range(min(n, len(res))):
            if self.next_edges[i] is not None and res[i] is not None:
                out[i] = conform(res[i], self._meta[i])
        return tuple(out)

    def _zero_output(self, int i):
        r = self._result[i] if isinstance(self._result, tuple) else None
        if r is None:
            raise RuntimeError(f"{self.name()}: output {i} got no gradient and was not saved")
        if (<SavedTensor>r).data is None and (<SavedTensor>r).spec is not None:
            shape, dt, dev = (<SavedTensor>r).spec
            return _T.zeros(shape, dtype=dt, device=dev)
        return _T.zeros_like((<SavedTensor>r).data)

    cpdef release(self):
        self._released = True
        args = list(self._args)
        for i in range(len(args)):
            if isinstance(args[i], SavedTensor):
                args[i] = _RELEASED
        self._args = tuple(args)
        if self._result is not None:
            self._result = _RELEASED


cdef object _RELEASED = object()
cdef dict _names = {}


cdef str _node_name(str op):
    name = _names.get(op)
    if name is None:
        name = _names[op] = "".join(p.capitalize() for p in op.split("_")) + "Backward0"
    return name


cdef object conform(object g, tuple meta):
    """A formula's gradient for one input, brought to that input's shape, dtype, device."""
    cdef TensorBase t
    if not isinstance(g, TensorBase):
        g = _T.full(meta[0], g, dtype=meta[1], device=meta[2])
    t = <TensorBase>g
    if t.shape != meta[0]:
        t = sum_to(t, meta[0])
    if t._dtype.is_complex and not meta[1].is_complex:
        t = _T._real(t)       # a real input of a complex result: its gradient's real part
    if t._dtype is not meta[1] or t._device != meta[2]:
        t = t.to(device=meta[2], dtype=meta[1])
    return t


cdef class CopySlices(Node):
    """A base tensor's history after an in-place op wrote into one of its views: the
    gradient outside the view passes to the base's old history; inside it goes through
    the in-place op's node (`fn`), whose other inputs keep their edges."""
    cdef Node fn
    cdef tuple base_geom, view_geom

    def name(self):
        return "CopySlices"

    cpdef tuple apply(self, tuple grads):
        g = grads[0]
        if g is None:
            return (None,) * len(self.next_edges)
        buf, base = storage_like(g, self.base_geom, self.view_geom)
        base.copy_(g)
        region = buf.as_strided(*self.view_geom)
        res = self.fn.apply((region.clone(),))
        if len(res) and res[0] is not None:
            region.copy_(res[0])
        else:
            region.zero_()
        return (base,) + tuple(res[1:])

    cpdef release(self):
        self.fn.release()


cdef class ViewOfBase(Node):
    """The history of a view whose base was rebased (CopySlices): its gradient lands in
    the view's region of a zero gradient for the base."""
    cdef tuple base_geom, view_geom

    def name(self):
        return "AsStridedBackward0"

    cpdef tuple apply(self, tuple grads):
        buf, base = storage_like(grads[0], self.base_geom, self.view_geom)
        buf.zero_()
        buf.as_strided(*self.view_geom).copy_(grads[0])
        return (base,)


cdef tuple geometry(TensorBase t):
    return (tuple(t.shape), t.stride(), t._offset)


cdef tuple storage_like(TensorBase g, tuple base_geom, tuple view_geom):
    """A 1-d buffer laid out like the storage the base and its view share, and the base's
    strided view of it."""
    lo = min(base_geom[2], view_geom[2])
    hi = lo
    for sizes, strides, off in (base_geom, view_geom):
        if all(s > 0 for s in sizes):
            hi = max(hi, off + sum((s - 1) * st for s, st in zip(sizes, strides)) + 1)
    buf = _T._zeros_for(g, (hi - lo,))         # batched as g is, inside vmap
    shifted_base = (base_geom[0], base_geom[1], base_geom[2] - lo)
    return buf, buf.as_strided(*shifted_base)


include "_recording.pxi"


include "_engine.pxi"


include "_forward.pxi"


include "_tensor_grad.pxi"
