"""Symbolic tracing (``torch.fx.symbolic_trace``): run a Module's ``forward`` (or a function)
on Proxies and record what it does.

Calls to ember's leaf modules (the layers of ``ember.nn``) become ``call_module`` nodes,
parameters and buffers read as attributes become ``get_attr`` nodes, methods called on a
Proxy become ``call_method`` nodes and functions of ``ember`` / ``ember.nn.functional``
called with a Proxy become ``call_function`` nodes.  ember tensors have no
``__torch_function__`` protocol, so those functions are patched for the duration of the
trace (in their modules and in the traced code's globals), as ``torch.fx.wrap`` does.
"""
import builtins
import functools
import inspect
import sys

from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import map_aggregate
from ember.fx.proxy import Proxy, TraceError, contains_proxy

__all__ = ["Tracer", "symbolic_trace", "wrap"]

_wrapped = []           # (globals dict, name) registered by wrap()


def wrap(fn_or_name):
    """Record calls to the module-level function ``fn_or_name`` (a function or its name)
    as ``call_function`` nodes instead of tracing through them.  Call at module scope."""
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError("Unsupported type for global function! Must be either a callable "
                             "or string name")
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped.append((caller.f_globals, name))
    return fn_or_name


class Tracer:
    """Builds a Graph by running code on Proxies; subclass and override
    ``is_leaf_module``/``create_arg`` to change what is recorded."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(),
                 param_shapes_constant=False):
        self.autowrap_functions = tuple(autowrap_functions)
        self.autowrap_modules = tuple(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.graph = None
        self.root = None
        self.tensor_attrs = {}
        self._module_path = {}

    # ---- what gets recorded ------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """ember.nn layers are leaves (one ``call_module`` node); containers such as
        Sequential are traced through."""
        from ember.nn.modules.container import Sequential
        mod = type(m).__module__ or ""
        return (mod.startswith("ember.nn") and not isinstance(m, Sequential))

    def path_of_module(self, mod):
        path = self._module_path.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """Record ``m(*args, **kwargs)`` as one node if ``m`` is a leaf, else trace its
        forward."""
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A parameter or buffer read as a module attribute becomes a ``get_attr`` node."""
        from ember.core.tensor import Tensor
        if isinstance(attr_val, Tensor):
            path = self._tensor_path(attr_val)
            if path is not None:
                if path not in parameter_proxy_cache:
                    parameter_proxy_cache[path] = self.create_proxy("get_attr", path, (), {})
                return parameter_proxy_cache[path]
        return attr_val

    def _tensor_path(self, t):
        for name, p in self.root.named_parameters():
            if p is t:
                return name
        for name, b in self.root.named_buffers():
            if b is t:
                return name
        return None

    def create_arg(self, a):
        """A value as a node argument: Proxies become their nodes, tensors owned by the
        root become ``get_attr`` nodes, other tensors are installed on the root as
        ``_tensor_constantN``."""
        from ember.core.tensor import Tensor
        from ember.nn.modules.module import Module

        def convert(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):
                path = self._tensor_path(x)
                if path is None:
                    path = self.tensor_attrs.get(id(x))
                if path is None:
                    i = 0
                    while hasattr(self.root, f"_tensor_constant{i}"):
                        i += 1
                    path = f"_tensor_constant{i}"
                    setattr(self.root, path, x)
                    self.tensor_attrs[id(x)] = path
                return self.create_node("get_attr", path, (), {})
            if isinstance(x, Module):
                raise RuntimeError(f"Unsupported argument: a module ({type(x).__name__}) "
                                   f"cannot be a graph argument")
            return x
        return map_aggregate(a, convert)

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        return Proxy(node, self)

    # ---- the trace ---------------------------------------------------------------------------
    def trace(self, root, concrete_args=None):
        """Trace ``root`` (a Module or a function) and return the Graph."""
        from ember.nn.modules.module import Module
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            self_arg = [root]
        else:
            self.root = Module()
            fn = root
            self_arg = []
        self._module_path = {id(m): name for name, m in self.root.named_modules()}
        self.graph = Graph(tracer_cls=type(self))
        self.graph._tracer = self
        args = self._placeholders(fn, len(self_arg), concrete_args)
        with _Patcher(self, getattr(fn, "__globals__", {})):
            out = fn(*self_arg, *args)
        self.create_node("output", "output", (self.create_arg(out),), {})
        return self.graph

    def _placeholders(self, fn, skip, concrete_args):
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[skip:]
        concrete = dict(concrete_args or {})
        args = []
        for p in params:
            if p.name in concrete:
                args.append(concrete[p.name])
                continue
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                raise TraceError(f"symbolic_trace: *{p.name} cannot be traced; pass "
                                 f"concrete_args or use explicit arguments")
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                continue
            default = p.default
            node = self.create_node("placeholder", p.name, () if default is p.empty
                                    else (default,), {})
            args.append(Proxy(node, self))
        return args


class _Patcher:
    """For the duration of a trace: Module calls and attribute reads go through the tracer,
    and ember's functions record nodes when given a Proxy."""

    def __init__(self, tracer, fn_globals):
        self.tracer = tracer
        self.fn_globals = fn_globals
        self._undo = []

    def _set(self, obj, name, value):
        had = name in vars(obj) if not isinstance(obj, dict) else name in obj
        old = (vars(obj) if not isinstance(obj, dict) else obj).get(name)
        self._undo.append((obj, name, had, old))
        if isinstance(obj, dict):
            obj[name] = value
        else:
            setattr(obj, name, value)

    def __enter__(self):
        from ember.nn.modules.module import Module
        tracer = self.tracer
        orig_call = Module.__call__
        orig_getattr = Module.__getattr__
        cache = {}

        def module_call(mod, *args, **kwargs):
            return tracer.call_module(mod, functools.partial(orig_call, mod), args, kwargs)

        def module_getattr(mod, name):
            return tracer.getattr(name, orig_getattr(mod, name), cache)

        self._set(Module, "__call__", module_call)
        self._set(Module, "__getattr__", module_getattr)
        wrapped = {}
        import ember
        namespaces = [ember]
        nnf = sys.modules.get("ember.nn.functional")
        if nnf is not None:
            namespaces.append(nnf)
        for ns in namespaces:
            for name, fn in list(vars(ns).items()):
                if name.startswith("_") or not callable(fn) or isinstance(fn, type):
                    continue
                if inspect.ismodule(fn):
                    continue
                w = wrapped.get(id(fn)) or _leaf_wrapper(tracer, fn)
                wrapped[id(fn)] = w
                self._set(ns, name, w)
        for fn in tracer.autowrap_functions:
            wrapped[id(fn)] = _leaf_wrapper(tracer, fn)
        for name, value in list(self.fn_globals.items()):
            if id(value) in wrapped and wrapped[id(value)] is not value:
                self._set(self.fn_globals, name, wrapped[id(value)])
        for globals_, name in _wrapped:
            if name in globals_:
                self._set(globals_, name, _leaf_wrapper(tracer, globals_[name]))
            elif hasattr(builtins, name):
                self._set(globals_, name, _leaf_wrapper(tracer, getattr(builtins, name)))
        return self

    def __exit__(self, *exc):
        for obj, name, had, old in reversed(self._undo):
            if isinstance(obj, dict):
                if had:
                    obj[name] = old
                else:
                    obj.pop(name, None)
            elif had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)
        self._undo.clear()
        return False


def _leaf_wrapper(tracer, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if contains_proxy((args, kwargs)):
            return tracer.create_proxy("call_function", fn, args, kwargs)
        return fn(*args, **kwargs)
    wrapper.__wrapped_fx_target__ = fn
    return wrapper


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (a Module or a function) into a GraphModule."""
    from ember.nn.modules.module import Module
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

