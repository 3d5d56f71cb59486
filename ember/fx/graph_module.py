"""GraphModule: a Module whose ``forward`` is generated from a Graph (``torch.fx.GraphModule``).

The generated source is kept as ``.code`` and registered with ``linecache``, so tracebacks
through a GraphModule show the line of generated code that failed.
"""
import itertools
import linecache
import types

from ember.fx.graph import Graph
from ember.nn.modules.module import Module

__all__ = ["GraphModule"]

_keys = itertools.count()


def _exec_source(src, globals_):
    key = f"<eval_with_key>.{next(_keys)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)
    return globals_["forward"]


def _split(target):
    *prefix, field = target.split(".")
    return prefix, field


def _copy_attr(from_module, to_module, target):
    """Copy ``from_module``'s attribute at dotted path ``target`` into ``to_module``,
    creating empty Modules for missing levels; parameters, buffers and submodules keep
    their kind."""
    prefix, field = _split(target)
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    _assign(to_module, field, orig, from_module)


def _assign(to_module, field, value, from_module=None):
    from ember.core.tensor import Tensor
    from ember.nn.parameter import Parameter
    if isinstance(value, Parameter):
        to_module.register_parameter(field, value)
    elif isinstance(value, Tensor) and from_module is not None \
            and field in getattr(from_module, "_buffers", {}):
        to_module.register_buffer(field, value)
    elif isinstance(value, Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


def _assign_path(to_module, target, value):
    prefix, field = _split(target)
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    _assign(to_module, field, value)


class GraphModule(Module):
    """A Module built from ``root`` (a Module, or a dict of attribute path -> value) and
    ``graph``: it holds the submodules, parameters and buffers the graph's ``get_attr`` and
    ``call_module`` nodes name, and runs the graph's generated code as ``forward``."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so forward can be set on it
        impl = type(cls.__name__, (cls,), {})
        return super().__new__(impl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        type(self).__name__ = class_name
        type(self).__qualname__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           f"that target was not provided in ``root``!")
                    _assign_path(self, node.target, root[node.target])
        else:
            raise RuntimeError("Unsupported type " + str(type(root)) + " passed for root!")
        self.meta = {}
        self.graph = graph

    @property
    def graph(self):
        """The Graph this module runs; assigning one regenerates ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g)}")
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of ``forward`` generated from the graph."""
        return self._code

    def recompile(self):
        """Regenerate ``forward`` from the graph (after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", python_code.src)
        type(self).forward = _exec_source(python_code.src, dict(python_code.globals))
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The generated module as a class definition (printed unless ``print_output`` is
        False)."""
        body = "\n".join("    " + line for line in self._code.splitlines())
        text = f"class {type(self).__name__}(ember.nn.Module):\n{body}\n"
        if print_output:
            print(text)
        return text

    def to_folder(self, folder, module_name="FxModule"):
        """Write this module as an importable package in ``folder``: ``module.py`` holding
        a class ``module_name`` (its submodules rebuilt from their reprs where those
        construct them, else loaded from ``<name>.pt``; its own parameters and buffers made
        empty) that loads ``state_dict.pt``, and ``__init__.py`` re-exporting it."""
        import os

        import ember
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        state = os.path.join(folder, "state_dict.pt")
        ember.save(self.state_dict(), state)
        lines = []
        for name, child in self.named_children():
            made = _constructor(child)
            if made is None:
                path = os.path.join(folder, f"{name}.pt")
                ember.save(child, path)
                made = f"ember.load(r'{path}', weights_only=False)"
            lines.append(f"setattr(self, {name!r}, {made})")
        for name, t in self.named_buffers(recurse=False):
            lines.append(f"self.register_buffer({name!r}, ember.empty({list(t.shape)}, "
                         f"dtype=ember.{t.dtype.name}))")
        for name, t in self.named_parameters(recurse=False):
            lines.append(f"setattr(self, {name!r}, ember.nn.Parameter(ember.empty("
                         f"{list(t.shape)}, dtype=ember.{t.dtype.name}), "
                         f"requires_grad={t.requires_grad}))")
        lines.append(f"self.load_state_dict(ember.load(r'{state}'))")
        python_code = self._graph.python_code(root_module="self")
        init = "\n".join("        " + line for line in lines)
        forward = "\n".join("    " + line for line in python_code.src.strip("\n").splitlines())
        source = (f"{_imports(python_code.globals)}\nfrom ember.nn import *  # noqa: F403\n\n\n"
                  f"class {module_name}(ember.nn.Module):\n    def __init__(self):\n"
                  f"        super().__init__()\n{init}\n\n{forward}\n")
        with open(os.path.join(folder, "module.py"), "w") as f:
            f.write(source)
        with open(os.path.join(folder, "__init__.py"), "w") as f:
            f.write("from .module import *  # noqa: F403\n")

    def add_submodule(self, target, m):
        """Install ``m`` at dotted path ``target`` (creating empty parents); True on
        success."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at dotted path ``target``; True if it was there."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
        if field not in getattr(mod, "_modules", {}):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self):
        """Drop the submodules no ``call_module`` or ``get_attr`` node uses."""
        used = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def __str__(self):
        return super().__str__() + "\n\n\n" + self._code

    def __reduce__(self):
        # instances have their own class (see __new__), which pickle cannot name
        body = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return _rebuild_graph_module, (body, self._graph, type(self).__name__)

    def __copy__(self):
        return GraphModule(self, self._graph, type(self).__name__)

    def __deepcopy__(self, memo):
        import copy
        root = Module()
        root.__dict__ = copy.deepcopy(self.__dict__, memo)
        return GraphModule(root, copy.deepcopy(self._graph, memo), type(self).__name__)


def _constructor(module):
    """Source that rebuilds ``module`` (its repr, for a module of ember.nn without
    submodules whose repr evaluates to a module of its class), or None."""
    import ember.nn as nn
    if not type(module).__module__.startswith("ember.nn") or next(module.children(), None):
        return None
    text = repr(module)
    try:
        made = eval(text, dict(vars(nn)))
    except Exception:
        return None
    return text if type(made) is type(module) else None


def _imports(globals_):
    """Import lines binding the names generated code reads: modules, the math constants,
    functions and classes by their module and qualified name."""
    lines = ["import ember", "from math import inf, nan", "NoneType = type(None)"]
    for name, value in globals_.items():
        if name in ("ember", "inf", "nan", "NoneType"):
            continue
        if isinstance(value, types.ModuleType):
            lines.append(f"import {value.__name__} as {name}" if value.__name__ != name
                         else f"import {name}")
        elif getattr(value, "__module__", None) and "<" not in getattr(value, "__qualname__", "<"):
            head, _, rest = value.__qualname__.partition(".")
            bound = f"from {value.__module__} import {head}"
            lines.append(bound + (f" as {name}" if not rest and head != name else ""))
            if rest:
                lines.append(f"{name} = {head}.{rest}")
        else:
            raise RuntimeError(f"to_folder: generated code reads {name} = {value!r}, which "
                               f"cannot be imported by name")
    return "\n".join(lines)


def _rebuild_graph_module(body, graph, class_name):
    gm = GraphModule.__new__(GraphModule)
    type(gm).__name__ = type(gm).__qualname__ = class_name
    gm.__dict__.update(body)
    gm.graph = graph
    return gm
