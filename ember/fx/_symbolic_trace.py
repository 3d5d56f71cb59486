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
import types

from ember._toplevel import _assert as _user_assert
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import has_side_effect, map_aggregate
from ember.fx.proxy import Proxy, TraceError, contains_proxy

__all__ = ["PH", "PHBase", "Tracer", "symbolic_trace", "wrap"]

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

    # ---- Python protocols a Proxy cannot answer symbolically -------------------------------
    def iter(self, obj):
        """Called when ``obj`` (a Proxy) is iterated other than by tuple unpacking."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def to_bool(self, obj):
        """Called when ``obj`` (a Proxy) is used as a condition."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def keys(self, obj):
        """``obj.keys()`` (as ``**proxy`` does) becomes a ``call_method`` node."""
        return self.create_proxy("call_method", "keys", (obj,), {})

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
        fn, args, kwargs = self._placeholders(fn, len(self_arg), concrete_args)
        with _Patcher(self, getattr(fn, "__globals__", {})):
            out = fn(*self_arg, *args, **kwargs)
        self.create_node("output", "output", (self.create_arg(out),), {})
        return self.graph

    def _placeholders(self, fn, skip, concrete_args):
        """Placeholders for ``fn``'s parameters after the first ``skip``; returns the
        function to call (``*args``/``**kwargs`` turned into plain parameters, so each is
        one Proxy) and the values to call it with: positional ones, and keyword-only ones
        by name (passing those positionally was a TypeError)."""
        params = list(inspect.signature(fn).parameters.values())
        if isinstance(concrete_args, tuple):
            names = [p.name for p in params[skip:]]
            if len(concrete_args) != len(names):
                raise RuntimeError(f"Tracing expected {len(names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(names, concrete_args))
        concrete = dict(concrete_args or {})
        fn = _flatten_varargs(fn, params)
        args, kwargs = [], {}
        for p in params[skip:]:
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                value = self._placeholder(f"*{p.name}", p.empty)
            elif p.kind is inspect.Parameter.VAR_KEYWORD:
                value = self._placeholder(f"**{p.name}", p.empty)
            elif p.name in concrete:
                value = self._concrete_arg(p, concrete[p.name])
            else:
                value = self._placeholder(p.name, p.default)
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
        return fn, args, kwargs

    def _placeholder(self, target, default):
        node = self.create_node("placeholder", target,
                                () if default is inspect.Parameter.empty else (default,), {})
        return Proxy(node, self)

    def _concrete_arg(self, param, value):
        """The value traced for a parameter given in ``concrete_args``.  The parameter stays
        in the signature (as ``<name>_1``); a guard checks callers pass the traced value.
        ``PH`` marks the parts of a structured value that stay symbolic."""
        if isinstance(value, PHBase):
            return self._placeholder(param.name, param.default)
        if _contains_ph(value):
            root = self._placeholder(param.name, param.default)
            return _bind_ph(value, root)
        proxy = self._placeholder(f"{param.name}_1", param.default)
        msg = f"{param.name} has been specialized to have value {value} but got another value"
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (proxy, msg), {})
        elif type(value) in (bool, int, float, str, complex):
            self.create_proxy("call_function", _assert, (proxy == value, msg), {})
        return value


class PHBase:
    """Marks a symbolic (placeholder) position inside a ``concrete_args`` value."""

    def __repr__(self):
        return "PH"


PH = PHBase()


def _contains_ph(value):
    found = []
    map_aggregate(value, lambda x: found.append(x) if isinstance(x, PHBase) else None)
    return bool(found)


def _bind_ph(value, proxy):
    """``value`` with each PH replaced by the matching item of ``proxy`` (its input)."""
    if isinstance(value, PHBase):
        return proxy
    if isinstance(value, dict):
        return {k: _bind_ph(v, proxy[k]) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_bind_ph(v, proxy[i]) for i, v in enumerate(value)]
        return items if isinstance(value, list) else type(value)(items)
    return value


def _assert(condition, message):
    """Raise AssertionError(``message``) unless ``condition`` (a guard on a concrete arg;
    ember._assert is the same check, for user code)."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value, message):
    """Guard that an argument specialized to None is None at run time."""
    if value is not None:
        raise AssertionError(message)


has_side_effect(_assert)
has_side_effect(_assert_is_none)
has_side_effect(_user_assert)       # ember._assert in traced code: kept by dead-code passes


def _flatten_varargs(fn, params):
    """``fn`` with ``*args``/``**kwargs`` turned into plain positional parameters, so a
    trace can pass one Proxy for each (as torch.fx does)."""
    code = getattr(fn, "__code__", None)
    flags = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
    if code is None or not code.co_flags & flags:
        return fn
    if code.co_kwonlyargcount:
        raise TraceError("symbolic_trace: keyword-only parameters together with *args or "
                         "**kwargs are not supported")
    extra = sum(1 for p in params if p.kind in (inspect.Parameter.VAR_POSITIONAL,
                                                 inspect.Parameter.VAR_KEYWORD))
    new_code = code.replace(co_flags=code.co_flags & ~flags,
                            co_argcount=code.co_argcount + extra)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


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
                if (name.startswith("_") and name != "_assert") or not callable(fn) or \
                        isinstance(fn, type):
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

