"""``ExportedProgram`` (``torch.export.exported_program``): a whole program as one graph.

It holds the graph (``graph_module`` takes every parameter, buffer and constant as an input
before the user's inputs), the signature saying which input is what, the state_dict and
constants, the ranges of its symbolic sizes and the structure of the original call.
``module()`` gives a Module that is called like the original and computes the same.
"""
import collections
import copy
import dataclasses

from ember.fx.graph_module import GraphModule

__all__ = ["ExportedProgram", "ModuleCallEntry", "ModuleCallSignature"]

CallSpec = collections.namedtuple("CallSpec", ["in_spec", "out_spec"])


@dataclasses.dataclass
class ModuleCallSignature:
    inputs: list
    outputs: list
    in_spec: object
    out_spec: object
    forward_arg_names: list = None


@dataclasses.dataclass
class ModuleCallEntry:
    fqn: str
    signature: object = None


def _decomposed(graph, table):
    """A copy of ``graph`` whose calls to an op of ``table`` call its function instead."""
    g = copy.deepcopy(graph)
    for node in g.nodes:
        if node.op == "call_function" and node.target in table:
            node.target = table[node.target]
    return g


class ExportedProgram:
    """A program exported by ``ember.export.export``.

    Args:
        root: the GraphModule (or a Module or dict it takes its attributes from).
        graph: the graph (taken from ``root`` when it is a GraphModule and graph is None).
        graph_signature: an ``ExportGraphSignature``.
        state_dict: parameters and buffers by name.
        range_constraints: symbol -> ``ValueRange`` of each symbolic size.
        module_call_graph: ``ModuleCallEntry`` list; the first holds the call structure.
        example_inputs: the (args, kwargs) the program was exported with.
        constants: lifted tensor constants by name.
        verifiers: accepted for PyTorch's signature (ember verifies nothing more).
    """

    def __init__(self, root, graph, graph_signature, state_dict, range_constraints,
                 module_call_graph, example_inputs=None, constants=None, *, verifiers=None):
        if isinstance(root, GraphModule) and (graph is None or graph is root.graph):
            self._graph_module = root
        else:
            self._graph_module = GraphModule(root, graph)
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._module_call_graph = module_call_graph
        self._example_inputs = example_inputs
        self._constants = constants or {}
        self._verifiers = verifiers
        self._subgraphs = {n: m for n, m in self._graph_module.named_children()
                           if isinstance(m, GraphModule)}
        self._input_leaves = []             # set by export / load: the call's leaf of each
        self._input_checks = []             # user input placeholder, shape checks, values
        self._constant_inputs = []          # of non-tensor inputs

    # ---- what PyTorch's ExportedProgram exposes -------------------------------------------
    @property
    def graph_module(self):
        return self._graph_module

    @property
    def graph(self):
        return self._graph_module.graph

    @property
    def graph_signature(self):
        return self._graph_signature

    @property
    def state_dict(self):
        return self._state_dict

    @property
    def constants(self):
        return self._constants

    @property
    def tensor_constants(self):
        return self._constants

    @property
    def range_constraints(self):
        return self._range_constraints

    @property
    def module_call_graph(self):
        return self._module_call_graph

    @property
    def example_inputs(self):
        return self._example_inputs

    @property
    def call_spec(self):
        sig = self._module_call_graph[0].signature
        return CallSpec(sig.in_spec, sig.out_spec)

    @property
    def dialect(self):
        return "TRAINING"

    @property
    def verifiers(self):
        return self._verifiers or []

    @property
    def verifier(self):
        return self.verifiers[0] if self.verifiers else None

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for name in self._graph_signature.buffers:
            yield name, self._state_dict[name]

    def module(self, check_guards=True):
        """A Module called like the exported one (same arguments, same output structure),
        sharing this program's parameters and buffers; with ``check_guards`` it checks
        each call's inputs against the exported shapes (AssertionError)."""
        from ember.export._unlift import unlift
        return unlift(self, check_guards)

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """A copy of the program with the ops of ``decomp_table`` (op -> function computing
        it) replaced by calls to their functions.  ember's exported graphs already hold its
        primitive ops only (composites such as linear, conv or softmax are recorded as the
        primitives they run), so the default table is empty and the copy computes as this
        program does."""
        table = decomp_table or {}
        g = _decomposed(self.graph, table)
        root = {name: GraphModule(gm, _decomposed(gm.graph, table))
                for name, gm in self._subgraphs.items()}
        ep = ExportedProgram(root, g, copy.deepcopy(self._graph_signature), self._state_dict,
                             dict(self._range_constraints), self._module_call_graph,
                             self._example_inputs, self._constants, verifiers=self._verifiers)
        ep._input_leaves, ep._input_checks = self._input_leaves, self._input_checks
        ep._constant_inputs = self._constant_inputs
        return ep

    def validate(self):
        """Check the graph (topological order, unique names) and that the signature names
        one input per placeholder."""
        self.graph.lint()
        placeholders = [n.name for n in self.graph.nodes if n.op == "placeholder"]
        named = [s.arg.name for s in self._graph_signature.input_specs
                 if not hasattr(s.arg, "value")]
        if placeholders != named:
            raise AssertionError(f"graph placeholders {placeholders} do not match the "
                                 f"signature's inputs {named}")

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        code = "\n".join("    " + line for line in
                         self._graph_module.print_readable(print_output=False).splitlines())
        sig = "\n".join("    " + line for line in str(self._graph_signature).splitlines())
        return (f"ExportedProgram:\n{code}\n\nGraph signature: {sig}\nRange constraints: "
                f"{self._range_constraints}\n")

    __repr__ = __str__
