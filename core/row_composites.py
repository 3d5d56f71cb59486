"""The op table's composites (``OpDef.composite``): what a device runs on itself for an
elementwise kernel its plugin declares unimplemented (the ``ember_unimplemented`` hook),
instead of a round trip through the host.

A plugin that declares, say, ``"unary.expm1[*]"`` gets ``exp(x) - 1`` computed with its own
exp and sub kernels; a kernel that answers EMBER_ERR_NOT_IMPLEMENTED without being declared
still runs on the host (the first call cannot know, and one op must not round two ways).
Only the floating dtypes have composites (the expressions are float math); an integer
kernel a plugin lacks runs on the host.  The composite runs below autograd: the op's own
derivative formula differentiates it, as for a kernel.
"""
import math
import re

from ember.core import optable

__all__ = ["composites_for", "composite_functions"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_NAMES = {"LN2": math.log(2.0), "LN10": math.log(10.0), "SQRT1_2": math.sqrt(0.5)}
_functions = None


def composite_functions():
    """{(family, op code): function} of every table row with a composite."""
    global _functions
    if _functions is None:
        made = {}
        for family in (optable.UNARY, optable.BINARY):
            for row in family.ops:
                if row.composite:
                    made[(family.name, row.code)] = _compile(row, family.name == "binary")
        _functions = made
    return _functions


def _compile(row, binary):
    args = "self, other" if binary else "self"
    words = set(re.findall(r"[A-Za-z_]\w*", row.composite)) - {"self", "other"}
    unknown = {w for w in words if w.isupper()} - set(_NAMES)
    if unknown:
        raise ValueError(f"op table row {row.name}: unknown names {sorted(unknown)} in its "
                         f"composite")
    namespace = dict(_NAMES)
    exec(f"def {row.name}_composite({args}):\n    return {row.composite}\n", namespace)
    return namespace[f"{row.name}_composite"]


def composites_for(device_type, declared):
    """{(binary?, op code, dtype): function} of the composites ``device_type`` runs: the rows
    whose kernel call (``"unary.expm1[float16]"``) matches a pattern in ``declared`` (what its
    plugin declares unimplemented); None when there are none."""
    if not declared:
        return None
    from ember.backends._abi import matches
    from ember.core import _dtype
    found = {}
    fns = composite_functions()
    for family in (optable.UNARY, optable.BINARY):
        for row in family.ops:
            fn = fns.get((family.name, row.code))
            if fn is None:
                continue
            for dt in _FLOATS:
                if dt in row.dtype_names and any(
                        matches(f"{family.name}.{row.enum.lower()}[{dt}]", p) for p in declared):
                    found[(family.name == "binary", row.code, getattr(_dtype, dt))] = fn
    return found or None
