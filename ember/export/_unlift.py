"""``ExportedProgram.module()``: the exported graph as a Module called like the original.

Parameters, buffers and constants go back into the module (the same tensor objects as the
program's state_dict) and are read by ``get_attr`` nodes; the user's inputs are flattened
with the exported input structure and checked against the exported shapes (a static size
must match, a dynamic one lie in its range), outputs are put back into the exported output
structure.
"""
from ember._dynamo.pytree import spec_str, tree_flatten, tree_unflatten
from ember.core._tensor import TensorBase
from ember.export.graph_signature import InputKind
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule

__all__ = ["InputCheck", "unlift"]


class InputCheck:
    """The exported shape of one user input: per dim an int or (symbol name, a, b, lo, hi)
    meaning ``a * symbol + b`` with the symbol in ``[lo, hi]``."""

    def __init__(self, name, leaf, dtype, dims):
        self.name, self.leaf, self.dtype, self.dims = name, leaf, dtype, dims

    def check(self, x, values):
        """Raise AssertionError as PyTorch's guards do; ``values`` binds symbols seen so
        far (so two inputs sharing a Dim must agree)."""
        if not isinstance(x, TensorBase):
            raise AssertionError(f"Guard failed: {self.name} is a {type(x).__name__}, "
                                 f"expected a tensor")
        if x.dim() != len(self.dims):
            raise AssertionError(f"Guard failed: {self.name}.dim() == {len(self.dims)}")
        if x.dtype != self.dtype:
            raise AssertionError(f"Guard failed: {self.name}.dtype == {self.dtype}")
        for d, spec in enumerate(self.dims):
            n = x.shape[d]
            where = f"{self.name}.size()[{d}]"
            if isinstance(spec, int):
                if n != spec:
                    raise AssertionError(f"Guard failed: {where} == {spec}")
                continue
            sym, a, b, lo, hi = spec
            if (n - b) % a:
                raise AssertionError(f"Guard failed: ({where} - {b}) % {a} == 0")
            v = (n - b) // a
            if sym in values and values[sym] != v:
                raise AssertionError(f"Guard failed: {where} == {_expr(a, values[sym], b)}")
            values[sym] = v
            if v < lo:
                raise AssertionError(f"Guard failed: {where} >= {_expr(a, lo, b)}")
            if hi is not None and v > hi:
                raise AssertionError(f"Guard failed: {where} <= {_expr(a, hi, b)}")


def _expr(a, v, b):
    return a * v + b


def _flat_forward(self, *args, **kwargs):
    leaves, spec = tree_flatten((args, kwargs))
    if spec != self._in_spec:
        raise ValueError(f"Trying to flatten user inputs with exported input tree spec: \n"
                         f"{spec_str(self._in_spec)}\nbut actually got inputs with tree spec "
                         f"of: \n{spec_str(spec)}.\nPlease check that the inputs have the "
                         f"same number and type of args and kwargs as the ones you used when "
                         f"tracing.")
    if self._check_guards:
        values = {}
        for c in self._input_checks:
            c.check(leaves[c.leaf], values)
        for i, v in self._constant_inputs:
            if leaves[i] != v or type(leaves[i]) is not type(v):
                raise AssertionError(f"Guard failed: input {i} == {v!r}")
    outs = self._graph_forward(*(leaves[i] for i in self._input_leaves))
    return tree_unflatten(list(outs), self._out_spec)


class _ExportedModule(GraphModule):
    """A GraphModule whose ``forward`` takes the original call's arguments."""

    def recompile(self):
        code = super().recompile()
        type(self)._graph_forward = type(self).forward
        type(self).forward = _flat_forward
        return code


def _unlifted_graph(ep):
    """The program's graph with state placeholders turned into get_attr nodes."""
    kinds = {s.arg.name: s for s in ep.graph_signature.input_specs
             if s.kind != InputKind.USER_INPUT}
    g = Graph()
    val = {}
    state = []
    for node in ep.graph.nodes:
        if node.op != "placeholder":
            continue
        if node.name in kinds:
            state.append(node)
        else:
            val[node] = g.placeholder(node.name)
            val[node].meta = dict(node.meta)
    for node in state:
        val[node] = g.get_attr(kinds[node.name].target)
        val[node].meta = dict(node.meta)
    out = g.graph_copy(ep.graph, val)
    g.output(out)
    return g


def unlift(ep, check_guards=True):
    """The Module ``ep.module()`` returns."""
    root = dict(ep.state_dict)
    root.update(ep.constants)
    root.update(ep._subgraphs)
    gm = _ExportedModule(root, _unlifted_graph(ep))
    for name, spec in ((s.target, s) for s in ep.graph_signature.input_specs):
        if spec.kind == InputKind.BUFFER and spec.persistent is False:
            owner, field = _owner_of(gm, name)
            owner._non_persistent_buffers_set.add(field)
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            owner, field = _owner_of(gm, name)
            value = owner._buffers.pop(field)
            object.__setattr__(owner, field, value)
    gm._in_spec, gm._out_spec = ep.call_spec.in_spec, ep.call_spec.out_spec
    gm._input_leaves = list(ep._input_leaves)
    gm._input_checks = list(ep._input_checks)
    gm._constant_inputs = list(ep._constant_inputs)
    gm._check_guards = check_guards
    gm.meta["range_constraints"] = dict(ep.range_constraints)
    return gm


def _owner_of(gm, name):
    prefix, _, field = name.rpartition(".")
    return (gm.get_submodule(prefix) if prefix else gm), field
