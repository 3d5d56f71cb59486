"""ember's graph capture (``torch._dynamo``): ``optimize`` compiles a function or Module,
capturing each call through the dispatcher into FX graphs guarded by what the capture
assumed.  Use it through ``ember.compile``; see ``eval_frame`` for the call path,
``capture`` for the recording, ``guards`` for reuse and ``aot`` for training."""
from ember._dynamo import config as config
from ember._dynamo.backends.registry import list_backends as list_backends
from ember._dynamo.backends.registry import lookup_backend as lookup_backend
from ember._dynamo.backends.registry import register_backend as register_backend
from ember._dynamo.eval_frame import OptimizedModule as OptimizedModule
from ember._dynamo.eval_frame import disable as disable
from ember._dynamo.eval_frame import graph_break as graph_break
from ember._dynamo.eval_frame import is_compiling as is_compiling
from ember._dynamo.eval_frame import mark_dynamic as mark_dynamic
from ember._dynamo.eval_frame import mark_static as mark_static
from ember._dynamo.eval_frame import mark_static_address as mark_static_address
from ember._dynamo.eval_frame import optimize as optimize
from ember._dynamo.eval_frame import reset as reset
from ember._dynamo.explain import explain as explain
from ember._dynamo.stance import set_stance as set_stance
from ember._dynamo.utils import compile_times as compile_times
from ember._dynamo.utils import counters as counters

__all__ = ["OptimizedModule", "compile_times", "config", "counters", "disable", "explain",
           "graph_break", "is_compiling", "list_backends", "lookup_backend", "mark_dynamic",
           "mark_static", "mark_static_address", "optimize", "register_backend", "reset",
           "set_stance"]
