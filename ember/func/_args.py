"""What the transforms share: argnums (PyTorch's checks and messages), the inputs a
reverse-mode transform differentiates with respect to, and the checks of a function's
outputs."""
from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._errors import _transform_arg_message
from ember.core._tensor import TensorBase
from ember.func import _levels
from ember.func._batching._util import unwrap, wrap
from ember.func._pytree import tree_flatten

__all__ = ["check_aux", "check_outputs", "diff_alias", "keep", "outer_tracked", "replace_args",
           "slice_argnums", "transform_level"]


def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def slice_argnums(args, argnums):
    """(args[argnums] (a tuple for a tuple of argnums), argnums made non-negative)."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        a = _wrap_argnum(argnums, len(args))
        return args[a], a
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    wrapped = tuple(_wrap_argnum(a, len(args)) for a in argnums)
    return tuple(args[a] for a in wrapped), wrapped


def replace_args(args, new, argnums):
    """args with args[argnums] replaced by ``new`` (one value, or a tuple for a tuple)."""
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


class transform_level:
    """Context manager: the level of a grad, vjp or jvp while its function runs.  In it,
    PyTorch's rule holds: the function writes in place only into tensors made while it runs
    (core/_tensor_alloc.pxi) - and into its inputs, the tensors of ``inputs`` (pytrees;
    vmap wrappers with their physical tensors), which count as made in it until it ends."""

    __slots__ = ("inputs", "level", "previous", "saved")

    def __init__(self, *inputs):
        self.inputs = inputs

    def __enter__(self):
        self.level, self.previous = _T._enter_func_level()
        self.saved = []
        for t in tree_flatten(self.inputs)[0]:
            while isinstance(t, TensorBase):
                self.saved.append((t, _T._tensor_level(t)))
                _T._set_tensor_level(t, self.level)
                b = _T._batch_level(t)
                t = None if b is None else b.value
        return self

    def __exit__(self, *exc):
        for t, level in reversed(self.saved):
            _T._set_tensor_level(t, level)
        _T._exit_func_level(self.previous)


def diff_alias(x):
    """A tensor equal to ``x`` that a reverse-mode transform differentiates with respect to:
    an alias requiring grad that keeps x's place in an enclosing differentiation (its
    history, its tangents, its vmap batch).  Inside vmap, an input shared by the samples
    becomes a wrapper of the innermost vmap (its value expanded, no copy), so the graph is
    recorded per sample and its gradient is per sample, as functorch's levels give -
    unless a newer transform (a jvp inside the vmap) already holds it."""
    if not isinstance(x, TensorBase):
        raise ValueError(_transform_arg_message(x))
    if x.requires_grad:
        return x.view_as(x)
    v = _levels.current()
    if v is not None and not unwrap(x, v.level)[1] and _ag._fw_scan((x,))[0] < v.level:
        # the expand runs on x itself: its tangents (an enclosing jvp's) go with the value
        return _ag.set_requires_grad(wrap(x.unsqueeze(0).expand((v.size,) + tuple(x.shape)),
                                          v.level))
    b = _T._batch_level(x)
    if b is not None:
        # a new leaf of the wrapper's level around the same physical tensor: a detach would
        # run on the physical one too and cut it from an enclosing differentiation outside
        # the vmap (vmap(grad(f))(x) with x requiring grad)
        y = wrap(b.value, b.level)
    else:
        y = x.detach()
    _ag._fw_copy_tangents(x, y)
    return _ag.set_requires_grad(y)


def _physically_tracked(t):
    """Whether a vmap wrapper's physical tensor (at any level below it) has history that
    an enclosing differentiation outside the vmap tracks."""
    b = _T._batch_level(t) if isinstance(t, TensorBase) else None
    while b is not None:
        t = b.value
        if t.requires_grad:
            return True
        b = _T._batch_level(t)
    return False


def outer_tracked(outputs, inputs):
    """Whether an enclosing differentiation needs a transform's gradients recorded: the
    graph behind ``outputs`` reaches a tensor requiring grad other than ``inputs`` (a
    closure's parameter, an outer grad's input), or, inside vmap, the outputs' physical
    tensors have history (a batched input requiring grad outside the vmap)."""
    return _ag._reaches_other_leaves(outputs, inputs) or \
        any(_physically_tracked(o) for o in outputs)


def keep(x, tracked):
    """A transform's result for the caller: as it is when an enclosing differentiation
    needs its history (``tracked``), else without this transform's (tangents kept)."""
    if tracked or not isinstance(x, TensorBase) or not x.requires_grad:
        return x
    y = x.detach()
    _ag._fw_copy_tangents(x, y)
    return y


def check_aux(aux):
    """torch.func's check of a has_aux function's auxiliary output: tensors only (in any
    containers)."""
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, TensorBase):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return aux


def check_outputs(flat, api):
    """PyTorch's checks of a differentiated function's (flattened) outputs."""
    if (len(flat) == 1 and flat[0] is None) or len(flat) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {flat})")
    for o in flat:
        if not isinstance(o, TensorBase):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
