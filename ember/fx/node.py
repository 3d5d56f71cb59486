"""Node: one operation of an ``ember.fx.Graph`` (as ``torch.fx.Node``).

A node has an ``op`` (``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
``call_module``, ``output``), a ``target`` (what it calls or names), ``args``/``kwargs`` (which
may hold other nodes, nested in tuples, lists and dicts), and ``users``: the nodes that read it.
``meta`` carries whatever passes attach (the captured value's shape and dtype, ...).
"""
import builtins
import operator

__all__ = ["Node", "map_aggregate", "map_arg"]

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

# call_function targets that are never side-effect free (dead-code elimination keeps them)
_SIDE_EFFECTFUL = set()


def has_side_effect(fn):
    """Mark ``fn`` as having side effects: graph passes never remove a call to it."""
    _SIDE_EFFECTFUL.add(fn)
    return fn


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of ``a`` (through tuples, lists, dicts and slices)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(x, fn) for x in a)
        return t if type(a) is tuple or not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply ``fn`` to every Node inside ``a`` (other leaves are kept)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _collect_nodes(args, kwargs):
    found = {}
    map_arg((args, kwargs), lambda n: found.setdefault(n, None))
    return list(found)


class Node:
    """One operation of a Graph; build nodes with the Graph's methods, not directly."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in OPCODES:
            raise ValueError(f"Node: op must be one of {', '.join(OPCODES)}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("call_method", "call_module", "get_attr", "placeholder") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.users = {}
        self.meta = {}
        self._prev = self._next = self
        self._erased = False
        self._input_nodes = {}
        self._args, self._kwargs = (), {}
        self.__update_args_kwargs(tuple(args), dict(kwargs))

    # ---- arguments -------------------------------------------------------------------------
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self.__update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self.__update_args_kwargs(self._args, dict(k))

    @property
    def all_input_nodes(self):
        """The nodes this node reads, in the order they first appear in args/kwargs."""
        return list(self._input_nodes)

    def __update_args_kwargs(self, args, kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = dict.fromkeys(_collect_nodes(args, kwargs))
        for n in self._input_nodes:
            n.users.setdefault(self, None)

    def update_arg(self, idx, arg):
        args = list(self._args)
        args[idx] = arg
        self.args = args

    def update_kwarg(self, key, arg):
        self.kwargs = {**self._kwargs, key: arg}

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True):
        """Make every user of this node read ``replace_with`` instead; returns the users
        changed."""
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input, new_input):
        def swap(n):
            return new_input if n is old_input else n
        self.__update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    @property
    def stack_trace(self):
        """Where in user code this node was recorded, when a pass has noted it."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ---- list order ------------------------------------------------------------------------
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    def prepend(self, x):
        """Insert node ``x`` just before this one."""
        if x is self:
            raise ValueError("cannot prepend a node to itself")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Insert node ``x`` just after this one."""
        self._next.prepend(x)

    # ---- side effects ----------------------------------------------------------------------
    def is_impure(self):
        """Whether removing this node could change what the program does (placeholders,
        outputs, calls that mutate their inputs, draw random numbers or have other
        effects)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.meta.get("is_impure"):
            return True
        if self.op == "call_function":
            return self.target in _SIDE_EFFECTFUL or bool(getattr(self.target, "_is_impure",
                                                                  False))
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is not None:
                try:
                    return bool(getattr(mod.get_submodule(self.target), "_is_impure", False))
                except AttributeError:
                    return False
        return False

    # ---- printing --------------------------------------------------------------------------
    def _pretty_target(self):
        if self.op == "call_function":
            from ember.fx.graph import _qualified_name
            name = _qualified_name(self.target)
            return f"builtins.{name}" if "." not in name else name
        return str(self.target)

    def format_node(self):
        """One line describing this node, as ``print(graph)`` shows it."""
        head = f"%{self.name} : [num_users={len(self.users)}] = "
        if self.op == "placeholder":
            default = f" = {self.args[0]!r}" if self.args else ""
            return f"{head}placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0]}"     # str() of nodes: their names
        return (f"{head}{self.op}[target={self._pretty_target()}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name


def _format_arg(arg):
    if isinstance(arg, Node):
        return f"%{arg.name}"
    if isinstance(arg, tuple):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)                         # as torch.fx prints: strings unquoted


has_side_effect(builtins.print)
has_side_effect(operator.setitem)
