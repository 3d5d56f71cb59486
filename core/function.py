"""ember.autograd.Function: custom ops with a hand-written backward.

``forward(ctx, *args)`` (or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``)
runs with recording off; its outputs become outputs of a graph node whose ``apply`` calls
``backward(ctx, *grad_outputs)``.  The ctx *is* that node, as in PyTorch."""
import functools
import threading

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

# how many custom forwards run on this thread: their no_grad is the Function's own (what
# ember.compile's capture must not take for a user's no_grad)
_forwards = threading.local()


def forwards_running():
    """Whether a custom Function's forward is running on this thread."""
    return getattr(_forwards, "depth", 0) > 0


class FunctionCtx(_ag.Node):
    """The context handed to forward/setup_context and backward (and the graph node)."""

    _saved = None            # SavedTensors, once Function.apply recorded the node
    _to_save = ()
    _forward_saved = ()      # save_for_backward's tensors, as jvp sees them
    _in_jvp = False

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{len(self._to_save)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self):
        if self._in_jvp:          # jvp reads what forward saved (for forward or backward)
            return tuple(getattr(self, "saved_for_forward", None) or self._forward_saved)
        if self._saved is None:
            raise RuntimeError(_ag._FREED)
        return tuple(_ag._unpack(s, self) if s is not None else None for s in self._saved)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def name(self):
        return getattr(self._cls, "_node_name", None) or f"{self._cls.__name__}Backward"

    def apply(self, grads):
        grads = list(grads)
        if self.materialize_grads:
            for i, g in enumerate(grads):
                if g is None and self._out_meta[i] is not None:     # (not a tensor output)
                    shape, dtype, device = self._out_meta[i]
                    grads[i] = _T.zeros(shape, dtype=dtype, device=device)
        res = self._cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_in = len(self._in_meta)
        if len(res) > n_in and all(g is None for g in res[n_in:]):
            res = res[:n_in]                # trailing Nones past the inputs, as PyTorch drops
        if len(res) > n_in or len(res) < n_in and \
                any(m is not None for m in self._in_meta[len(res):]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n_in}, got {len(res)})")
        for i, g in enumerate(res):
            if g is not None and self._in_meta[i] is None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        out = []
        for i, e in enumerate(self.next_edges):
            g = res[i] if i < len(res) else None
            if e is None or g is None:
                out.append(None)
                continue
            meta = self._in_meta[i]
            if not isinstance(g, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            try:
                out.append(_ag._conform(g, meta))
            except RuntimeError:
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                   f"index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(meta[0])}") from None
        return tuple(out)

    def release(self):
        if self._saved is not None:
            for s in self._saved:
                if s is not None:
                    _ag._release(s)
        self._saved = None


class Function:
    """Subclass with static ``forward`` and ``backward``; call ``MyFn.apply(*args)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _run(cls, args, kwargs)[0]

    @classmethod
    def _record(cls, args, kwargs):
        """forward (with every tangent level hidden), and the graph node when an input
        requires grad; returns (output, ctx)."""
        ctx = FunctionCtx()
        ctx._cls, ctx._to_save, ctx._dirty, ctx._non_diff = cls, (), (), ()
        ctx.materialize_grads = True
        ctx.needs_input_grad = tuple(isinstance(a, TensorBase) and a.requires_grad
                                     for a in args)
        recording = _ag.is_grad_enabled() and any(ctx.needs_input_grad)
        edges = [(_ag._edge(a) if isinstance(a, TensorBase) else None) for a in args]
        custom_setup = cls.setup_context is not Function.setup_context
        _forwards.depth = getattr(_forwards, "depth", 0) + 1
        try:
            with no_grad():
                if custom_setup:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            _forwards.depth -= 1
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        ctx._forward_saved = ctx._to_save
        if not recording:
            ctx._saved = None
            return output, ctx
        for t in ctx._dirty:
            if t.requires_grad and t.is_leaf:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
        non_diff = {id(t) for t in ctx._non_diff}
        dirty = {id(t) for t in ctx._dirty}
        inputs = {id(a) for a in args if isinstance(a, TensorBase)}
        result = []
        for i, o in enumerate(outputs):
            if isinstance(o, TensorBase):
                fresh = id(o) not in inputs
                if not fresh and id(o) not in dirty:
                    o = o.view_as(o)                  # an input returned as-is: an alias
                if id(o) not in non_diff and (o.dtype.is_floating_point or
                                              o.dtype.is_complex):
                    _ag._make_result(o, ctx, i, fresh)
            result.append(o)
        ctx._in_meta = tuple((a.shape, a.dtype, a.device) if isinstance(a, TensorBase) else None
                             for a in args)
        ctx._out_meta = tuple((o.shape, o.dtype, o.device) if isinstance(o, TensorBase) else None
                              for o in result)
        last = max((i for i, e in enumerate(edges) if e is not None), default=-1)
        _ag._set_next_edges(ctx, tuple(edges[:last + 1]))
        ctx.num_outputs = len(result)
        out_ids = {id(o): i for i, o in enumerate(result)}
        ctx._saved = tuple(None if t is None else _ag._save(t, out_ids.get(id(t), -1))
                           for t in ctx._to_save)
        # the node keeps its saved tensors only as SavedTensors (outputs without their
        # grad_fn): the raw tuples would hold outputs, which hold ctx
        ctx._to_save, ctx._dirty, ctx._non_diff = (), (), ()
        return (result[0] if single else tuple(result)), ctx


def _run(cls, args, kwargs, outermost=True):
    """Function.apply: the innermost tangent level among the inputs first (forward runs
    with it hidden, then ``jvp`` gives the outputs' tangents at it), down to the recording
    of the backward node.  Returns (output, ctx)."""
    level, batch = _ag._fw_scan(args, kwargs)
    if level < 0 or batch > level:
        output, ctx = cls._record(args, kwargs)
    else:
        output, ctx = _run_jvp(cls, args, kwargs, level)
    if outermost:
        _forget_forward_saved(ctx)
    return output, ctx


def _run_jvp(cls, args, kwargs, level):
    """``_run`` at tangent ``level``: the levels below, then ``jvp`` at this one."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    prev = _ag._fw_ceiling_get()
    _ag._fw_ceiling_set(level)
    try:
        output, ctx = _run(cls, args, kwargs, outermost=False)
        tangents = [(_ag._fw_tangent(a, level) if _ag._fw_tangent(a, level) is not None
                     else _T.zeros_like(a)) if isinstance(a, TensorBase) else None
                    for a in args]
        ctx._in_jvp = True
        try:
            out_t = cls.jvp(ctx, *tangents)
        finally:
            ctx._in_jvp = False
        single = not isinstance(output, tuple)
        outputs = [output] if single else list(output)
        out_t = (out_t,) if single or not isinstance(out_t, (tuple, list)) else tuple(out_t)
        ids = {id(a) for a in args if isinstance(a, TensorBase)}
        for i, (o, t) in enumerate(zip(outputs, out_t)):
            if isinstance(o, TensorBase) and t is not None:
                if id(o) in ids:                 # an input returned as it is: an alias
                    o = outputs[i] = o.view_as(o)
                if tuple(t.shape) != tuple(o.shape):
                    raise RuntimeError(f"Function {cls.__name__}.jvp returned an invalid "
                                       f"tangent at index {i} - got {list(t.shape)} but "
                                       f"expected shape compatible with {list(o.shape)}")
                _ag._fw_attach(o, level, t)
    finally:
        _ag._fw_ceiling_set(prev)
    return (outputs[0] if single else tuple(outputs)), ctx


def _forget_forward_saved(ctx):
    """Drop what forward saved for jvp once every jvp has run (or none will).  Those tensors
    may be the node's own outputs, whose grad_fn is ctx: kept, they would tie each output
    and ctx in a reference cycle that only the garbage collector frees, holding every saved
    buffer (an LSTM layer's gates, ~5 MB a step) until a full collection."""
    ctx._forward_saved = ()
    ctx.__dict__.pop("saved_for_forward", None)


def once_differentiable(fn):
    """Mark a backward as not differentiable itself: it runs with recording off."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper



# Ops PyTorch gives a graph node without a useful derivative.  Their results require grad
# when an input does (scripts test `.requires_grad` and call backward through them), so
# they get a node: zeros for piecewise-constant ops (sign, sgn), an error naming the op for
# ops whose derivative PyTorch leaves unimplemented (heaviside, unique).
_CONSTANT_NODES = {}


def _constant_node(name, implemented):
    key = (name, implemented)
    cls = _CONSTANT_NODES.get(key)
    if cls is None:
        def forward(ctx, fn, *inputs):
            return fn(*inputs)

        def backward(ctx, *grads):
            if not implemented:
                raise RuntimeError(f"derivative for aten::{name} is not implemented")
            return (None, *(None if m is None else _T.zeros(m[0], dtype=m[1], device=m[2])
                            for m in ctx._in_meta[1:]))

        def jvp(ctx, *tangents):
            if not implemented:
                raise NotImplementedError(f"Trying to use forward AD with {name} that does "
                                          f"not support it because it has not been "
                                          f"implemented yet.")
            # piecewise constant: a zero tangent (the ops recorded so have their input's
            # shape: sign, sgn, bernoulli)
            return _T.zeros_like(tangents[1]) if len(tangents) > 1 else None

        title = "".join(part.capitalize() for part in name.split("_"))
        cls = _CONSTANT_NODES[key] = type(title, (Function,), {
            "forward": staticmethod(forward), "backward": staticmethod(backward),
            "jvp": staticmethod(jvp),
            "_node_name": f"{title}Backward0" if implemented else "NotImplemented"})
    return cls


def _recording(inputs):
    return any(_ag._tracked(t) for t in inputs)


def differentiating_backward(*inputs):
    """Whether a backward formula is itself being differentiated, so it must rebuild what
    it derived from its inputs in forward (a saved intermediate is a constant to autograd
    and has no tangent): create_graph records it, or ``inputs`` carry tangents
    (forward-over-reverse: jacfwd(jacrev(f)), hessian)."""
    return _ag.is_grad_enabled() or _ag._fw_scan(inputs)[0] >= 0


def zero_derivative(name, fn, *inputs):
    """``fn(*inputs)``, recorded (when an input requires grad) as op ``name`` whose
    gradient is zero: PyTorch's derivative of piecewise-constant ops such as sign."""
    if _recording(inputs):
        return _constant_node(name, True).apply(fn, *inputs)
    return fn(*inputs)


def without_derivative(name, fn, *inputs):
    """``fn(*inputs)``, recorded as op ``name`` whose backward raises, as PyTorch's
    "derivative for aten::<name> is not implemented" nodes do."""
    if _recording(inputs):
        return _constant_node(name, False).apply(fn, *inputs)
    return fn(*inputs)


# public at the module path PyTorch (and pickles, reprs) know it by
for _name in __all__:
    if hasattr(globals()[_name], "__module__"):
        globals()[_name].__module__ = "ember.autograd.function"
