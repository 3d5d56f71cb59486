"""Symbolic sizes in captured graphs and guards (dynamic shapes).

A dynamic capture runs on fake tensors whose sizes are SymInts over the symbols of one
ShapeEnv (``s0, s1, ...``), each bound to one dimension of one argument.  Graphs take the
symbols' values as leading int placeholders; a SymInt an op receives (``view(x, s0 * 2)``)
becomes nodes computing it (``operator.mul(s0, 2)``).  The ShapeEnv's guards become Python
conditions over the same names, checked before a graph is reused.
"""
import builtins
import math
import operator

__all__ = ["SymbolicContext", "pyexpr"]


def _sympy():
    import sympy
    return sympy


def pyexpr(e):
    """Python source computing SymPy expression ``e`` (symbols read as local names)."""
    sp = _sympy()
    from ember.fx.experimental import _sympy_functions as F
    if e is sp.true:
        return "True"
    if e is sp.false:
        return "False"
    if e.is_Symbol:
        return str(e)
    if e.is_Integer:
        return str(int(e))
    if e.is_Rational:
        return f"({int(e.p)} / {int(e.q)})"
    if e.is_Float:
        return repr(float(e))
    a = [pyexpr(x) for x in e.args]
    if e.is_Add:
        return "(" + " + ".join(a) + ")"
    if e.is_Mul:
        return "(" + " * ".join(a) + ")"
    if e.is_Pow:
        return f"({a[0]} ** {a[1]})"
    rel = {sp.Eq: "==", sp.Ne: "!=", sp.Lt: "<", sp.Le: "<=", sp.Gt: ">", sp.Ge: ">="}
    for cls, op in rel.items():
        if isinstance(e, cls):
            return f"({a[0]} {op} {a[1]})"
    calls = {F.FloorDiv: "({0} // {1})", F.PythonMod: "({0} % {1})", sp.Max: "max({all})",
             sp.Min: "min({all})", sp.Abs: "abs({0})", F.FloorToInt: "_math.floor({0})",
             F.CeilToInt: "_math.ceil({0})", F.TruncToInt: "int({0})",
             F.RoundToInt: "round({0})", sp.And: "({and})", sp.Or: "({or})",
             sp.Not: "(not {0})"}
    for cls, template in calls.items():
        if isinstance(e, cls):
            return template.format(*a, all=", ".join(a), **{"and": " and ".join(a),
                                                            "or": " or ".join(a)})
    raise NotImplementedError(f"cannot guard on the symbolic expression {e}")


def _fold(fn, nodes, graph):
    acc = nodes[0]
    for n in nodes[1:]:
        acc = graph.call_function(fn, (acc, n))
    return acc


class SymbolicContext:
    """The symbols of a dynamic capture: where each comes from (argument leaf, dim) and
    the graph nodes that hold them."""

    def __init__(self, shape_env):
        self.shape_env = shape_env
        self.symbols = []           # sympy Symbol, in placeholder order
        self.sources = []           # (leaf index, dim) per symbol
        self._nodes = {}            # (phase name, expr) -> node

    def bind(self, symint, leaf, dim):
        sym = symint.node.expr
        if sym.is_Symbol and sym not in self.symbols:
            self.symbols.append(sym)
            self.sources.append((leaf, dim))

    def add_placeholders(self, recorder):
        """One int placeholder per symbol in the graph ``recorder`` is recording."""
        phase = recorder.cur
        for sym in self.symbols:
            node = recorder.add_symbol_input(str(sym), None)
            self._nodes[(phase.name, sym)] = node

    def placeholders(self, phase_name):
        """The symbol placeholders of a phase's graph, in symbol order."""
        return [self._nodes[(phase_name, s)] for s in self.symbols
                if (phase_name, s) in self._nodes]

    def node_for(self, symint, recorder):
        """The node (or int/bool) holding ``symint``'s (or a SymBool's) value in the graph
        being recorded."""
        return self._expr_node(symint.node.expr, recorder)

    def _expr_node(self, e, rec):
        sp = _sympy()
        from ember.fx.experimental import _sympy_functions as F
        if e.is_Integer:
            return int(e)
        key = (rec.cur.name, e)
        node = self._nodes.get(key)
        if node is not None:
            return node
        graph = rec.cur.graph
        if e.is_Symbol:
            parent = getattr(rec.cur, "parent", None)
            if parent is not None:          # a subgraph takes the symbol as an input
                from ember._dynamo.subgraph import lift_from_parent
                node = lift_from_parent(rec, e, str(e),
                                        lambda: self._expr_node(e, rec), None)
            else:
                node = rec.add_symbol_input(str(e), None)
            self._nodes[key] = node
            return node
        if e is sp.true or e is sp.false:
            return bool(e)
        args = [self._expr_node(x, rec) for x in e.args]
        if e.is_Add:
            node = _fold(operator.add, args, graph)
        elif e.is_Mul:
            node = _fold(operator.mul, args, graph)
        elif e.is_Pow:
            node = graph.call_function(operator.pow, tuple(args))
        elif e.is_Rational:
            node = graph.call_function(operator.truediv, (int(e.p), int(e.q)))
        else:
            fns = {F.FloorDiv: operator.floordiv, F.PythonMod: operator.mod, sp.Max: builtins.max,
                   sp.Min: builtins.min, F.FloorToInt: math.floor, F.CeilToInt: math.ceil,
                   F.TruncToInt: int, sp.Abs: builtins.abs, sp.Eq: operator.eq,
                   sp.Ne: operator.ne, sp.Lt: operator.lt, sp.Le: operator.le,
                   sp.Gt: operator.gt, sp.Ge: operator.ge, sp.Not: operator.not_}
            if isinstance(e, (sp.And, sp.Or)):
                return _fold(operator.and_ if isinstance(e, sp.And) else operator.or_, args,
                             graph)
            fn = next((f for cls, f in fns.items() if isinstance(e, cls)), None)
            if fn is None:
                from ember._dynamo.capture import GraphBreak
                raise GraphBreak(f"no graph form for the symbolic size {e}")
            node = graph.call_function(fn, tuple(args))
        self._nodes[key] = node
        return node

    def guard_lines(self):
        """Python conditions (and their descriptions) the ShapeEnv recorded: each symbol's
        range, then every guard."""
        env = self.shape_env
        out = []
        for sym in self.symbols:
            lo, hi = env.var_to_range[sym]
            if lo.is_finite:
                out.append((f"{sym} >= {int(lo)}", f"{sym} >= {int(lo)}"))
            if hi.is_finite:
                out.append((f"{sym} <= {int(hi)}", f"{sym} <= {int(hi)}"))
        for g in env.guards:
            cond = pyexpr(g.expr)
            out.append((cond if g.result else f"not {cond}",
                        f"{g.expr} is {g.result}"))
        return out
