"""ShapeEnv: the symbols of symbolic sizes, their value ranges and the guards recorded on them.

A ShapeEnv creates size symbols ``s0, s1, ...`` (float symbols ``f0, f1, ...``) from concrete
*hints*.  Code that computes with SymInts builds SymPy expressions; whenever Python needs a
concrete answer (``if s > 0:``, ``int(s)``, ``bool(s == 3)``, ``range(s)``) the ShapeEnv answers
with the hinted value and records a **guard**: the condition and the answer it gave.  Code
traced under one set of sizes is valid for new sizes exactly when every guard gives the same
answer again, which ``evaluate_guards`` checks.

Conditions the value ranges already decide (``s0 >= 0`` for a size) are *static*: answered
without a guard.

Sizes and 0/1 specialisation (as PyTorch's dynamic shapes do): a size symbol created from a
hint of 0 or 1 is not a symbol at all but that constant — code often branches on "is this
dimension 1" (broadcasting) or "is it empty", and treating them as constants keeps those
branches out of the guards.  Every other size symbol gets the range ``[2, oo)``, so ``s0 != 1``
and ``s0 > 0`` are static.  ``ShapeEnv(specialize_zero_one=False)`` gives sizes the range
``[0, oo)`` instead, and ``create_symbol(..., is_size=False)`` makes an unconstrained integer.
Equal hints get distinct symbols (no "duck sizing").
"""
import operator
from collections import namedtuple

import sympy

from ember.fx.experimental.sym_node import SymNode

__all__ = ["ConstraintViolationError", "GuardOnDataDependentSymNode", "Guard", "ShapeEnv",
           "ValueRange"]


class GuardOnDataDependentSymNode(RuntimeError):
    """Code branched on a value that depends on tensor data (``if x.sum() > 0:``) while a
    program was being exported: no graph can hold that branch."""


class ConstraintViolationError(RuntimeError):
    """An example input contradicts the dynamic shapes asked for (a size outside a Dim's
    range, a static size that differs)."""

Guard = namedtuple("Guard", ["expr", "result"])
Guard.__doc__ = "A condition Python branched on (a SymPy boolean) and the hinted answer."


class ValueRange(namedtuple("ValueRange", ["lower", "upper"])):
    """Inclusive bounds of a symbol (SymPy numbers; ``-oo``/``oo`` when unbounded)."""

    __slots__ = ()

    def __contains__(self, value):
        return bool(self.lower <= value) and bool(value <= self.upper)

    def __repr__(self):
        return f"VR[{self.lower}, {self.upper}]"


def _bound(value, default):
    return default if value is None else sympy.Integer(operator.index(value))


class ShapeEnv:
    """Symbols with hints and value ranges, and the guards recorded while tracing.

    Args:
        specialize_zero_one: size hints of 0 and 1 become constants and other sizes get the
            range ``[2, oo)`` (default, as PyTorch); when False sizes range over ``[0, oo)``.
    """

    def __init__(self, *, specialize_zero_one=True):
        self.specialize_zero_one = specialize_zero_one
        self.var_to_val = {}          # symbol -> hint (SymPy number)
        self.var_to_range = {}        # symbol -> ValueRange
        self.guards = []              # Guard(expr, result), in the order they were made
        self._symbols = []            # creation order: the order evaluate_guards' lists use
        self._guard_set = set()
        self._static_cache = {}
        # each bounded symbol written as lower + t and as upper - t (t >= 0), for static_value
        self._shifts = ({}, {})
        self._counts = {"s": 0, "f": 0}

    # ---- symbols -------------------------------------------------------------------------
    def _new_symbol(self, prefix, hint, vr, **assumptions):
        name = f"{prefix}{self._counts[prefix]}"
        self._counts[prefix] += 1
        sym = sympy.Symbol(name, **assumptions)
        self.var_to_val[sym] = sympy.sympify(hint)
        self.var_to_range[sym] = vr
        self._symbols.append(sym)
        t = sympy.Dummy(f"t_{name}", integer=True, nonnegative=True)
        for shift, bound, sign in zip(self._shifts, vr, (1, -1)):
            if bound.is_finite:
                shift[sym] = bound + sign * t
        return sym

    def create_symbol(self, hint, min=None, max=None, *, is_size=True):
        """A new integer symbol with concrete value ``hint`` and range ``[min, max]``.

        Sizes (``is_size=True``) default to ``min=2`` (``0`` without 0/1 specialisation);
        a size hint of 0 or 1 under specialisation returns ``sympy.Integer(hint)``.
        """
        if isinstance(hint, bool) or not isinstance(hint, int):
            raise TypeError(f"create_symbol(): hint must be an int, got {type(hint).__name__}")
        if is_size:
            if hint < 0:
                raise ValueError(f"create_symbol(): a size must be non-negative, got {hint}")
            if self.specialize_zero_one and hint in (0, 1):
                return sympy.Integer(hint)
            default_min = sympy.Integer(2 if self.specialize_zero_one else 0)
        else:
            default_min = -sympy.oo
        vr = ValueRange(sympy.Max(_bound(min, default_min), default_min), _bound(max, sympy.oo))
        if hint not in vr:
            raise ValueError(f"create_symbol(): hint {hint} is outside the value range {vr}")
        assumptions = {"integer": True}
        if vr.lower >= 1:
            assumptions["positive"] = True
        elif vr.lower >= 0:
            assumptions["nonnegative"] = True
        return self._new_symbol("s", hint, vr, **assumptions)

    def create_symintnode(self, sym, hint=None):
        """``sym`` (a SymPy integer expression) as an ``ember.SymInt``; a constant as an int."""
        from ember._sym import SymInt
        sym = sympy.sympify(sym)
        if sym.is_Integer:
            return int(sym)
        if hint is None:
            hint = int(sym.xreplace(self.var_to_val))
        return SymInt(SymNode(sym, self, int, hint))

    def create_symint(self, hint, min=None, max=None, *, is_size=True):
        """A new symbol as an ``ember.SymInt`` (an int when 0/1 is specialised)."""
        return self.create_symintnode(self.create_symbol(hint, min, max, is_size=is_size), hint)

    def create_symfloat(self, hint):
        """A new unconstrained float symbol ``f<n>`` as an ``ember.SymFloat``."""
        from ember._sym import SymFloat
        hint = float(hint)
        sym = self._new_symbol("f", hint, ValueRange(-sympy.oo, sympy.oo), real=True)
        return SymFloat(SymNode(sym, self, float, hint))

    # ---- guards --------------------------------------------------------------------------
    def static_value(self, expr):
        """True/False when the value ranges decide the boolean ``expr``, else None."""
        if expr in (sympy.true, sympy.false):
            return bool(expr)
        if expr not in self._static_cache:
            # write the symbols as lower + t (then as upper - t) with t >= 0 and let SymPy's
            # assumptions fold the condition
            answer = None
            for shift in self._shifts:
                if shift and answer is None:
                    folded = expr.xreplace(shift)
                    if folded in (sympy.true, sympy.false):
                        answer = bool(folded)
            self._static_cache[expr] = answer
        return self._static_cache[expr]

    def evaluate_expr(self, expr, hint):
        """Answer the boolean ``expr`` with ``hint``; record a guard unless it is static."""
        static = self.static_value(expr)
        if static is not None:
            return static
        hint = bool(hint)
        guard = Guard(expr, hint)
        if guard not in self._guard_set:
            self._guard_set.add(guard)
            self.guards.append(guard)
        return hint

    def guard_count(self):
        """How many guards have been recorded."""
        return len(self.guards)

    def _bind(self, values):
        """``values`` (a dict keyed by symbol or symbol name, or a sequence in creation
        order) as a symbol -> SymPy number mapping covering every symbol."""
        if isinstance(values, dict):
            by_name = {str(s): s for s in self._symbols}
            mapping = {}
            for key, value in values.items():
                sym = by_name.get(str(key))
                if sym not in self.var_to_range:
                    raise KeyError(f"evaluate_guards(): {key!r} is not a symbol of this ShapeEnv")
                mapping[sym] = value
        else:
            values = list(values)
            if len(values) != len(self._symbols):
                raise ValueError(f"evaluate_guards(): expected {len(self._symbols)} values "
                                 f"(one per symbol), got {len(values)}")
            mapping = dict(zip(self._symbols, values))
        missing = [str(s) for s in self._symbols if s not in mapping]
        if missing:
            raise ValueError(f"evaluate_guards(): no value for {', '.join(missing)}")
        return {s: sympy.sympify(v) for s, v in mapping.items()}

    def evaluate_guards(self, values):
        """Whether every guard (and every symbol's value range) holds for ``values``.

        ``values`` gives each symbol a concrete value: a dict keyed by symbol or symbol name
        (SymInts are unhashable), or a sequence in symbol-creation order.  False means code
        traced with the hints is not valid for these values (recompile).
        """
        mapping = self._bind(values)
        for sym, value in mapping.items():
            if value not in self.var_to_range[sym]:
                return False
        for guard in self.guards:
            try:
                result = guard.expr.xreplace(mapping)
                if result not in (sympy.true, sympy.false):
                    # SymPy may have kept a nested Min/Max of constants unevaluated (it
                    # collapses Min(s, Max(0, Min(s, 1))) to Min(s, Max(0, 1)))
                    result = result.doit()
            except (ZeroDivisionError, TypeError, ValueError):
                return False                # e.g. a divisor that became 0
            if result not in (sympy.true, sympy.false):
                return False                # undefined for these values (zoo, nan)
            if bool(result) != guard.result:
                return False
        return True

    def evaluate_guards_for_args(self, args):
        """``evaluate_guards`` for a sequence of concrete values in symbol-creation order."""
        return self.evaluate_guards(list(args))

    def __repr__(self):
        return (f"ShapeEnv(symbols={[str(s) for s in self._symbols]}, "
                f"guards={len(self.guards)})")


# factories given SymInt sizes make fake tensors: install that hook with the first ShapeEnv
import ember._subclasses.fake_tensor  # noqa: E402,F401
