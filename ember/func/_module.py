"""Modules as functions of their state: functional_call (run a module with given tensors in
place of its parameters and buffers) and stack_module_state (several models' state
stacked, for vmap over an ensemble)."""
from collections.abc import Sequence

from ember.core._autograd import set_requires_grad
from ember.core.shapes import stack

__all__ = ["functional_call", "stack_module_state"]


def _owner(module, name):
    """(the submodule holding ``name``'s last part, that part)."""
    *path, leaf = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, leaf


def _tied_names(module):
    """{name: every name of the same tensor} for parameters and buffers seen twice."""
    by_id = {}
    for getter in (module.named_parameters, module.named_buffers):
        for name, t in getter(remove_duplicate=False):
            by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


def _untie(module, values):
    tied = _tied_names(module)
    out = dict(values)
    for name, value in values.items():
        for other in tied.get(name, ()):
            if other in values and values[other] is not value:
                raise ValueError(f"functional_call got multiple values for keys "
                                 f"{sorted(tied[name])}, which are tied. Consider using "
                                 f"tie_weights=False")
            out[other] = value
    return out


def _check_keys(module, values):
    known = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    known |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    unexpected = sorted(set(values) - known)
    missing = sorted(known - set(values))
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                           + "\n\t".join(msgs))


def _swap(module, values):
    """Put ``values`` in place of the named parameters/buffers (or attributes); returns
    what to restore."""
    saved = []
    for name, value in values.items():
        owner, leaf = _owner(module, name)
        for store in ("_parameters", "_buffers"):
            d = owner.__dict__.get(store)
            if d is not None and leaf in d:
                saved.append((d, leaf, d[leaf]))
                d[leaf] = value
                break
        else:
            saved.append((owner, leaf, owner.__dict__.get(leaf, _MISSING)))
            object.__setattr__(owner, leaf, value)
    return saved


_MISSING = object()


def _restore(saved):
    for holder, leaf, old in reversed(saved):
        if isinstance(holder, dict):
            holder[leaf] = old
        elif old is _MISSING:
            holder.__dict__.pop(leaf, None)
        else:
            object.__setattr__(holder, leaf, old)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a
    dict, or a sequence of dicts with distinct keys, name -> tensor) in place of its
    parameters and buffers for the call; ``tie_weights`` gives tied names one value,
    ``strict`` requires exactly the module's names."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    if tie_weights:
        values = _untie(module, values)
    if strict:
        _check_keys(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = _swap(module, values)
    try:
        return module(*args, **(kwargs or {}))
    finally:
        _restore(saved)


def _stacked_leaf(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    r = stack(list(tensors))
    return set_requires_grad(r.detach()) if grads == {True} else r


def stack_module_state(models):
    """(params, buffers): each name's tensors of every model in ``models`` (modules of one
    class, in one mode) stacked along a new first dim; stacked parameters are new leaves
    that require grad when the models' do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
            {k: _stacked_leaf([b[k] for b in buffers], k) for k in buffers[0]})


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module of ``root`` (itself included) use batch statistics only:
    its ``running_mean``/``running_var``/``num_batches_tracked`` become None and
    ``track_running_stats`` False, in place (vmap over a model then never writes shared
    running statistics from inside a sample).  Returns ``root``."""
    from ember.nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
