"""Exported graphs as JSON, and back, without running code from the file.

A node is ``{"name", "op", "target", "args", "kwargs"}``.  Arguments are tagged values
(``{"node": name}``, ``{"tuple": [...]}``, ``{"dtype": "float32"}``, ...); arrays (the
constants of tensor factories) go to a side list the caller stores as tensors.  A
call_function target is written by its dotted name and read back only from an allow-list:
ember's operators (``ember.ops.ember.*``), the higher-order operators, ``operator``'s
functions, a few builtins and the helpers exported graphs call.  Anything else cannot be
saved, and a file naming anything else cannot be loaded.
"""
import builtins
import math
import operator

import numpy as np

from ember.fx.graph import Graph, _qualified_name
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node

__all__ = ["FormatError", "decode_graph", "decode_spec", "decode_value", "encode_graph",
           "encode_spec", "encode_value"]


class FormatError(RuntimeError):
    """A saved program that cannot be read (damaged, or from another producer)."""


def _allowed_targets():
    import ember
    from ember.core import _tensor as _core
    from ember.export._build import sym_size
    fns = [getattr(operator, n) for n in dir(operator) if not n.startswith("_")
           and callable(getattr(operator, n))]
    fns += [builtins.max, builtins.min, builtins.abs, builtins.int, builtins.float,
            builtins.bool, math.floor, math.ceil, math.trunc, ember.empty, _core._from_host,
            sym_size]
    return {_qualified_name(f): f for f in fns}


_TARGETS = None


def _target_name(fn):
    name = getattr(fn, "_fx_qualname", None) or _qualified_name(fn)
    if _resolve_target(name) is not fn:
        raise TypeError(f"ember.export.save: cannot save a call to {fn!r} (only ember's "
                        f"operators and the functions exported graphs use can be saved)")
    return name


def _resolve_target(name):
    global _TARGETS
    import ember
    for prefix in ("ember.ops.ember.", "ember.ops.higher_order."):
        if name.startswith(prefix):
            namespace = ember.ops.ember if prefix.endswith("ember.") else \
                ember.ops.higher_order
            return getattr(namespace, name[len(prefix):], None)
    if _TARGETS is None:
        _TARGETS = _allowed_targets()
    return _TARGETS.get(name)


# ---- values -------------------------------------------------------------------------------

def encode_value(v, arrays):
    """A JSON form of node argument ``v``; NumPy arrays are appended to ``arrays``."""
    from ember.core._device import device
    from ember.core._dtype import dtype
    if isinstance(v, Node):
        return {"node": v.name}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, complex):
        return {"complex": [encode_value(v.real, arrays), encode_value(v.imag, arrays)]}
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return {"tuple": [encode_value(x, arrays) for x in v]}
    if isinstance(v, list):
        return {"list": [encode_value(x, arrays) for x in v]}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {"dict": [[k, encode_value(x, arrays)] for k, x in v.items()]}
    if isinstance(v, dtype):
        return {"dtype": v.name}
    if isinstance(v, device):
        return {"device": str(v)}
    if isinstance(v, slice):
        return {"slice": [encode_value(x, arrays) for x in (v.start, v.stop, v.step)]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, np.ndarray):
        arrays.append(v)
        return {"array": len(arrays) - 1}
    if isinstance(v, GraphModule):
        return {"subgraph": encode_graph(v.graph, arrays)}
    name = _ember_constant(v)
    if name is not None:
        return {"ember": name}
    raise TypeError(f"ember.export.save: cannot save a graph argument of type "
                    f"{type(v).__name__} ({v!r})")


def _ember_constant(v):
    import ember
    if type(v) in (ember.memory_format, ember.layout):
        return next((n for n in dir(ember) if getattr(ember, n, None) is v), None)
    return None


def decode_value(v, nodes, arrays):
    """The argument a JSON form stands for (``nodes``: name -> Node)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict) and len(v) == 1:
        (tag, x), = v.items()
        decoder = _DECODERS.get(tag)
        if decoder is not None:
            return decoder(x, nodes, arrays)
    raise FormatError(f"ember.export.load: unknown graph argument {v!r}")


def _node_ref(x, nodes, arrays):
    if x not in nodes:
        raise FormatError(f"ember.export.load: a node reads '{x}', defined nowhere before it")
    return nodes[x]


def _float(x, nodes, arrays):
    if x not in ("inf", "-inf", "nan"):
        raise FormatError(f"ember.export.load: invalid float {x!r}")
    return float(x)


def _dtype(x, nodes, arrays):
    from ember.core import _dtype as _dtypes
    if x not in _dtypes._dtype_by_name:
        raise FormatError(f"ember.export.load: unknown dtype {x!r}")
    return _dtypes._dtype_by_name[x]


def _ember(x, nodes, arrays):
    import ember
    v = getattr(ember, x, None) if isinstance(x, str) else None
    if _ember_constant(v) != x:
        raise FormatError(f"ember.export.load: unknown constant ember.{x}")
    return v


def _array(x, nodes, arrays):
    if type(x) is not int or not 0 <= x < len(arrays):
        raise FormatError(f"ember.export.load: invalid array reference {x!r}")
    return arrays[x]


def _seq(kind):
    def decode(x, nodes, arrays):
        if not isinstance(x, list):
            raise FormatError(f"ember.export.load: invalid {kind.__name__} {x!r}")
        return kind(decode_value(e, nodes, arrays) for e in x)
    return decode


def _dict(x, nodes, arrays):
    return {k: decode_value(e, nodes, arrays) for k, e in x}


def _slice(x, nodes, arrays):
    return slice(*(decode_value(e, nodes, arrays) for e in x))


def _device(x, nodes, arrays):
    from ember.core._device import device
    return device(x)


def _complex(x, nodes, arrays):
    return complex(*(decode_value(e, nodes, arrays) for e in x))


_DECODERS = {"node": _node_ref, "float": _float, "tuple": _seq(tuple), "list": _seq(list),
             "dict": _dict, "dtype": _dtype, "device": _device, "slice": _slice,
             "ellipsis": lambda x, n, a: Ellipsis, "array": _array, "ember": _ember,
             "complex": _complex,
             "subgraph": lambda x, n, a: _subgraph_module(decode_graph(x, a))}


def _subgraph_module(graph):
    from ember.nn.modules.module import Module
    return GraphModule(Module(), graph)


# ---- graphs -------------------------------------------------------------------------------

def encode_graph(graph, arrays):
    """The JSON form of ``graph``'s nodes."""
    out = []
    for n in graph.nodes:
        target = _target_name(n.target) if n.op == "call_function" else n.target
        out.append({"name": n.name, "op": n.op, "target": target,
                    "args": encode_value(tuple(n.args), arrays),
                    "kwargs": encode_value(dict(n.kwargs), arrays)})
    return out


_OPS = {"placeholder", "get_attr", "call_function", "output"}


def decode_graph(nodes, arrays):
    """The Graph a JSON node list describes (targets from the allow-list only)."""
    if not isinstance(nodes, list):
        raise FormatError("ember.export.load: a graph must be a list of nodes")
    g = Graph()
    by_name = {}
    for n in nodes:
        if not isinstance(n, dict) or n.get("op") not in _OPS or \
                not isinstance(n.get("name"), str):
            raise FormatError(f"ember.export.load: invalid node {n!r}")
        target = n.get("target")
        if n["op"] == "call_function":
            fn = _resolve_target(target) if isinstance(target, str) else None
            if fn is None:
                raise FormatError(f"ember.export.load: node '{n['name']}' calls {target!r}, "
                                  f"which is not an operator ember's programs may call")
            target = fn
        elif not isinstance(target, str):
            raise FormatError(f"ember.export.load: invalid target of node '{n['name']}'")
        args = decode_value(n.get("args"), by_name, arrays)
        kwargs = decode_value(n.get("kwargs"), by_name, arrays)
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise FormatError(f"ember.export.load: invalid arguments of node '{n['name']}'")
        node = g.create_node(n["op"], target, args, kwargs, name=n["name"])
        if node.name != n["name"]:
            raise FormatError(f"ember.export.load: node name '{n['name']}' is used twice")
        by_name[node.name] = node
    return g


# ---- call structures ----------------------------------------------------------------------

_SPEC_TYPES = {"tuple": tuple, "list": list}


def encode_spec(spec):
    """A JSON form of a pytree structure spec (tuples, lists, dicts with str keys)."""
    if spec is None:
        return None
    t = spec[0]
    if t is dict:
        if not all(isinstance(k, str) for k in spec[1]):
            raise TypeError("ember.export.save: dict keys of the inputs/outputs must be str")
        return {"dict": [list(spec[1]), [encode_spec(s) for s in spec[2]]]}
    if t not in (tuple, list):
        raise TypeError(f"ember.export.save: cannot save a call structure holding a "
                        f"{t.__name__}")
    return {t.__name__: [encode_spec(s) for s in spec[1]]}


def decode_spec(j):
    if j is None:
        return None
    if not isinstance(j, dict) or len(j) != 1:
        raise FormatError(f"ember.export.load: invalid call structure {j!r}")
    (tag, x), = j.items()
    if tag == "dict":
        keys, children = x
        return (dict, tuple(keys), tuple(decode_spec(c) for c in children))
    if tag not in _SPEC_TYPES:
        raise FormatError(f"ember.export.load: invalid call structure {j!r}")
    return (_SPEC_TYPES[tag], tuple(decode_spec(c) for c in x))
