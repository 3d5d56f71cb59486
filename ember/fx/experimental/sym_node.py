"""SymNode: the semantics behind ``ember.SymInt``, ``SymFloat`` and ``SymBool``.

A node holds a SymPy expression over the symbols of one ``ShapeEnv``, the Python type it
stands for (int, float or bool) and its *hint*: the concrete value the expression takes for
the sizes the symbols were created from.  Every operation builds a new expression and
computes the new hint with the Python operator itself, so hints follow Python's semantics
exactly (floor division and modulo round towards minus infinity, int / int is a float,
``x ** -1`` on ints is a float) and the expression is guaranteed to evaluate to the same
value.  Branching on a node (``guard_bool``/``guard_int``/``guard_float``) asks the
ShapeEnv, which records a guard unless the answer is static.

The façade classes in ``ember._sym`` only coerce operands and wrap results.
"""
import builtins
import math
import operator

import sympy

from ember.fx.experimental._sympy_functions import (
    CeilToInt,
    FloorDiv,
    FloorToInt,
    PythonMod,
    RoundDecimal,
    RoundToInt,
    TruncToInt,
)

__all__ = ["SymNode"]


def _sympify(value):
    """A Python bool/int/float as a SymPy atom."""
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    if isinstance(value, int):
        return sympy.Integer(value)
    return sympy.Float(value) if math.isfinite(value) else sympy.sympify(value)


def _arith_type(a, b):
    return float if float in (a.pytype, b.pytype) else int


class SymNode:
    """One symbolic scalar: ``expr`` (SymPy), ``pytype`` (int/float/bool), ``hint``."""

    __slots__ = ("expr", "shape_env", "pytype", "hint")

    def __init__(self, expr, shape_env, pytype, hint):
        self.expr = expr
        self.shape_env = shape_env
        self.pytype = pytype
        self.hint = pytype(hint)

    # ---- construction ----------------------------------------------------------------
    def wrap(self, value):
        """A constant node for the Python number ``value`` in this node's ShapeEnv."""
        pytype = bool if isinstance(value, bool) else int if isinstance(value, int) else float
        return SymNode(_sympify(value), self.shape_env, pytype, value)

    def _new(self, expr, pytype, hint):
        return SymNode(expr, self.shape_env, pytype, hint)

    def _binary(self, other, pyop, symop, pytype):
        if other.shape_env is not self.shape_env:
            raise RuntimeError("cannot combine symbolic values from two different ShapeEnvs")
        hint = pyop(self.hint, other.hint)          # raises ZeroDivisionError as Python does
        return self._new(symop(self.expr, other.expr), pytype, hint)

    # ---- queries -------------------------------------------------------------------------
    def is_int(self):
        return self.pytype is int

    def is_float(self):
        return self.pytype is float

    def is_bool(self):
        return self.pytype is bool

    def is_constant(self):
        """True when the expression has no free symbols (a folded constant)."""
        return not self.expr.free_symbols

    def str(self):
        return str(self.expr)

    __str__ = str

    def __repr__(self):
        return f"SymNode({self.expr}, {self.pytype.__name__}, hint={self.hint!r})"

    # ---- arithmetic ----------------------------------------------------------------------
    def truediv(self, other):
        return self._binary(other, operator.truediv, operator.truediv, float)

    def pow(self, other):
        """int ** int stays an int only for a non-negative exponent (a guard if symbolic);
        otherwise both sides become floats, as Python does."""
        if self.is_int() and other.is_int():
            if other.ge(other.wrap(0)).guard_bool():
                return self._binary(other, operator.pow, sympy.Pow, int)
        return self.sym_float()._binary(other.sym_float(), operator.pow, sympy.Pow, float)

    def neg(self):
        return self._new(-self.expr, self.pytype, -self.hint)

    def abs(self):
        return self._new(sympy.Abs(self.expr), self.pytype, builtins.abs(self.hint))

    # ---- to int / float ------------------------------------------------------------------
    def _to_int(self, fn, pyfn):
        if self.is_int():
            return self
        return self._new(fn(self.expr), int, pyfn(self.hint))

    def floor(self):
        return self._to_int(FloorToInt, math.floor)

    def ceil(self):
        return self._to_int(CeilToInt, math.ceil)

    def trunc(self):
        return self._to_int(TruncToInt, math.trunc)

    def round(self, ndigits=None):
        """Python's round: half to even; with ``ndigits`` the type is kept."""
        if ndigits is None:
            return self._to_int(RoundToInt, builtins.round)
        ndigits = operator.index(ndigits)
        expr = RoundDecimal(self.expr, sympy.Integer(ndigits))
        return self._new(expr, self.pytype, builtins.round(self.hint, ndigits))

    def sym_float(self):
        if self.is_float():
            return self
        return self._new(self.expr, float, float(self.hint))

    def sym_int(self):
        return self.trunc()

    # ---- comparisons and logic (the plain binary ops are attached below) --------------------
    def sym_not(self):
        return self._new(sympy.Not(self.expr), bool, not self.hint)

    # ---- nodes instead of guards (sym_max/sym_min are attached below) ----------------------
    def sym_ite(self, then, else_):
        """``then if self else else_`` as one Piecewise node (self is a bool node)."""
        if then.pytype is not else_.pytype:
            raise TypeError(f"sym_ite(): then and else must have the same type, got "
                            f"{then.pytype.__name__} and {else_.pytype.__name__}")
        expr = sympy.Piecewise((then.expr, self.expr), (else_.expr, True))
        return self._new(expr, then.pytype, then.hint if self.hint else else_.hint)

    def sym_sum(self, others):
        """``self + sum(others)`` as a single n-ary Add."""
        nodes = [self, *others]
        pytype = float if any(n.is_float() for n in nodes) else int
        hint = builtins.sum(n.hint for n in nodes)
        return self._new(sympy.Add(*(n.expr for n in nodes)), pytype, hint)

    # ---- guards --------------------------------------------------------------------------
    def guard_bool(self):
        """The hinted truth value; records a guard unless it is static."""
        node = self if self.is_bool() else self.ne(self.wrap(0))
        return self.shape_env.evaluate_expr(node.expr, node.hint)

    def guard_int(self):
        """The hinted int; records ``Eq(expr, hint)`` unless the expression is constant."""
        node = self.trunc()
        self.shape_env.evaluate_expr(sympy.Eq(node.expr, node.hint), True)
        return node.hint

    def guard_float(self):
        """The hinted float; records ``Eq(expr, hint)`` unless the expression is constant."""
        hint = float(self.hint)
        self.shape_env.evaluate_expr(sympy.Eq(self.expr, _sympify(hint)), True)
        return hint


def _binary_method(name, pyop, symop, pytype):
    """``SymNode.<name>(other)``: ``pytype`` None means int, or float if either is a float."""
    def method(self, other):
        return self._binary(other, pyop, symop, pytype or _arith_type(self, other))
    method.__name__ = name
    return method


for _name, _pyop, _symop, _pytype in [
        ("add", operator.add, operator.add, None), ("sub", operator.sub, operator.sub, None),
        ("mul", operator.mul, operator.mul, None), ("floordiv", operator.floordiv, FloorDiv, None),
        ("mod", operator.mod, PythonMod, None), ("sym_max", builtins.max, sympy.Max, None),
        ("sym_min", builtins.min, sympy.Min, None), ("eq", operator.eq, sympy.Eq, bool),
        ("ne", operator.ne, sympy.Ne, bool), ("lt", operator.lt, sympy.Lt, bool),
        ("le", operator.le, sympy.Le, bool), ("gt", operator.gt, sympy.Gt, bool),
        ("ge", operator.ge, sympy.Ge, bool), ("and_", operator.and_, sympy.And, bool),
        ("or_", operator.or_, sympy.Or, bool)]:
    setattr(SymNode, _name, _binary_method(_name, _pyop, _symop, _pytype))
