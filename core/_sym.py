"""``ember.SymInt``, ``SymFloat``, ``SymBool`` and the ``sym_*`` helpers.

The classes behave like Python numbers but hold a ``SymNode`` (ember.fx.experimental.sym_node)
and forward every operation to it; the semantics (SymPy expressions, hints, guards) live
there.  This module imports neither SymPy nor ember.fx: symbolic values only exist once a
``ShapeEnv`` has made them, so ``import ember`` stays cheap.
"""
import builtins
import math

__all__ = ["SymBool", "SymFloat", "SymInt", "sym_float", "sym_fresh_size", "sym_int",
           "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sum"]


def _wrap(node):
    return _CLASS_OF[node.pytype](node)


def _number_node(node, value):
    """``value`` as a node beside ``node`` when it is a number operand, else None."""
    if isinstance(value, (SymInt, SymFloat)):
        return value.node
    if isinstance(value, int):                    # bool included: True is 1
        return node.wrap(int(value))
    if isinstance(value, float):
        return node.wrap(float(value))
    return None


def _bool_node(node, value):
    if isinstance(value, SymBool):
        return value.node
    if isinstance(value, bool):
        return node.wrap(value)
    return None


def _binary(op, coerce, reflected=False):
    def method(self, other):
        other = coerce(self.node, other)
        if other is None:
            return NotImplemented
        a, b = (other, self.node) if reflected else (self.node, other)
        return _wrap(getattr(a, op)(b))
    method.__name__ = f"__{'r' if reflected else ''}{op.rstrip('_')}__"
    return method


def _unary(op):
    def method(self):
        return _wrap(getattr(self.node, op)())
    method.__name__ = f"__{op}__"
    return method


def _install(cls, coerce, ops, reflected=(), unary=()):
    """Attach the dunders of ``ops`` (node method names) to ``cls``."""
    for op in ops:
        setattr(cls, f"__{op.rstrip('_')}__", _binary(op, coerce))
    for op in reflected:
        setattr(cls, f"__r{op.rstrip('_')}__", _binary(op, coerce, reflected=True))
    for op in unary:
        setattr(cls, f"__{op}__", _unary(op))


class _SymBase:
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return self.node.str()

    def __str__(self):
        return self.node.str()

    def __format__(self, spec):
        return format(str(self), spec)

    def __pos__(self):
        return self


class SymInt(_SymBase):
    """A symbolic int: arithmetic builds expressions; ``int()``/``bool()``/indexing record a
    guard on its ShapeEnv and return the hinted value.  Unhashable, as PyTorch's."""

    __slots__ = ()

    def __bool__(self):
        return self.node.guard_bool()

    def __int__(self):
        return self.node.guard_int()

    __index__ = __int__

    def __float__(self):
        return float(self.node.guard_int())

    def __round__(self, ndigits=None):
        return self if ndigits is None else _wrap(self.node.round(ndigits))

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __trunc__

    def __sym_float__(self):
        return _wrap(self.node.sym_float())

    def __hash__(self):
        raise TypeError("unhashable type: non-nested SymInt")


class SymFloat(_SymBase):
    """A symbolic float; ``float()``/``bool()`` record a guard and return the hint."""

    __slots__ = ()

    def __bool__(self):
        return self.node.guard_bool()

    def __float__(self):
        return self.node.guard_float()

    def __int__(self):
        return self.node.guard_int()              # truncates, as int(float) does

    def __round__(self, ndigits=None):
        return _wrap(self.node.round(ndigits))

    def __hash__(self):
        return hash(float(self))                  # specialises, as PyTorch's


class SymBool(_SymBase):
    """A symbolic bool (comparison results); ``bool()`` records a guard.  ``&``, ``|`` and
    ``~`` (logical not, like a bool tensor's) build expressions."""

    __slots__ = ()

    def __bool__(self):
        return self.node.guard_bool()

    def __int__(self):
        return int(self.node.guard_bool())

    def __invert__(self):
        return _wrap(self.node.sym_not())

    def __hash__(self):
        # a constant hashes as its bool; otherwise hashing specialises, as PyTorch's
        return hash(self.node.hint if self.node.is_constant() else bool(self))


_ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow")
_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
for _cls in (SymInt, SymFloat):
    _install(_cls, _number_node, _ARITH + _COMPARE, reflected=_ARITH, unary=("neg", "abs"))
_install(SymFloat, None, (), unary=("floor", "ceil", "trunc"))
_install(SymBool, _bool_node, ("and_", "or_", "eq", "ne"), reflected=("and_", "or_"))
_CLASS_OF = {int: SymInt, float: SymFloat, bool: SymBool}
_SYM = (SymInt, SymFloat, SymBool)


def _first_node(*args):
    return next((a.node for a in args if isinstance(a, _SYM)), None)


def _operand(fn_name, node, value, logical=False):
    """``value`` as a node beside ``node`` for a sym_* helper (bools stay bools only when
    ``logical``); TypeError if it is not a scalar."""
    logical = logical and isinstance(value, (bool, SymBool))
    out = (_bool_node if logical else _number_node)(node, value)
    if out is None:
        raise TypeError(f"{fn_name}(): expected a bool, int, float or Sym* value, got "
                        f"{type(value).__name__}")
    return out


def sym_not(a):
    """Logical not that builds a node for a SymBool (``not a`` would guard)."""
    return _wrap(a.node.sym_not()) if isinstance(a, SymBool) else not a


def sym_float(a):
    """``float(a)`` without a guard: a SymInt becomes a SymFloat."""
    if isinstance(a, SymFloat):
        return a
    if isinstance(a, SymInt):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a):
    """``int(a)`` without a guard: a SymFloat is truncated into a SymInt."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return builtins.int(a)


def _minmax(name, builtin):
    def fn(a, b):
        node = _first_node(a, b)
        if node is None:
            return builtin(a, b)
        return _wrap(getattr(_operand(name, node, a), name)(_operand(name, node, b)))
    fn.__name__ = name
    fn.__doc__ = (f"``{builtin.__name__}(a, b)`` as one node (SymPy's "
                  f"{builtin.__name__.capitalize()}) instead of a guard when either is symbolic.")
    return fn


sym_max = _minmax("sym_max", builtins.max)
sym_min = _minmax("sym_min", builtins.min)


def sym_ite(b, t, f):
    """``t if b else f``; a SymBool ``b`` gives one Piecewise node instead of a guard."""
    if not isinstance(b, SymBool):
        return t if b else f
    t, f = (_operand("sym_ite", b.node, x, logical=True) for x in (t, f))
    return _wrap(b.node.sym_ite(t, f))


def sym_sum(args):
    """``sum(args)`` as a single n-ary Add node when any term is symbolic (not a chain)."""
    args = list(args)
    node = _first_node(*args)
    if node is None:
        return builtins.sum(args)
    nodes = [_operand("sym_sum", node, a) for a in args]
    return _wrap(nodes[0].sym_sum(nodes[1:]))


def sym_fresh_size(expr):
    """A size with the value of ``expr`` but no known relation to it: a SymInt becomes a new
    symbol of its ShapeEnv (a data-dependent size); a plain int is returned as is."""
    if isinstance(expr, SymInt):
        return expr.node.shape_env.create_symint(expr.node.hint)
    return builtins.int(expr)


# public at the module path PyTorch (and pickles, reprs) know it by: torch.SymInt, ...
for _name in __all__:
    if hasattr(globals()[_name], "__module__"):
        globals()[_name].__module__ = "ember"
