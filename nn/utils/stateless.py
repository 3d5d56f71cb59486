"""functional_call (``torch.nn.utils.stateless``): call a module with some of its
parameters and buffers replaced, leaving the module as it was afterwards."""
import contextlib
import warnings

__all__ = ["functional_call"]


def _split(name):
    prefix, _, attr = name.rpartition(".")
    return prefix, attr


def _owner(module, path):
    return module.get_submodule(path) if path else module


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights, strict):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    if tie_weights:
        # a tensor reached under several names (tied weights) takes a value given for any one
        by_id = {}
        for name, t in named.items():
            by_id.setdefault(id(t), []).append(name)
        given = dict(tensors)
        for name, value in list(given.items()):
            if name in named:
                for alias in by_id[id(named[name])]:
                    if alias in given and given[alias] is not value:
                        raise ValueError(f"functional_call got multiple values for keys "
                                         f"['{name}', '{alias}'], which are tied. Consider "
                                         f"using tie_weights=False")
                    given.setdefault(alias, value)
        tensors = given
    if strict:
        missing = sorted(set(named) - set(tensors))
        unexpected = sorted(set(tensors) - set(named))
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                             + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(parts))
    saved = []
    try:
        for name, value in tensors.items():
            path, attr = _split(name)
            owner = _owner(module, path)
            for store in ("_parameters", "_buffers"):
                table = owner.__dict__[store]
                if attr in table:
                    saved.append((table, attr, table[attr]))
                    table[attr] = value
                    break
            else:
                saved.append((owner.__dict__, attr, owner.__dict__.get(attr, _MISSING)))
                owner.__dict__[attr] = value
        yield
    finally:
        for table, attr, old in reversed(saved):
            if old is _MISSING:
                table.pop(attr, None)
            else:
                table[attr] = old


_MISSING = object()


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in the dict
    ``parameters_and_buffers`` replaced by the given tensors for this call only.

    Deprecated (a FutureWarning) as in PyTorch 2.0: :func:`ember.func.functional_call` is
    the drop-in replacement, which also takes a sequence of dicts."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    tensors = {k: parameters_and_buffers[k] for k in parameters_and_buffers.keys()}
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, tensors, tie_weights, strict):
        return module(*args, **kwargs)
