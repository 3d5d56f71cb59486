"""Activation checkpointing: run a function without keeping its intermediate values and
recompute them during backward (memory for compute)."""
import contextlib
import enum
import warnings

from ember.amp import autocast_mode as _autocast_mode
from ember.autograd import Function, backward, grad
from ember.autograd.grad_mode import enable_grad, is_grad_enabled
from ember.core._autograd import set_requires_grad
from ember.core._tensor import TensorBase
from ember.core.gradients import accumulating

__all__ = ["checkpoint", "checkpoint_sequential"]


def _rng_state():
    from ember.core import _tensor as _T
    return _T._default_generator("cpu").get_state()


def _set_rng_state(state):
    from ember.core import _tensor as _T
    _T._default_generator("cpu").set_state(state)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, fn, preserve_rng, kwargs, *args):
        ctx.fn, ctx.kwargs, ctx.preserve_rng = fn, kwargs, preserve_rng
        ctx.rng = _rng_state() if preserve_rng else None
        ctx.autocast = _autocast_mode._snapshot()      # recomputed under the same autocast
        ctx.positions = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        ctx.others = [None if isinstance(a, TensorBase) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, TensorBase)])
        return fn(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        # Under grad() the inputs' gradients are returned and nothing reaches .grad; under
        # backward() the recomputation's own leaves (parameters the function closes over)
        # accumulate too.  A backward that builds a graph (create_graph=True: grad mode on)
        # recomputes from the inputs themselves, so its gradients reach their history.
        higher_order, fill = is_grad_enabled(), accumulating()
        saved = ctx.saved_tensors
        args = list(ctx.others)
        for i, t in zip(ctx.positions, saved):
            args[i] = (t.view_as(t) if fill else t) if higher_order else \
                set_requires_grad(t.detach(), t.requires_grad)
        if ctx.preserve_rng:
            now = _rng_state()
            _set_rng_state(ctx.rng)
        try:
            with enable_grad(), _autocast_mode._restored(ctx.autocast):
                out = ctx.fn(*args, **ctx.kwargs)
        finally:
            if ctx.preserve_rng:
                _set_rng_state(now)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, TensorBase) and o.requires_grad and g is not None]
        none = (None, None, None)
        if not fill:
            wanted = [a for a in args if isinstance(a, TensorBase) and a.requires_grad]
            found = dict(zip(map(id, wanted), grad(
                [p[0] for p in pairs], wanted, [p[1] for p in pairs],
                create_graph=higher_order, allow_unused=True))) if pairs and wanted else {}
            return none + tuple(found.get(id(a)) for a in args)
        if pairs:
            backward(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs),
                     create_graph=higher_order)
        if higher_order:            # the inner backward reached the inputs through aliases
            return none + (None,) * len(args)
        return none + tuple(a.grad if isinstance(a, TensorBase) else None for a in args)


class _Recompute:
    """One call checkpointed without reentrance: what its forward saved for backward is kept
    as a handle (an index), and the first handle backward unpacks runs the function again,
    from the same inputs and RNG state, collecting what it saves in the same order."""

    def __init__(self, fn, args, kwargs, preserve_rng):
        # the inputs themselves: recomputed with grad on, the saved tensors carry history
        # back to them, so a backward that builds a graph (create_graph) differentiates on
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.rng = _rng_state() if preserve_rng else None
        self.autocast = _autocast_mode._snapshot()
        self.metas = []                 # (shape, dtype) of each tensor the forward saved
        self.values = None

    def pack(self, tensor):
        self.metas.append((tuple(tensor.shape), tensor.dtype))
        return len(self.metas) - 1

    def unpack(self, index):
        if self.values is None:
            self.values = self._recomputed()
        return self.values[index]

    def _recomputed(self):
        from ember.autograd.graph import saved_tensors_hooks
        saved = []

        def keep(tensor):
            saved.append(tensor)
            return len(saved) - 1
        if self.rng is not None:
            now = _rng_state()
            _set_rng_state(self.rng)
        try:
            with saved_tensors_hooks(keep, saved.__getitem__), enable_grad(), \
                    _autocast_mode._restored(self.autocast):
                self.fn(*self.args, **self.kwargs)
        finally:
            if self.rng is not None:
                _set_rng_state(now)
        if len(saved) != len(self.metas):
            raise CheckpointError(
                f"torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during "
                f"forward: {len(self.metas)}\nNumber of tensors saved during recomputation: "
                f"{len(saved)}")
        for k, (t, (shape, dtype)) in enumerate(zip(saved, self.metas)):
            if tuple(t.shape) != shape or t.dtype != dtype:
                raise CheckpointError(
                    f"torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\ntensor at position "
                    f"{k}:\nsaved metadata: {{'shape': {list(shape)}, 'dtype': {dtype}}}\n"
                    f"recomputed metadata: {{'shape': {list(t.shape)}, 'dtype': {t.dtype}}}")
        return saved


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check=None,
               debug=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, keeping only its inputs for backward, where it is run
    again with recording on (the RNG state restored, so dropout masks match).

    ``use_reentrant=True`` (what PyTorch, with a warning, takes when it is not given): one
    graph node whose backward recomputes and differentiates the region; only inputs that
    require grad get gradients, and keyword arguments are refused.  ``False``: the region is
    recorded as usual, but the tensors its ops save are dropped and recomputed when backward
    first needs one, so parameters it closes over get gradients whatever the inputs."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly; without it, use_reentrant=True is used (as PyTorch does), "
                      "which refuses keyword arguments and gives no gradients when no input "
                      "requires grad. use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if is_grad_enabled():
            check_backward_validity(args)
        return _Checkpoint.apply(function, preserve_rng_state, {}, *args)
    if not is_grad_enabled():
        return function(*args, **kwargs)    # nothing will be saved for backward
    from ember.autograd.graph import saved_tensors_hooks
    region = _Recompute(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(region.pack, region.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a sequence of modules/callables) in ``segments`` checkpointed
    chunks."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, (len(functions) + segments - 1) // segments)

    def run(chunk):
        def f(x):
            for fn in chunk:
                x = fn(x)
            return x
        return f

    for start in range(0, len(functions), size):
        input = checkpoint(run(functions[start:start + size]), input,
                           use_reentrant=use_reentrant, **kwargs)
    return input


# -- the rest of torch.utils.checkpoint's API -------------------------------------------------

class CheckpointError(RuntimeError):
    """A checkpointed region recomputed differently from its forward."""


class CheckpointFunction(Function):
    """The reentrant checkpoint as an autograd.Function: ``CheckpointFunction.apply(
    run_function, preserve_rng_state, *args)``."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        return _Checkpoint.forward(ctx, run_function, preserve_rng_state, {}, *args)

    @staticmethod
    def backward(ctx, *grads):
        return _Checkpoint.backward(ctx, *grads)[1:]


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's outputs."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function learns: whether it runs in recompute."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


# ops whose outputs selective checkpointing never caches (views and metadata)
SAC_IGNORED_OPS = {"detach", "alias", "lift_fresh", "size", "stride", "storage_offset",
                   "numel", "dim", "is_contiguous", "sym_size", "sym_stride",
                   "sym_numel", "sym_storage_offset", "record_stream", "empty_like",
                   "_has_compatible_shallow_copy_type"}


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """(forward context, recompute context) for ``checkpoint(..., context_fn=...)`` from a
    policy function ``fn(ctx, op, *args, **kwargs) -> CheckpointPolicy`` or a list of ops to
    save.  ember's checkpoint recomputes every op of the region in backward (the values and
    gradients are those of any policy; only the memory/compute trade-off differs)."""
    if isinstance(policy_fn_or_list, list):
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else \
                CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return _PolicyContext(policy_fn, False), _PolicyContext(policy_fn, True)


class _PolicyContext:
    def __init__(self, policy_fn, is_recompute):
        self.policy_fn = policy_fn
        self.ctx = SelectiveCheckpointContext(is_recompute=is_recompute)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def noop_context_fn():
    """The default ``context_fn``: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def check_backward_validity(inputs):
    """Warn when no tensor of ``inputs`` requires grad (the region would get none)."""
    if not any(i.requires_grad for i in inputs if isinstance(i, TensorBase)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def detach_variable(inputs):
    """The tensors of the tuple ``inputs`` detached, keeping their requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for i in inputs:
        if isinstance(i, TensorBase):
            x = i.detach()
            x.requires_grad = i.requires_grad
            out.append(x)
        else:
            out.append(i)
    return tuple(out)


def get_device_states(*args):
    """(device indices, RNG states) of the accelerator devices the tensors in ``args`` are
    on (empty without such tensors)."""
    import ember
    devices = sorted({a.device.index or 0 for a in args
                      if isinstance(a, TensorBase) and a.device.type not in ("cpu", "meta")})
    states = []
    for d in devices:
        module = ember.get_device_module(next(
            a.device.type for a in args if isinstance(a, TensorBase)
            and a.device.type not in ("cpu", "meta")))
        states.append(module.get_rng_state(d))
    return devices, states


def set_device_states(devices, states, *, device_type=None):
    """Restore the RNG states ``get_device_states`` returned."""
    import ember
    if not devices:
        return
    module = ember.get_device_module(device_type or "cuda")
    for d, s in zip(devices, states):
        module.set_rng_state(s, d)


_debug = [False]
_early_stop = [True]


def set_checkpoint_debug_enabled(enabled):
    """Context manager (and setting) for checkpoint's debug mode; None restores the
    default."""
    return _Setting(_debug, False if enabled is None else bool(enabled))


def set_checkpoint_early_stop(enable):
    """Context manager: whether recompute stops once the saved tensors are rebuilt (ember
    recomputes the whole region either way)."""
    return _Setting(_early_stop, bool(enable))


class _Setting(contextlib.ContextDecorator):
    def __init__(self, cell, value):
        self.cell, self.value = cell, value
        self.prev = cell[0]
        cell[0] = value

    def __enter__(self):
        self.cell[0] = self.value
        return self

    def __exit__(self, *exc):
        self.cell[0] = self.prev
        return False


class GraphExecGroup:
    """A context in which checkpointed regions reached by several backward calls recompute
    at most once (ember recomputes per backward call; the group is accepted)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


__all__ += ["CheckpointError", "CheckpointFunction", "CheckpointPolicy", "GraphExecGroup",
            "SAC_IGNORED_OPS", "SelectiveCheckpointContext", "check_backward_validity",
            "create_selective_checkpoint_contexts", "detach_variable", "get_device_states",
            "noop_context_fn", "set_checkpoint_debug_enabled", "set_checkpoint_early_stop",
            "set_device_states"]
