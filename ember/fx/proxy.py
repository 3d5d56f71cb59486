"""Proxy: a stand-in value during symbolic tracing (``torch.fx.Proxy``).

Every operation on a Proxy (arithmetic, indexing, a method call, an attribute) records a
node in the tracer's graph and returns a new Proxy for its result.  Python control flow on a
Proxy (``if``, ``len``, iteration, ``int()``) cannot be recorded: it raises TraceError.
"""
import dis
import inspect
import operator

from ember.fx.node import map_aggregate

__all__ = ["Attribute", "Proxy", "TraceError"]


class TraceError(ValueError):
    """A traced program used a symbolic value where Python needs a concrete one."""


def _unpack_count(frame):
    """The item count if ``frame`` is executing ``UNPACK_SEQUENCE`` (tuple unpacking)."""
    if frame is None:
        return None
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti:
            return inst.argval if inst.opname == "UNPACK_SEQUENCE" else None
    return None


class Proxy:
    """Stands for the value of ``node`` while ``tracer`` records a program."""

    def __init__(self, node, tracer=None):
        self.node = node
        self.tracer = tracer if tracer is not None else node.graph._tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy`` is traceable: the caller's bytecode says how many items it takes
        n = _unpack_count(inspect.currentframe().f_back)
        if n is not None:
            return (self[i] for i in range(n))
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    def keys(self):
        return self.tracer.keys(self)


class Attribute(Proxy):
    """``proxy.attr``: a ``getattr`` node when used as a value, a ``call_method`` when
    called."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(fn):
    def method(self, other):
        return self.tracer.create_proxy("call_function", fn, (self, other), {})
    return method


def _reflected(fn):
    def method(self, other):
        return self.tracer.create_proxy("call_function", fn, (other, self), {})
    return method


def _unary(fn):
    def method(self):
        return self.tracer.create_proxy("call_function", fn, (self,), {})
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_",
              "xor", "lshift", "rshift"):
    _fn = getattr(operator, _name)
    _dunder = _name.rstrip("_")
    setattr(Proxy, f"__{_dunder}__", _binary(_fn))
    setattr(Proxy, f"__r{_dunder}__", _reflected(_fn))
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name)))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__


def contains_proxy(a):
    found = []
    map_aggregate(a, lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return bool(found)


def proxy_to_node(a):
    return map_aggregate(a, lambda x: x.node if isinstance(x, Proxy) else x)

