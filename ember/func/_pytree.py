"""Pytrees for the function transforms: nested tuples, lists, dicts and namedtuples of
leaves, flattened to a list and a TreeSpec (the structure) as torch.utils._pytree does."""
from collections import OrderedDict

__all__ = ["TreeSpec", "broadcast_prefix", "tree_flatten", "tree_map", "tree_unflatten"]


class TreeSpec:
    """The structure of a pytree: a node type, its context (dict keys, namedtuple class)
    and its children's specs; a leaf has type None."""

    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, type, context, children):
        self.type, self.context, self.children = type, context, children
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in children)

    def is_leaf(self):
        return self.type is None

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children) == \
            (other.type, other.context, other.children)

    def __hash__(self):
        return hash((self.type, len(self.children)))

    def __repr__(self):
        if self.type is None:
            return "*"
        name = self.type.__name__
        ctx = None if self.context is None else self.context
        return f"TreeSpec({name}, {ctx}, [{', '.join(repr(c) for c in self.children)}])"


LEAF = TreeSpec(None, None, [])


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(tree):
    """(node type, context, children) of a container node, or None for a leaf."""
    if _is_namedtuple(tree):
        return type(tree), type(tree), list(tree)
    if isinstance(tree, (tuple, list)):
        return type(tree), None, list(tree)
    if isinstance(tree, dict):
        keys = list(tree)
        return type(tree), keys, [tree[k] for k in keys]
    return None


# The recursive walks are module functions that take their accumulator: a nested function
# that calls itself closes a reference cycle (function -> cell -> function) holding every
# leaf until the cycle collector runs, so each transform call kept its tensors alive.
def tree_flatten(tree):
    """(leaves in order, TreeSpec)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(node, leaves):
    node_info = _children(node)
    if node_info is None:
        leaves.append(node)
        return LEAF
    kind, ctx, kids = node_info
    return TreeSpec(kind, ctx, [_flatten(k, leaves) for k in kids])


def tree_unflatten(leaves, spec):
    """The pytree of structure ``spec`` holding ``leaves``."""
    return _build(spec, iter(leaves))


def _build(s, it):
    if s.type is None:
        return next(it)
    kids = [_build(c, it) for c in s.children]
    if s.context is not None and isinstance(s.context, type):        # namedtuple
        return s.context(*kids)
    if issubclass(s.type, dict):
        return s.type(zip(s.context, kids)) if s.type is not OrderedDict \
            else OrderedDict(zip(s.context, kids))
    return s.type(kids)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec):
    """``prefix`` (a pytree that is a prefix of ``spec``'s structure; a leaf of it applies to
    a whole subtree) as one value per leaf of ``spec``, or None if it does not fit."""
    out = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(p, s, out):
    if s.type is None or _children(p) is None:
        out.extend([p] * s.num_leaves)
        return True
    kind, ctx, kids = _children(p)
    if kind is not s.type and not (issubclass(kind, (tuple, list)) and
                                   issubclass(s.type, (tuple, list)) and
                                   _is_namedtuple(p) == (isinstance(s.context, type))):
        return False
    if len(kids) != len(s.children) or (isinstance(ctx, list) and ctx != s.context):
        return False
    return all(_broadcast(k, c, out) for k, c in zip(kids, s.children))
