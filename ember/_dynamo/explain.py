"""``torch._dynamo.explain``: what compiling a function captures (its graphs, their ops,
the graph breaks and their reasons, the guards), found by capturing one call with a backend
that only records; nothing is compiled.

ember runs a call whose capture breaks eagerly from its start (PyTorch resumes capturing
after the break), so such a call shows no graph and one break with its reason.  A value
read into Python (``if x.sum() > 0``) is a break in PyTorch and one here too, but ember's
graph goes on past it, guarded by the value: one graph, one break per read."""
import dataclasses
import warnings

__all__ = ["ExplainOutput", "GraphCompileReason", "explain"]


@dataclasses.dataclass
class GraphCompileReason:
    """Why a capture stopped: ``reason``; ``user_stack`` (frames) is empty in ember."""

    reason: str
    user_stack: list = dataclasses.field(default_factory=list)
    graph_break: bool = True


@dataclasses.dataclass
class ExplainOutput:
    """The result of ``explain(fn)(*args)``; ``str()`` of it is a readable summary."""

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list = None
    out_guards: list = None
    compile_times: str = None

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {r.reason}"]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph or (), 1):
            lines.append(f"  Ops {i}:")
            lines += [f"    {op}" for op in ops]
        lines.append("Out Guards:")
        lines += [f"  {g}" for g in self.out_guards or ()]
        if self.compile_times is not None:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def _ops(gm):
    return [node.target for node in gm.graph.nodes
            if node.op in ("call_function", "call_method", "call_module")]


def explain(f, *extra_args, **extra_kwargs):
    """``explain(f)(*args, **kwargs)`` captures one call of ``f`` (a function or Module)
    and returns an ``ExplainOutput``; ``f`` runs as it would compiled.  The older form
    ``explain(f, *args, **kwargs)`` still works, with a FutureWarning."""
    from ember._dynamo.eval_frame import optimize
    from ember._dynamo.utils import compile_times

    def inner(*args, **kwargs):
        def record(gm, example_inputs):
            return gm.forward
        record.__name__ = "explain"
        opt = optimize(record)(f)
        opt(*args, **kwargs)
        entries = opt._ember_compiled.entries if hasattr(opt, "_ember_compiled") else \
            opt._compiled.entries
        # the forward graphs (a training capture's backward graph is not a dynamo graph)
        graphs = [e.graphs[0] for e in entries if e.graphs]
        reasons = [GraphCompileReason(e.reason) for e in entries if hasattr(e, "reason")]
        reasons += [GraphCompileReason(r) for e in entries for _, r in
                    getattr(e, "value_reads", ())]
        ops = [_ops(gm) for gm in graphs]
        guards = [g for e in entries for g in e.guard_conditions]
        return ExplainOutput(graphs, len(graphs), len(reasons), reasons, sum(map(len, ops)),
                             ops, guards, compile_times())

    if extra_args or extra_kwargs:
        warnings.warn("explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, "
                      "**kwargs) instead.", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner
