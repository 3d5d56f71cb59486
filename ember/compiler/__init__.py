"""``ember.compiler`` (``torch.compiler``): the compile API and its controls.

``compile`` captures calls into graphs and runs them through a backend (see
``ember._dynamo``); ``counters`` (an ember addition) tells how many graphs were compiled,
recompiles and graph breaks with their reasons, guards per graph; ``compile_times()`` the
time each phase took.
"""
from ember._dynamo.backends.registry import list_backends as _list_backends
from ember._dynamo.backends.registry import register_backend as register_backend
from ember._dynamo.eval_frame import disable as disable
from ember._dynamo.eval_frame import is_compiling as is_compiling
from ember._dynamo.stance import set_stance as set_stance
from ember._dynamo.utils import compile_times as compile_times
from ember._dynamo.utils import counters as counters
from ember.compiler._compile import CompileMode as CompileMode
from ember.compiler._compile import compile as compile

__all__ = ["CompileMode", "allow_in_graph", "assume_constant_result", "compile",
           "compile_times", "counters", "cudagraph_mark_step_begin", "disable", "is_compiling",
           "is_dynamo_compiling", "list_backends", "register_backend", "reset", "set_stance"]


def list_backends(exclude_tags=("debug", "experimental")):
    """Names of the backends ``compile`` accepts (debug backends such as "eager" only with
    ``exclude_tags=()``)."""
    return _list_backends(exclude_tags)


def reset():
    """Forget every captured graph and the counters."""
    from ember._dynamo.eval_frame import reset as _reset
    _reset()


def is_dynamo_compiling():
    """As ``is_compiling``: True while a call is being captured on this thread."""
    return is_compiling()


def allow_in_graph(fn):
    """Trust ``fn``: its Python is not watched for side effects while a call is captured
    (ember records ops, not Python functions, so what ``fn`` computes is captured op by
    op either way).  Returns ``fn``."""
    from ember._dynamo.monitor import trust
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, got {type(fn).__name__}")
    trust(fn)
    return fn


def assume_constant_result(fn):
    """Mark ``fn`` as returning a constant a capture may bake in.  ember records ops, not
    Python calls: a Python value ``fn`` returns enters the graph as a constant when the call
    is captured, marked or not.  Returns ``fn``."""
    fn._dynamo_marked_constant = True
    return fn


def cudagraph_mark_step_begin():
    """Marks a training step for CUDA graphs; ember's CPU backends have none (no-op)."""
