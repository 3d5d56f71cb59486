"""Exceptions of ``ember.compile`` (``torch._dynamo.exc``)."""

__all__ = ["BackendCompilerFailed", "FailOnRecompileLimitHit", "InvalidBackend",
           "TorchDynamoException", "Unsupported"]


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
