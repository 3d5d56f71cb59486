"""Interpreter and Transformer (``torch.fx.Interpreter`` / ``torch.fx.Transformer``).

An Interpreter runs a GraphModule node by node; override one of ``placeholder``,
``get_attr``, ``call_function``, ``call_method``, ``call_module``, ``output`` (or
``run_node``) to change what a kind of node does.  A Transformer is an Interpreter that runs
on Proxies and so writes a new graph: override a method to rewrite those nodes.
"""
from ember.fx._symbolic_trace import Tracer
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import map_aggregate, map_arg
from ember.fx.proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``module``'s graph (or ``graph``) on concrete values.

    Args:
        module: the GraphModule (or Module) whose attributes ``get_attr``/``call_module``
            nodes name.
        garbage_collect_values: drop each value after its last use.
        graph: the graph to run instead of ``module.graph``.
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.submodules = dict(module.named_modules())
        self.garbage_collect_values = garbage_collect_values
        self.env = {}
        self.args_iter = iter(())
        self.user_to_last_uses = {}
        if garbage_collect_values:
            seen = set()
            for node in reversed(self.graph.nodes):
                for inp in node.all_input_nodes:
                    if inp not in seen:
                        seen.add(inp)
                        self.user_to_last_uses.setdefault(node, []).append(inp)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on ``args``; returns what its output node returns."""
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if not getattr(e, "_fx_annotated", False):
                    e.add_note(f"While executing {node.format_node()}")
                    e._fx_annotated = True
                raise
            for dead in self.user_to_last_uses.get(node, ()):
                self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """``run`` taking its arguments as a list, which it clears."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        """Run one node: fetch its arguments, call the method named by its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per opcode ---------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               f"was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # ---- helpers -----------------------------------------------------------------------------
    def fetch_attr(self, target):
        """The attribute at dotted path ``target`` of the module."""
        cur = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(cur, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(target.split('.')[:i + 1])}")
            cur = getattr(cur, atom)
        return cur

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run "
                                   f"Graph.lint() to diagnose such issues")
            return self.env[a]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    def __init__(self, graph, root):
        super().__init__()
        self.graph = graph
        self.root = root
        self._module_path = {id(m): name for name, m in root.named_modules()}

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """Rewrites a GraphModule: each node is re-run on Proxies into a new graph; override the
    opcode methods to emit something else.  ``transform()`` returns the new GraphModule."""

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)
        self.new_graph._tracer = self.tracer

    def placeholder(self, target, args, kwargs):
        default = args[0] if args else None
        node = self.new_graph.placeholder(target) if not args else \
            self.new_graph.placeholder(target, default_value=default)
        return Proxy(node, self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """Run the rewrite; the new GraphModule shares the original's submodules."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(
                result, lambda x: x.node if isinstance(x, Proxy) else x))
        return GraphModule(self.module, self.new_graph)

