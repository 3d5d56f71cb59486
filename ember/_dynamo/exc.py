"""Exceptions of ``ember.compile`` and ``ember.export`` (``torch._dynamo.exc``)."""
import enum

__all__ = ["BackendCompilerFailed", "CondOpArgsMismatchError", "FailOnRecompileLimitHit",
           "InvalidBackend", "TorchDynamoException", "UncapturedHigherOrderOpError",
           "Unsupported", "UserError", "UserErrorType"]


class TorchDynamoException(RuntimeError):
    """Base class of the errors ``ember.compile`` raises."""


class Unsupported(TorchDynamoException):
    """A capture could not put the whole call in one graph (data-dependent control flow, an
    op without a graph form, a side effect); raised under ``fullgraph=True``, else the
    call runs eagerly.  ``reason`` says why."""

    def __init__(self, msg, *, reason=None):
        super().__init__(msg)
        self.reason = reason or msg


class InvalidBackend(TorchDynamoException):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


class BackendCompilerFailed(TorchDynamoException):
    """The backend raised while compiling a captured graph."""

    def __init__(self, backend_fn, inner_exception):
        self.backend_name = getattr(backend_fn, "__name__", "?")
        self.inner_exception = inner_exception
        super().__init__(f"backend={self.backend_name!r} raised:\n"
                         f"{type(inner_exception).__name__}: {inner_exception}")


class FailOnRecompileLimitHit(TorchDynamoException):
    """A ``fullgraph=True`` function needed more recompiles than ``recompile_limit``."""


class UncapturedHigherOrderOpError(TorchDynamoException):
    """A higher-order operator (``ember.cond``, ``ember.while_loop``) was given functions
    that break its contract (a branch mutating or returning its input while autograd
    records, branches whose outputs differ in structure, rank or dtype)."""


class CondOpArgsMismatchError(TorchDynamoException):
    """The branches of ``ember.cond`` return different numbers of outputs."""


class UserErrorType(enum.Enum):
    DYNAMIC_CONTROL_FLOW = enum.auto()
    ANTI_PATTERN = enum.auto()
    STANDARD_LIBRARY = enum.auto()
    CONSTRAINT_VIOLATION = enum.auto()
    DYNAMIC_DIM = enum.auto()
    INVALID_INPUT = enum.auto()
    INVALID_OUTPUT = enum.auto()
    UNSUPPORTED_ALIASED_MUTATED_DYNAMIC_INPUTS = enum.auto()


class UserError(TorchDynamoException):
    """An error in how ``ember.export`` was called (``error_type`` says which kind)."""

    def __init__(self, error_type, msg, case_name=None):
        super().__init__(msg)
        self.error_type = error_type
        self.message = msg
        self.case_name = case_name
