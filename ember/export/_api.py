"""``ember.export.export``: checking the call, tracing, building the ExportedProgram."""
from ember.core._tensor import TensorBase
from ember.export import _trace
from ember.export._build import build
from ember.export._unlift import InputCheck
from ember.export.exported_program import ExportedProgram, ModuleCallEntry, ModuleCallSignature

__all__ = ["default_decompositions", "export"]


def default_decompositions():
    """The decomposition table ``run_decompositions`` uses by default: empty, as ember's
    exported graphs hold primitive ops only."""
    return {}


def _user_error(msg):
    from ember._dynamo.exc import UserError, UserErrorType
    return UserError(UserErrorType.INVALID_INPUT, msg)


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=(), prefer_deferred_runtime_asserts_over_guards=False):
    """Export ``mod``'s forward, called as ``mod(*args, **kwargs)``, as an ExportedProgram.

    Args:
        mod: the ``nn.Module``.
        args: a tuple of example positional inputs.
        kwargs: a dict of example keyword inputs.
        dynamic_shapes: which input sizes may vary: a dict by argument name or a tuple in
            argument order, holding per tensor a dict ``{dim: Dim}`` or a list with a Dim
            (or None) per dimension; ``Dim.AUTO``/``STATIC``/``DYNAMIC`` or an int (a
            static size) also fit.
        strict: trace as PyTorch's strict mode does: Python side effects (print, global
            writes, random/time calls) are errors too; otherwise they happen once, while
            tracing.
        preserve_module_call_signature: accepted (submodule call signatures are recorded
            for ``unflatten`` in PyTorch, which ember does not provide).
        prefer_deferred_runtime_asserts_over_guards: accepted; ember has no deferred
            asserts.

    Raises:
        GuardOnDataDependentSymNode (``Unsupported`` under ``strict``): the program branches
            on tensor data.
        UserError: ``dynamic_shapes`` does not fit the inputs, or the code constrains a
            dynamic size (specialises it, ties it to another).
    """
    from ember.nn.modules.module import Module
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise _user_error(f"Expecting `args` to be a tuple of example positional inputs, got "
                          f"{type(args)}")
    kwargs = {} if kwargs is None else kwargs
    if not isinstance(kwargs, dict):
        raise _user_error(f"Expecting `kwargs` to be a dict of example keyword inputs, got "
                          f"{type(kwargs)}")
    static = frozenset()
    while True:
        tr = _trace.trace(mod, args, kwargs, dynamic_shapes, strict, static)
        auto = _trace.check_constraints(tr)
        if not auto:
            break
        static = static | _trace.auto_static(tr, auto)
    return _program(mod, tr, args, kwargs)


def _affine(expr, env):
    """``a * symbol + b`` of a size expression: (symbol name, a, b, lo, hi)."""
    (sym,) = expr.free_symbols
    a, b = expr.coeff(sym), expr.subs(sym, 0)
    lo, hi = env.var_to_range[sym]
    return str(sym), int(a), int(b), int(lo), int(hi) if hi.is_finite else None


def input_checks(graph, input_leaves, env):
    """The InputCheck of each user input placeholder holding a tensor."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"][-len(input_leaves):] \
        if input_leaves else []
    checks = []
    for node, leaf in zip(placeholders, input_leaves):
        v = node.meta.get("val")
        if v is not None:
            dims = [s if isinstance(s, int) else _affine(s.node.expr, env) for s in v.shape]
            checks.append(InputCheck(node.name, leaf, v.dtype, dims))
    return checks


def _program(mod, tr, args, kwargs):
    from ember.fx.graph_module import GraphModule
    built = build(tr, mod)
    env = tr.rec.fake_mode.shape_env
    gm = GraphModule(dict(built.subgraphs), built.graph)
    gm.training = mod.training
    call = ModuleCallSignature([], [], tr.in_spec, tr.out_spec, _trace.forward_names(mod))
    graph = [ModuleCallEntry("", call)] + [ModuleCallEntry(name) for name, _ in
                                           mod.named_modules() if name]
    ranges = {sym: env.var_to_range[sym] for sym in tr.dims}
    ep = ExportedProgram(gm, None, built.signature, built.state_dict, ranges, graph,
                         (tuple(args), dict(kwargs)), built.constants)
    ep._input_leaves = list(built.input_leaves)
    ep._input_checks = input_checks(built.graph, built.input_leaves, env)
    ep._constant_inputs = [(i, x) for i, x in enumerate(tr.leaves)
                           if not isinstance(x, TensorBase)]
    return ep
