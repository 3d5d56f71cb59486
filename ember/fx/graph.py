"""Graph: the ordered nodes of a program (as ``torch.fx.Graph``), and the Python code they
stand for.

Nodes live in a doubly linked list kept in program order; new nodes go at the insertion
point (the end, unless ``inserting_before``/``inserting_after`` says otherwise).
``python_code()`` turns the graph back into the source of a ``forward`` function, which is
what ``GraphModule.code`` shows and runs.
"""
import builtins
import contextlib
import inspect
import keyword
import operator
import re

from ember.fx.node import Node, _format_arg, map_aggregate, map_arg

__all__ = ["Graph", "PythonCode"]

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
          operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
          operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==",
          operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
          operator.ge: ">="}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}


def _qualified_name(fn):
    """A dotted name for ``fn`` that reads well in generated code (``ember.relu``,
    ``operator.add``, ``ember.ops.ember.add``)."""
    name = getattr(fn, "_fx_qualname", None)
    if name is not None:
        return name
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return fn.__name__
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return f"operator.{fn.__name__}"
    short = getattr(fn, "__name__", None)
    if short:
        import ember
        if ember.__dict__.get(short) is fn:
            return f"ember.{short}"
        import sys
        nnf = sys.modules.get("ember.nn.functional")
        if nnf is not None and nnf.__dict__.get(short) is fn:
            return f"ember.nn.functional.{short}"
    module = getattr(fn, "__module__", None) or "builtins"
    return f"{module}.{getattr(fn, '__qualname__', short or type(fn).__name__)}"


def _resolves(path, obj):
    """Whether importing ``path``'s first component and walking the rest gives ``obj``."""
    import importlib
    head, *rest = path.split(".")
    if head in vars(builtins) and not rest:
        return getattr(builtins, head) is obj
    try:
        cur = importlib.import_module(head)
        for part in rest:
            cur = getattr(cur, part)
    except (ImportError, AttributeError):
        return False
    return cur is obj


class _Namespace:
    """Unique Python identifiers for node names and globals."""

    def __init__(self):
        self._used = set(dir(builtins)) | set(keyword.kwlist) | {"self", "ember", "operator"}
        self._counts = {}

    def create_name(self, candidate):
        # as torch.fx: illegal characters become "_", leading underscores are kept
        name = re.sub(r"[^0-9a-zA-Z_]", "_", candidate) or "_unnamed"
        if name[0].isdigit():
            name = f"_{name}"
        match = re.match(r"(.*)_(\d+)$", name)
        base = match.group(1) if match and match.group(1) else name
        if name not in self._used:
            self._used.add(name)
            return name
        n = self._counts.get(base, 0)
        while True:
            n += 1
            cand = f"{base}_{n}"
            if cand not in self._used:
                self._counts[base] = n
                self._used.add(cand)
                return cand

    def reserve(self, name):
        self._used.add(name)


class PythonCode:
    """Generated source and the globals it runs in."""

    def __init__(self, src, globals_):
        self.src = src
        self.globals = globals_


class _NodeList:
    def __init__(self, graph, reverse=False):
        self._graph = graph
        self._reverse = reverse

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = root._prev if self._reverse else root._next
        while cur is not root:
            nxt = cur._prev if self._reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self._graph, not self._reverse))


class Graph:
    """An ordered list of Nodes: the program a GraphModule runs."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        root = Node.__new__(Node)
        root.graph, root.name, root.op, root.target = self, "_root", "root", ""
        root._prev = root._next = root
        root._erased, root.users, root.meta = False, {}, {}
        self._root = root
        self._len = 0
        self._insert = root.prepend
        self._namespace = _Namespace()
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self):
        """The nodes in program order (a live view: len(), iteration, reversed())."""
        return _NodeList(self)

    def find_nodes(self, *, op, target=None):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ----------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """A new node at the insertion point; ``name`` is made unique."""
        args = () if args is None else tuple(args)
        kwargs = {} if kwargs is None else dict(kwargs)
        for n in map_arg_nodes(args, kwargs):
            if n.graph is not self:
                raise RuntimeError(f"Argument '{n}' of Node '{name or target}' was used before "
                                   f"it has been defined in this graph (it belongs to another)")
        if name is not None:
            candidate = name
        elif op == "placeholder" and isinstance(target, str):
            candidate = target.lstrip("*")      # *args / **kwargs read as args / kwargs
        else:
            candidate = self._target_to_str(target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args, kwargs,
                    type_expr)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target):
        if callable(target):
            name = getattr(target, "_fx_name", None) or getattr(target, "__name__", None) \
                or type(target).__name__
            if len(name) > 4 and name.startswith("__") and name.endswith("__"):
                name = name[2:-2]               # __add__ reads as add
            return name
        return str(target).replace(".", "_")

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    @contextlib.contextmanager
    def _inserting(self, insert):
        prev, self._insert = self._insert, insert
        try:
            yield
        finally:
            self._insert = prev

    def inserting_before(self, n=None):
        """Context manager: new nodes go just before ``n`` (the graph's start if None)."""
        if n is None:
            return self.inserting_after(self._root)
        return self._inserting(n.prepend)

    def inserting_after(self, n=None):
        """Context manager: new nodes go just after ``n`` (in order; the end if None)."""
        if n is None:
            return self.inserting_before(self._root)
        state = {"last": n}

        def insert(node):
            state["last"].append(node)
            state["last"] = node
        return self._inserting(insert)

    def erase_node(self, to_erase):
        """Remove a node that no other node reads."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it has already been erased")
        to_erase._remove_from_list()
        to_erase._erased = True
        to_erase.args, to_erase.kwargs = (), {}
        self._len -= 1

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) in this graph; ``arg_transform`` maps the
        nodes it reads to nodes of this graph."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of ``g`` but its output into this graph; ``val_map`` maps g's
        nodes to the new ones (filled in).  Returns what g's output reads, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        g = Graph(tracer_cls=self._tracer_cls)
        rv, out = g.graph_copy(self, {}, return_output_node=True)
        g.output(rv, type_expr=out.type)
        return g

    def __reduce__(self):
        # nodes as a flat list (pickling the linked list would recurse once per node);
        # meta is dropped, as torch.fx drops it when a GraphModule is pickled
        index = {n: i for i, n in enumerate(self.nodes)}
        records = [(n.name, n.op, n.target, map_arg(n.args, lambda a: _NodeRef(index[a])),
                    map_arg(n.kwargs, lambda a: _NodeRef(index[a])), n.type)
                   for n in self.nodes]
        return _rebuild_graph, (records, self._tracer_cls)

    # ---- passes ------------------------------------------------------------------------------
    def eliminate_dead_code(self, is_impure_node=None):
        """Remove nodes whose results nobody reads and that have no side effects; returns
        whether anything was removed."""
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph's invariants: each node belongs here, reads only nodes defined
        before it, and names are unique; raises RuntimeError naming the offender."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            for arg in node.all_input_nodes:
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       f"has been defined! Please check that Nodes in the "
                                       f"graph are topologically ordered")
            seen.add(node)
            names.add(node.name)
        outputs = [n for n in self.nodes if n.op == "output"]
        if len(outputs) > 1:
            raise RuntimeError("Graph has more than one output node")
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    try:
                        _fetch_attr(self.owning_module, node.target)
                    except AttributeError:
                        raise RuntimeError(f"Node {node} target {node.target} does not "
                                           f"reference an attribute of the owning module") \
                            from None

    # ---- printing ----------------------------------------------------------------------------
    def __str__(self):
        lines = ["graph():"]
        lines += [f"    {n.format_node()}" for n in self.nodes]
        return "\n".join(lines)

    def print_tabular(self):
        """Print the nodes as a table: opcode, name, target, args, kwargs."""
        rows = [["opcode", "name", "target", "args", "kwargs"]]
        for n in self.nodes:
            target = n._pretty_target() if n.op == "call_function" else str(n.target)
            rows.append([n.op, n.name, target, _format_arg(n.args)[1:-1] if n.args and
                         isinstance(n.args, tuple) else _format_arg(n.args),
                         _format_arg(n.kwargs)])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        sep = "  ".join("-" * w for w in widths)
        out = ["  ".join(c.ljust(w) for c, w in zip(rows[0], widths)).rstrip(), sep]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows[1:]]
        print("\n".join(out))

    # ---- code generation ---------------------------------------------------------------------
    def python_code(self, root_module="self"):
        """The source of ``def forward(...)`` for this graph and the globals it needs."""
        from ember.fx._codegen import generate
        return generate(self, root_module)

    def on_generate_code(self, make_transformer):
        raise NotImplementedError("Graph.on_generate_code is not supported by ember.fx")


def map_arg_nodes(args, kwargs):
    found = []
    map_arg((args, kwargs), found.append)
    return found


def _fetch_attr(root, target):
    cur = root
    for atom in target.split("."):
        if not hasattr(cur, atom):
            raise AttributeError(f"Node referenced nonexistent target {target}")
        cur = getattr(cur, atom)
    return cur


class _NodeRef:
    """A pickled node argument: the index of the node it names."""

    def __init__(self, index):
        self.index = index


def _rebuild_graph(records, tracer_cls):
    g = Graph(tracer_cls=tracer_cls)
    built = []

    def load(a):
        return map_aggregate(a, lambda x: built[x.index] if isinstance(x, _NodeRef) else x)
    for name, op, target, args, kwargs, type_expr in records:
        built.append(g.create_node(op, target, load(args), load(kwargs), name, type_expr))
    return g
