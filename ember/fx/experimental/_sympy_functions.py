"""SymPy functions with Python's semantics for the operations SymPy spells differently.

Each function stays unevaluated while an argument is symbolic and, once every argument is a
number, evaluates with the Python operator itself — so floor division and modulo of negative
numbers, banker's rounding and truncation agree with Python bit for bit.
"""
import math
import operator

import sympy
from sympy.printing.precedence import PRECEDENCE


def _py(x):
    """A SymPy number as the Python number it stands for (Integer -> int, else float)."""
    return int(x) if x.is_Integer else float(x)


def _make(name, fn, template, integer=None, identities=()):
    """A sympy Function ``name`` computing ``fn`` on numbers, printed with ``template``.

    ``identities`` are ``(test, result)`` shortcuts for symbolic arguments (e.g. x // 1 = x).
    """
    def eval_(cls, *args):
        if all(a.is_Number for a in args):
            return sympy.sympify(fn(*map(_py, args)))
        for test, result in identities:
            if test(*args):
                return result(*args)
        return None

    # an infix template parenthesises sums and products; a call-style one needs nothing
    level = PRECEDENCE["Mul"] if "//" in template else 0

    def sympystr(self, printer):
        return template.format(*(printer.parenthesize(a, level) for a in self.args))

    attrs = {"eval": classmethod(eval_), "_sympystr": sympystr, "nargs": template.count("{")}
    if integer is not None:
        attrs["is_integer"] = integer
    return type(name, (sympy.Function,), attrs)


def _is_one(x):
    return x == 1 and x.is_Integer


def _both_int(a, b):
    return a.is_integer is True and b.is_integer is True


def _exact_quotient(a, b):
    """``a / b`` when both are integers and it cancels to an integer expression (the
    ``numel // known`` of a view with a symbolic -1: ``(3*s0*s1)//3`` is ``s0*s1``)."""
    if not _both_int(a, b) or b == 0:
        return None
    q = sympy.cancel(a / b)
    return q if q.is_integer is True else None


FloorDiv = _make("FloorDiv", operator.floordiv, "({0}//{1})",
                 identities=[(lambda a, b: _is_one(b) and a.is_integer, lambda a, b: a),
                             (lambda a, b: _exact_quotient(a, b) is not None, _exact_quotient)])
PythonMod = _make("PythonMod", operator.mod, "PythonMod({0}, {1})",
                  identities=[(lambda a, b: _is_one(b) and a.is_integer,
                               lambda a, b: sympy.Integer(0)),
                              (lambda a, b: _exact_quotient(a, b) is not None,
                               lambda a, b: sympy.Integer(0))])
FloorToInt = _make("FloorToInt", math.floor, "FloorToInt({0})", integer=True,
                   identities=[(lambda a: a.is_integer, lambda a: a)])
CeilToInt = _make("CeilToInt", math.ceil, "CeilToInt({0})", integer=True,
                  identities=[(lambda a: a.is_integer, lambda a: a)])
TruncToInt = _make("TruncToInt", math.trunc, "TruncToInt({0})", integer=True,
                   identities=[(lambda a: a.is_integer, lambda a: a)])
RoundToInt = _make("RoundToInt", round, "RoundToInt({0})", integer=True,
                   identities=[(lambda a: a.is_integer, lambda a: a)])
RoundDecimal = _make("RoundDecimal", round, "RoundDecimal({0}, {1})")
