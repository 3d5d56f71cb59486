"""Flattening call arguments and results into leaves and a structure spec (tuples, lists,
dicts and namedtuples; everything else is a leaf)."""

__all__ = ["spec_str", "tree_flatten", "tree_unflatten"]


def tree_flatten(tree):
    """(leaves, spec): ``spec`` is hashable and compares equal for equal structures."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves):
    t = type(x)
    if t is tuple or t is list or (issubclass(t, tuple) and hasattr(t, "_fields")):
        return (t, tuple([_flatten(v, leaves) for v in x]))     # a list: no generator frame
    if t is dict:
        keys = tuple(x)
        return (dict, keys, tuple([_flatten(x[k], leaves) for k in keys]))
    leaves.append(x)
    return None


def tree_unflatten(leaves, spec):
    """The structure ``spec`` describes, holding ``leaves`` in order."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec is None:
        return next(it)
    t = spec[0]
    if t is dict:
        return {k: _build(s, it) for k, s in zip(spec[1], spec[2])}
    items = [_build(s, it) for s in spec[1]]
    if t is tuple or t is list:
        return t(items)
    return t(*items)


def spec_str(spec):
    """A readable form of ``spec``, as PyTorch prints its TreeSpecs: ``*`` for a leaf."""
    if spec is None:
        return "*"
    if spec[0] is dict:
        inner = ", ".join(f"{k!r}: {spec_str(s)}" for k, s in zip(spec[1], spec[2]))
        return f"TreeSpec(dict, {list(spec[1])}, [{inner}])"
    inner = ", ".join(spec_str(s) for s in spec[1])
    return f"TreeSpec({spec[0].__name__}, None, [{inner}])"
