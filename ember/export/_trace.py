"""Tracing a Module for ``ember.export``: one capture on fake tensors.

The capture is ``ember.compile``'s (``ember._dynamo.capture``: every op reaches the
recorder through the dispatcher's PythonMode key), run on fake copies of the example
inputs whose dynamic dimensions are size symbols.  Nothing runs on real data, so exporting
changes no buffer.  Export differs from compile where a program must be whole: every stop
of the capture is an error (data-dependent control flow raises
``GuardOnDataDependentSymNode``, or ``Unsupported`` under ``strict``), and a tensor the code
reads from outside its inputs, parameters and buffers becomes a lifted constant.  A guard
the code put on a dynamic dimension violates the constraints asked for (``UserError``), except
for ``Dim.AUTO`` dimensions, which are then traced again as static.
"""
import inspect

from ember._dynamo.capture import GraphBreak, Recorder
from ember._dynamo.convert import _leaf_names
from ember._dynamo.monitor import SideEffectMonitor
from ember._dynamo.pytree import tree_flatten, tree_unflatten
from ember._dynamo.sources import Source, SourceIndex
from ember._dynamo.symbolic import SymbolicContext
from ember.autograd.grad_mode import no_grad
from ember.core._autograd import set_requires_grad
from ember.core._tensor import TensorBase
from ember.export import dynamic_shapes as _ds

__all__ = ["Trace", "trace"]


class _ExportSources(SourceIndex):
    """Sources for export: a tensor found nowhere else is a lifted constant."""

    def __init__(self):
        super().__init__()
        self.constants = {}

    def find(self, t):
        s = super().find(t)
        if s is None and type(t).__name__ != "FakeTensor" and not t.is_meta:
            s = self.constants.get(id(t))
            if s is None:
                s = Source("const", t, None, f"lifted_tensor_{len(self.constants)}")
                self.constants[id(t)] = s
        return s


class Trace:
    """What a finished export capture holds: the recorder, the symbols and where they come
    from, the inputs' and outputs' structure."""

    def __init__(self, rec, symctx, leaves, in_spec, input_nodes, result, names, dims):
        self.rec, self.symctx = rec, symctx
        self.leaves, self.in_spec = leaves, in_spec
        self.input_nodes, self.names = input_nodes, names
        self.out_leaves, self.out_spec = tree_flatten(result)
        self.dims = dims            # symbol -> (Dim or hint, "x.size()[0]")


def _errors():
    from ember._dynamo.exc import UserError, UserErrorType
    from ember.fx.experimental.symbolic_shapes import ConstraintViolationError
    return UserError, UserErrorType, ConstraintViolationError


def _violation(name, lines):
    UserError, UserErrorType, _ = _errors()
    body = "\n".join(f"  - {line}" for line in lines)
    return UserError(UserErrorType.CONSTRAINT_VIOLATION,
                     f"Constraints violated ({name})!\n{body}")


def _specialised(name, n):
    return (f"You marked {name} as dynamic but your code specialized it to be a constant "
            f"({n}). If you're using Dim.DYNAMIC, replace it with either Dim.STATIC or "
            f"Dim.AUTO.")


class _Sizes:
    """Symbolic sizes for the example inputs, one symbol per Dim."""

    def __init__(self, env, static):
        self.env, self.static = env, static
        self.by_dim = {}            # Dim name -> SymInt
        self.dims = {}              # symbol -> (Dim or hint, where)

    def size(self, spec, n, where, key):
        _, _, ConstraintViolationError = _errors()
        if spec is None or key in self.static:
            return n
        if isinstance(spec, int):
            if spec != n:
                raise ConstraintViolationError(f"Static shape constraint of {spec} does not "
                                               f"match input size of {n}, for {where}")
            return n
        name = spec.__name__ if isinstance(spec, _ds.Dim) else where
        if n in (0, 1):
            if spec is _ds.Dim.AUTO:
                return n
            raise _violation(name, [_specialised(name, n)])
        if isinstance(spec, _ds._DerivedDim):
            return self._derived(spec, n, where)
        if isinstance(spec, _ds.Dim):
            if not spec.min <= n <= spec.max:
                raise ConstraintViolationError(f"{n} not in range [{spec.min}, {spec.max}]")
            known = self.by_dim.get(name)
            if known is not None:
                if known.node.hint != n:
                    raise _violation(name, [f"The values of {name} must always be equal, but "
                                            f"{where} is {n} and another input's is "
                                            f"{known.node.hint}."])
                return known
        lo, hi = (spec.min, spec.max) if isinstance(spec, _ds.Dim) else (None, None)
        sym = self.env.create_symint(n, min=lo, max=None if hi == float("inf") else hi)
        if isinstance(spec, _ds.Dim):
            self.by_dim[name] = sym
        self.dims[sym.node.expr] = (spec, where)
        return sym

    def _derived(self, spec, n, where):
        root = self.by_dim.get(spec.root.__name__)
        if root is None:
            UserError, UserErrorType, _ = _errors()
            raise UserError(UserErrorType.INVALID_INPUT,
                            f"derived dim {spec.__name__} at {where}: ember.export needs its "
                            f"root {spec.root.__name__} to be the dimension of an input too")
        size = spec.a * root + spec.b
        if size.node.hint != n:
            raise _violation(spec.__name__, [f"Expected input at {where} to be equal to "
                                             f"{size.node.hint}, where {spec.root.__name__} = "
                                             f"{root.node.hint}, but got {n}"])
        return size


def _fakes(mode, leaves, specs, sizes):
    """Fake copies of the tensor leaves (by id), derived dims after their roots."""
    fakes = {}
    for derived in (False, True):
        for x in leaves:
            if not isinstance(x, TensorBase) or id(x) in fakes:
                continue
            path, dspec = specs.get(id(x), ("", {}))
            if derived != any(isinstance(s, _ds._DerivedDim) for s in dspec.values()):
                continue
            shape = [sizes.size(dspec.get(d), n, f"{path or 'input'}.size()[{d}]", (id(x), d))
                     for d, n in enumerate(x.shape)]
            f = mode.empty(shape, dtype=x.dtype, device=x.device)
            if x.requires_grad:
                set_requires_grad(f, True)
            fakes[id(x)] = f
    return fakes


def _forward_fn(mod):
    fn = type(mod).forward
    return getattr(fn, "__func__", fn)


def _stop_error(reason, strict):
    from ember._dynamo.exc import Unsupported
    from ember.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    data = "data-dependent" in reason or "depends on tensor data" in reason or \
        "boolean mask" in reason
    msg = f"ember.export: {reason}"
    if data:
        msg += ("\nThe program branches on tensor values: use ember.cond (torch.cond) for "
                "data-dependent control flow, or compute without the branch.")
        if not strict:
            return GuardOnDataDependentSymNode(f"Could not guard on data-dependent expression: "
                                               f"{msg}")
    return Unsupported(msg)


def trace(mod, args, kwargs, dynamic_shapes, strict, static=frozenset()):
    """Capture ``mod(*args, **kwargs)`` on fakes; returns a Trace.  ``static``: (id of an
    input tensor, dim) pairs to keep static (Dim.AUTO dims a first trace specialised)."""
    from ember._subclasses.fake_tensor import FakeTensorMode
    leaves, in_spec = tree_flatten((tuple(args), dict(kwargs)))
    specs = _ds.resolve(mod, args, kwargs, dynamic_shapes)
    mode = FakeTensorMode()
    sizes = _Sizes(mode.shape_env, static)
    fakes = _fakes(mode, leaves, specs, sizes)
    symctx = SymbolicContext(mode.shape_env)
    for i, x in enumerate(leaves):
        if isinstance(x, TensorBase):
            for d, s in enumerate(fakes[id(x)].shape):
                if not isinstance(s, int):
                    symctx.bind(s, i, d)
    index = _ExportSources()
    index.add_module(mod, "self")
    index.add_function(_forward_fn(mod))
    rec = Recorder(index, fake_mode=mode, fullgraph=False)
    rec.symbolic = symctx
    rec.exporting = True
    names = _leaf_names(mod.forward, args, kwargs, len(leaves), in_spec)
    input_nodes = {}
    try:
        with rec:
            symctx.add_placeholders(rec)
            for i, x in enumerate(leaves):
                if isinstance(x, TensorBase) and rec.fw.find(fakes[id(x)]) is None:
                    input_nodes[i] = rec.add_input(x, names.get(i, f"arg{i}"), fakes[id(x)])
            fargs, fkwargs = tree_unflatten(
                [fakes.get(id(x), x) if isinstance(x, TensorBase) else x for x in leaves],
                in_spec)
            # an exported graph is a forward program: autograd records nothing while
            # tracing (module() records as any eager call does)
            with SideEffectMonitor(rec, index, enabled=strict), no_grad():
                result = mod(*fargs, **fkwargs)
        out = Trace(rec, symctx, leaves, in_spec, input_nodes, result, names, sizes.dims)
        for o in out.out_leaves:
            if isinstance(o, TensorBase):
                rec.node_of(o)
    except GraphBreak as e:
        raise _stop_error(e.reason, strict) from None
    except NotImplementedError as e:        # an op fake tensors cannot run (named in e)
        raise _stop_error(str(e), strict) from None
    if rec.breaks:
        raise _stop_error(rec.breaks[0], strict)
    return out


def check_constraints(tr):
    """The guards a trace recorded on its dynamic dims: the AUTO dims to make static (a
    set of (input id, dim)) or a UserError for the others."""
    env = tr.rec.fake_mode.shape_env
    named = {}                      # symbol -> guards on it
    for g in env.guards:
        for s in g.expr.free_symbols:
            if s in tr.dims:
                named.setdefault(s, []).append(g)
    auto, lines, names = set(), [], []
    for sym, guards in named.items():
        spec, where = tr.dims[sym]
        if spec is _ds.Dim.AUTO:
            auto.add(sym)
            continue
        name = spec.__name__ if isinstance(spec, _ds.Dim) else where
        names.append(name)
        for g in guards:
            lines.append(_describe_guard(g, sym, name, where, env, tr.dims))
    if lines:
        raise _violation(", ".join(dict.fromkeys(names)), list(dict.fromkeys(lines)))
    return auto


def _describe_guard(g, sym, name, where, env, dims):
    import sympy
    e = g.expr if g.result else sympy.Not(g.expr)       # the condition that held
    if isinstance(e, sympy.Eq):
        other = e.rhs if e.lhs == sym else e.lhs if e.rhs == sym else None
        if other is not None and other.is_Integer:
            return _specialised(name, int(other))
        if other is not None and other.is_Symbol and other in dims:
            spec, owhere = dims[other]
            oname = spec.__name__ if isinstance(spec, _ds.Dim) else owhere
            (n1, w1), (n2, w2) = sorted([(name, where), (oname, owhere)])
            return (f"The values of {n1} = {w1} and {n2} = {w2} must always be equal (give "
                    f"both the same Dim).")
    lo, hi = env.var_to_range[sym]
    return (f"Not all values of {name} = {where} in the specified range {lo} <= {name} <= "
            f"{hi} satisfy the generated guard {e}.")


def auto_static(tr, symbols):
    """The (input id, dim) pairs of the given symbols."""
    out = set()
    for sym, (leaf, dim) in zip(tr.symctx.symbols, tr.symctx.sources):
        if sym in symbols:
            out.add((id(tr.leaves[leaf]), dim))
    return out


def forward_names(mod):
    """The names of ``mod.forward``'s parameters (for the module call signature)."""
    try:
        return [p for p in inspect.signature(mod.forward).parameters]
    except (TypeError, ValueError):
        return []
