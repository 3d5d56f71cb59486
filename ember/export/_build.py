"""From a finished export trace to the graph of an ExportedProgram and its signature.

The exported graph takes, in PyTorch's order, every parameter (``p_<name>``), buffer
(``b_<name>``) and lifted tensor constant (``c_<name>``) of the Module, then the user's
tensor inputs.  Symbolic sizes are read from the inputs (``sym_size(x, 0)``) instead of
being inputs of their own, and the subgraphs of cond/while_loop nodes become submodules
read by ``get_attr`` nodes (``true_graph_0``), as PyTorch's exported graphs have them.
"""
from ember._higher_order_ops._hop import HigherOrderOperator
from ember.core._tensor import TensorBase
from ember.export.graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node

__all__ = ["Built", "build", "sym_size"]


def sym_size(input, dim):
    """``input.size(dim)``: how an exported graph reads a symbolic size from an input."""
    return input.shape[dim]


sym_size._fx_qualname = "ember.export._build.sym_size"


class Built:
    """The pieces of an ExportedProgram: its graph, signature, state and constants."""

    def __init__(self, graph, signature, state_dict, constants, subgraphs, input_leaves):
        self.graph, self.signature = graph, signature
        self.state_dict, self.constants = state_dict, constants
        self.subgraphs = subgraphs          # get_attr name -> GraphModule
        self.input_leaves = input_leaves    # leaf index of each user input placeholder


def _owner(mod, name):
    prefix, _, field = name.rpartition(".")
    return (mod.get_submodule(prefix) if prefix else mod), field


def _state_placeholder(g, rec, lifted, val, t, name):
    """A placeholder for state tensor ``t`` (the node the capture lifted it to maps there)."""
    node = g.placeholder(name)
    entry = lifted.pop(id(t), None)
    if entry is None:
        node.meta["val"] = rec.fake_mode.from_tensor(t, static_shapes=True)
    else:
        node.meta["val"] = entry[1].meta.get("val")
        val[entry[1]] = node
    return node


def _state(g, rec, mod, lifted, val):
    """Placeholders for every parameter and buffer, then for the other tensors the code read
    (lifted constants); returns (input specs, state_dict, constants)."""
    specs, state, constants = [], {}, {}
    for name, p in mod.named_parameters():
        node = _state_placeholder(g, rec, lifted, val, p, "p_" + name.replace(".", "_"))
        specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(node.name), name))
        state[name] = p
    for name, b in mod.named_buffers():
        owner, field = _owner(mod, name)
        node = _state_placeholder(g, rec, lifted, val, b, "b_" + name.replace(".", "_"))
        persistent = field not in owner._non_persistent_buffers_set
        specs.append(InputSpec(InputKind.BUFFER, TensorArgument(node.name), name,
                               persistent=persistent))
        (state if persistent else constants)[name] = b
    for t, _, src in rec.fw.lifted:
        if id(t) not in lifted:
            continue
        target = src.name[len("self."):] if src.kind == "attr" else \
            f"lifted_tensor_{len(constants)}"
        node = _state_placeholder(g, rec, lifted, val, t, "c_" + target.replace(".", "_"))
        specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(node.name), target))
        constants[target] = t
    return specs, state, constants


def build(tr, mod):
    """The ExportedProgram pieces for trace ``tr`` of Module ``mod``."""
    rec = tr.rec
    g = Graph()
    val = {}
    lifted = {id(t): (t, node) for t, node, _ in rec.fw.lifted}
    specs, state, constants = _state(g, rec, mod, lifted, val)
    input_leaves = []
    for i, x in enumerate(tr.leaves):
        if i in tr.input_nodes:
            old = tr.input_nodes[i]
            new = g.placeholder(old.name)
            new.meta["val"] = old.meta.get("val")
            val[old] = new
            arg = TensorArgument(new.name)
        elif not isinstance(x, TensorBase):     # a constant input: specialised
            new = g.placeholder(tr.names.get(i, f"arg{i}"))
            arg = ConstantArgument(new.name, x)
        else:                                   # the same tensor passed again
            continue
        input_leaves.append(i)
        specs.append(InputSpec(InputKind.USER_INPUT, arg, None))
    symctx = tr.symctx
    for ph, (leaf, dim), sym in zip(symctx.placeholders("forward"), symctx.sources,
                                    symctx.symbols):
        node = g.call_function(sym_size, (val[tr.input_nodes[leaf]], dim))
        node.meta["val"] = symctx.shape_env.create_symintnode(sym)
        val[ph] = node
    g.graph_copy(rec.fw.graph, val)
    outs = tuple(val[rec.node_of(o)] if isinstance(o, TensorBase) else o
                 for o in tr.out_leaves)
    g.output(outs)
    out_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(o.name) if
                            isinstance(o, Node) else ConstantArgument("", o), None)
                 for o in outs]
    g.eliminate_dead_code()
    subgraphs = _subgraphs_as_attributes(g)
    return Built(g, ExportGraphSignature(specs, out_specs), state, constants, subgraphs,
                 input_leaves)


_PREFIXES = {"cond": ("true_graph", "false_graph"),
             "while_loop": ("while_loop_cond_graph", "while_loop_body_graph")}


def _subgraphs_as_attributes(g):
    """Turn the GraphModule arguments of higher-order op nodes into get_attr nodes."""
    subgraphs = {}
    counts = {}
    for node in list(g.nodes):
        if node.op != "call_function" or not isinstance(node.target, HigherOrderOperator):
            continue
        kind = node.target.name()
        k = counts.get(kind, 0)
        counts[kind] = k + 1
        names = iter(_PREFIXES.get(kind, (f"{kind}_graph_a", f"{kind}_graph_b")))
        args = list(node.args)
        for pos, a in enumerate(args):
            if isinstance(a, GraphModule):
                name = f"{next(names)}_{k}"
                subgraphs[name] = a
                with g.inserting_before(node):
                    args[pos] = g.get_attr(name)
        node.args = tuple(args)
    return subgraphs
