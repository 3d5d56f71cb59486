"""Python source for a Graph: one line per node, ``forward(self, <placeholders>)``.

Names a node reads for the last time are set to None right after (as torch.fx does), so
intermediate tensors are freed as soon as the program no longer needs them.
"""
import builtins
import keyword
import math
import operator

from ember.fx.graph import _INFIX, _PREFIX, PythonCode, _Namespace, _qualified_name, _resolves
from ember.fx.node import Node

__all__ = ["generate"]


class _Globals:
    """The globals of generated code: modules reached by dotted names, other objects under
    unique names."""

    def __init__(self, reserved):
        self.values = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}
        self._ns = _Namespace()
        for r in reserved:
            self._ns.reserve(r)
        self._by_id = {}

    def name_of(self, obj, hint=None):
        """How generated code refers to ``obj``."""
        key = id(obj)
        if key in self._by_id:
            return self._by_id[key]
        path = _qualified_name(obj) if callable(obj) else None
        if path and "<" not in path and _resolves(path, obj):
            head = path.split(".")[0]
            if head not in vars(builtins) or "." in path:
                import importlib
                self.values[head] = importlib.import_module(head) if head not in vars(builtins) \
                    else getattr(builtins, head)
            self._by_id[key] = path
            return path
        name = self._ns.create_name(hint or getattr(obj, "__name__", None) or type(obj).__name__)
        self.values[name] = obj
        self._by_id[key] = name
        return name


def _repr(arg, g):
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple):
        if hasattr(arg, "_fields"):
            return f"{g.name_of(type(arg))}({', '.join(_repr(a, g) for a in arg)})"
        inner = ", ".join(_repr(a, g) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_repr(a, g) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_repr(v, g)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return f"slice({_repr(arg.start, g)}, {_repr(arg.stop, g)}, {_repr(arg.step, g)})"
    if arg is None or isinstance(arg, (bool, int, str, bytes)) or arg is Ellipsis:
        return repr(arg)
    if isinstance(arg, float):
        return repr(arg)            # inf and nan read back through the globals
    if isinstance(arg, complex):
        return f"complex({arg.real!r}, {arg.imag!r})"
    from ember.core._device import device
    from ember.core._dtype import dtype
    if isinstance(arg, dtype):
        g.values["ember"] = __import__("ember")
        return f"ember.{arg.name}"
    if isinstance(arg, device):
        g.values["ember"] = __import__("ember")
        return f"ember.device({str(arg)!r})"
    return g.name_of(arg, hint=f"_{type(arg).__name__}_constant")


def _attr_path(root, target):
    out = root
    for p in target.split("."):
        out = f"{out}.{p}" if p.isidentifier() else f"getattr({out}, {p!r})"
    return out


def _call_args(args, kwargs, g):
    parts = [_repr(a, g) for a in args]
    parts += [f"{k} = {_repr(v, g)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _call_function_expr(node, g):
    fn, args, kwargs = node.target, node.args, node.kwargs
    if fn in _INFIX and len(args) == 2 and not kwargs:
        return f"{_repr(args[0], g)} {_INFIX[fn]} {_repr(args[1], g)}"
    if fn in _PREFIX and len(args) == 1 and not kwargs:
        return f"{_PREFIX[fn]}{_repr(args[0], g)}"
    if fn is operator.getitem and len(args) == 2 and not kwargs:
        return f"{_repr(args[0], g)}[{_repr(args[1], g)}]"
    if fn is builtins.getattr and len(args) == 2 and isinstance(args[1], str) \
            and args[1].isidentifier() and not kwargs:
        return f"{_repr(args[0], g)}.{args[1]}"
    return f"{g.name_of(fn)}({_call_args(args, kwargs, g)})"


def generate(graph, root_module="self"):
    """PythonCode for ``graph``: the source of ``forward`` and its globals."""
    nodes = list(graph.nodes)
    node_names = {n.name for n in nodes}
    g = _Globals(n.name for n in nodes)
    # the node after which each value is read for the last time
    freed_after = {}
    seen = set()
    for node in reversed(nodes):
        for inp in node.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                freed_after.setdefault(node, []).append(inp)
    params, body = [], []
    for node in nodes:
        if node.op == "placeholder":
            default = f" = {_repr(node.args[0], g)}" if node.args else ""
            # the parameter keeps the traced name (callers may pass it by keyword); the
            # node's own name is bound to it when the two differ (``input_1 = input``)
            raw = node.target.lstrip("*")
            if not raw.isidentifier() or keyword.iskeyword(raw) or \
                    (raw != node.name and raw in node_names):
                raw = node.name             # a target that cannot name a parameter
            params.append(f"{node.target[:len(node.target) - len(node.target.lstrip('*'))]}"
                          f"{raw}{default}")
            if raw != node.name:
                body.append(f"{node.name} = {raw}")
            continue
        if node.op == "output":
            body.append(f"return {_repr(node.args[0], g)}")
            continue
        if node.op == "get_attr":
            expr = _attr_path(root_module, node.target)
        elif node.op == "call_module":
            call = _call_args(node.args, node.kwargs, g)
            expr = f"{_attr_path(root_module, node.target)}({call})"
        elif node.op == "call_method":
            this, *rest = node.args
            expr = f"{_repr(this, g)}.{node.target}({_call_args(rest, node.kwargs, g)})"
        else:
            expr = _call_function_expr(node, g)
        line = f"{node.name} = {expr}"
        dead = [n.name for n in freed_after.get(node, ())]
        if dead:
            line += f";  {' = '.join(dead)} = None"
        body.append(line)
    if not body or not body[-1].startswith("return"):
        body.append("return None")
    src = f"def forward({', '.join([root_module] + params)}):\n"
    src += "".join(f"    {line}\n" for line in body)
    return PythonCode(src, g.values)
