"""ember.autograd.graph (``torch.autograd.graph``): the backward graph's nodes and edges,
hooks on saved tensors (pack on save, unpack in backward: save_on_cpu, offloading, ...),
and hooks over several tensors' gradients."""
import contextlib
import threading
from collections import namedtuple

from ember.core import _autograd as _ag
from ember.core import _tensor as _T

__all__ = ["GradientEdge", "Node", "allow_mutation_on_saved_tensors",
           "disable_saved_tensors_hooks", "get_gradient_edge", "increment_version",
           "register_multi_grad_hook", "region_activation_memory_budget", "save_on_cpu",
           "saved_tensors_hooks", "set_override_stale_capture_stream",
           "set_warn_on_accumulate_grad_stream_mismatch"]

Node = _ag.Node

GradientEdge = namedtuple("GradientEdge", ["node", "output_nr", "ownership_token"],
                          defaults=(None,))
GradientEdge.__doc__ = """Where a tensor's gradient is computed: a node of the backward graph
and which of its outputs (``get_gradient_edge(tensor)``)."""


def get_gradient_edge(tensor):
    """The GradientEdge of ``tensor``: its grad_fn and output number, or its gradient
    accumulator for a leaf that requires grad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    if tensor.grad_fn is None:
        return GradientEdge(_ag._grad_accumulator(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor.output_nr)


def increment_version(tensor):
    """Count an in-place write to ``tensor`` (or each tensor of an iterable) that autograd
    did not see, so that saved copies of it are known stale."""
    tensors = (tensor,) if isinstance(tensor, _T.TensorBase) else tensor
    for t in tensors:
        _T._bump_version(t)


class saved_tensors_hooks:
    """Within the block, every tensor an op saves for backward is stored as
    ``pack_hook(tensor)`` and handed back in backward as ``unpack_hook(packed)``."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _ag._push_saved_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _ag._pop_saved_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to CPU memory (``pin_memory`` accepted) and come back to their
    device in backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.device, tensor.cpu() if tensor.device.type != "cpu" else \
                tensor.clone()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)
        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within the block, installing saved-tensor hooks raises RuntimeError(error_message)."""
    prev = _ag._disable_saved_hooks(error_message)
    try:
        yield
    finally:
        _ag._disable_saved_hooks(prev)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Within the block, a tensor saved for backward may be modified in place: it is
    cloned when saved, so backward uses the values it had."""
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        yield


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass over ``tensors``: with mode 'all', ``fn(grads)``
    after the gradients of all of them that the pass reaches are computed (None for the
    others); with mode 'any', ``fn(grad)`` with the first one computed."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = list(tensors)
    lock = threading.Lock()
    state = {"pass": None, "grads": None, "seen": 0, "expected": 0}

    def node_of(t):
        return t.grad_fn if t.grad_fn is not None else _ag._grad_accumulator(t)

    def make(i):
        def hook(grad):
            with lock:
                current = _ag._current_pass()
                new_pass = current is None or state["pass"] != current
                if new_pass:
                    state["pass"], state["grads"], state["seen"] = current, \
                        [None] * len(tensors), 0
                if mode == "any":
                    if new_pass:
                        fn(grad)
                    return None
                if new_pass:
                    state["expected"] = sum(1 for t in tensors if t.requires_grad and (
                        current is None or _ag._will_execute(node_of(t))))
                state["grads"][i] = grad
                state["seen"] += 1
                if state["seen"] >= state["expected"]:
                    grads = state["grads"]
                    state["grads"], state["seen"] = [None] * len(tensors), 0
                    fn(grads)
            return None
        return hook
    handles = [t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)


class _MultiHandle:
    """Removes the per-tensor hooks of register_multi_grad_hook together."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


@contextlib.contextmanager
def region_activation_memory_budget(budget):
    """A memory budget for activation checkpointing policies in the region (ember's eager
    mode keeps what autograd saves; the budget is recorded for compiled regions)."""
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"budget must be in [0, 1], got {budget}")
    yield


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """Warn when a gradient is accumulated on another stream than its producer's (ember runs
    one stream per device: nothing to warn about)."""


def set_override_stale_capture_stream(enabled):
    """A CUDA-graph capture setting; ember has no stream capture."""
