"""What each input and output of an exported graph is (``torch.export.graph_signature``).

An exported graph takes every parameter, buffer and lifted tensor constant as an input
before the user's inputs; its ``ExportGraphSignature`` lists one ``InputSpec`` per
placeholder (its kind, argument and the state_dict key it stands for) and one
``OutputSpec`` per output.
"""
import dataclasses
from enum import Enum, auto

__all__ = ["ConstantArgument", "CustomObjArgument", "ExportBackwardSignature",
           "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "SymBoolArgument", "SymFloatArgument", "SymIntArgument", "TensorArgument",
           "TokenArgument"]


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class TokenArgument:
    name: str


@dataclasses.dataclass
class SymIntArgument:
    name: str


@dataclasses.dataclass
class SymFloatArgument:
    name: str


@dataclasses.dataclass
class SymBoolArgument:
    name: str


@dataclasses.dataclass
class CustomObjArgument:
    name: str
    class_fqn: str
    fake_val: object = None


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


def _arg_str(arg):
    return str(arg.value) if isinstance(arg, ConstantArgument) else arg.name


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: object
    persistent: object = None

    def __post_init__(self):
        if self.kind == InputKind.BUFFER and self.persistent is None:
            raise AssertionError("InputSpec of a buffer needs persistent=True/False")

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{_arg_str(self.arg)}: {self.kind.name}{target}{persistent}"


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: object

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        return f"{_arg_str(self.arg)}: {self.kind.name}{target}"


@dataclasses.dataclass
class ExportBackwardSignature:
    gradients_to_parameters: dict
    gradients_to_user_inputs: dict
    loss_output: str


def _names(specs, kind):
    return tuple(s.target for s in specs if s.kind == kind)


@dataclasses.dataclass
class ExportGraphSignature:
    """The input and output specs of an exported graph, with PyTorch's views of them."""

    input_specs: list
    output_specs: list

    @property
    def parameters(self):
        return _names(self.input_specs, InputKind.PARAMETER)

    @property
    def buffers(self):
        return _names(self.input_specs, InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self.input_specs
                     if s.kind == InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self):
        return _names(self.input_specs, InputKind.CONSTANT_TENSOR)

    @property
    def lifted_custom_objs(self):
        return _names(self.input_specs, InputKind.CUSTOM_OBJ)

    @property
    def user_inputs(self):
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT)

    def _inputs_to(self, kind):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == kind}

    @property
    def inputs_to_parameters(self):
        return self._inputs_to(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self):
        return self._inputs_to(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self):
        return self._inputs_to(InputKind.CONSTANT_TENSOR)

    @property
    def inputs_to_lifted_custom_objs(self):
        return self._inputs_to(InputKind.CUSTOM_OBJ)

    def _outputs_to(self, kind):
        return {s.arg.name: s.target for s in self.output_specs if s.kind == kind}

    @property
    def buffers_to_mutate(self):
        return self._outputs_to(OutputKind.BUFFER_MUTATION)

    @property
    def parameters_to_mutate(self):
        return self._outputs_to(OutputKind.PARAMETER_MUTATION)

    @property
    def user_inputs_to_mutate(self):
        return self._outputs_to(OutputKind.USER_INPUT_MUTATION)

    @property
    def backward_signature(self):
        return None

    @property
    def assertion_dep_token(self):
        return None

    @property
    def input_tokens(self):
        return tuple(s.arg.name for s in self.input_specs if s.kind == InputKind.TOKEN)

    @property
    def output_tokens(self):
        return tuple(s.arg.name for s in self.output_specs if s.kind == OutputKind.TOKEN)

    def replace_all_uses(self, old, new):
        """Rename argument ``old`` to ``new`` in every spec (after a graph pass renamed a
        node)."""
        for spec in (*self.input_specs, *self.output_specs):
            if not isinstance(spec.arg, ConstantArgument) and spec.arg.name == old:
                spec.arg.name = new

    def get_replace_hook(self, replace_inputs=False):
        def hook(old, new, user):
            if user.op == "output" or (replace_inputs and old.op == "placeholder"):
                self.replace_all_uses(old.name, new)
        return hook

    def __str__(self):
        inputs = "\n".join(str(s) for s in self.input_specs)
        outputs = "\n".join(str(s) for s in self.output_specs)
        return f"\n# inputs\n{inputs}\n\n# outputs\n{outputs}\n"
