"""The loop-level IR fused kernels are written in, for a device's code generator.

A Kernel iterates over a *full shape* split into outer dims (one iteration per row,
parallel) and inner dims (the row).  Per row it may first compute reductions over the inner
dims (each a scalar for the row, readable by later expressions), then store values: at the
outer level (one per row) or at the inner level (one per element).  A pointwise kernel has
no reductions; a reduction kernel stores only at the outer level; a "row" kernel (softmax,
layer norm) does both.

Expressions are tuples, hashable and device-neutral:

* index expressions (int64): an int, ``("var", name)`` with names ``o``/``j`` (flat outer /
  inner position) and ``o0, o1, ...``/``i0, i1, ...`` (their multi-indices),
  ``("add", a, b)``, ``("mul", a, k)``, ``("div", a, k)``, ``("mod", a, k)``;
* value expressions: ``("load", arg, index)``, ``("const", value, dtype)``,
  ``("op", name, dtype, *args)`` (names below), ``("cast", dtype, a)``,
  ``("reduced", k)`` (reduction k of the current row).

Dtypes are ember dtype names ("float32", "int64", "bool", ...).  Op names: the unary ops
``neg exp log sin cos tan tanh sigmoid relu sqrt rsqrt abs reciprocal square floor ceil trunc
round exp2 expm1 log2 log10 log1p erf erfc gelu asin acos atan sinh cosh logical_not``,
the binary ops ``add sub mul div pow maximum minimum fmax fmin atan2 gelu_backward eq ne lt
le gt ge logical_and logical_or logical_xor`` and ``where`` (condition, a, b).
"""
from dataclasses import dataclass, field

__all__ = ["Arg", "Kernel", "Reduce", "Store", "UNARY", "BINARY", "PREDICATES", "index_add",
           "index_mul", "index_div", "index_mod", "var"]

UNARY = frozenset("neg exp log sin cos tan tanh sigmoid relu sqrt rsqrt abs reciprocal square "
                  "floor ceil trunc round exp2 expm1 log2 log10 log1p erf erfc gelu asin acos "
                  "atan sinh cosh logical_not".split())
BINARY = frozenset("add sub mul div pow maximum minimum fmax fmin atan2 gelu_backward eq ne lt "
                   "le gt ge logical_and logical_or logical_xor".split())
PREDICATES = frozenset("eq ne lt le gt ge logical_and logical_or logical_xor logical_not".split())
REDUCTIONS = frozenset(["sum", "max", "min"])


def var(name):
    return ("var", name)


# ---- index algebra (simplifying as it builds, so contiguous accesses stay plain) -----------

def index_add(a, b):
    if a == 0:
        return b
    if b == 0:
        return a
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return ("add", a, b)


def index_mul(a, k):
    if k == 0 or a == 0:
        return 0
    if k == 1:
        return a
    if isinstance(a, int):
        return a * k
    if a[0] == "mul":
        return index_mul(a[1], a[2] * k)
    return ("mul", a, k)


def index_div(a, k):
    if k == 1:
        return a
    if isinstance(a, int):
        return a // k
    return ("div", a, k)


def index_mod(a, k):
    if k == 1:
        return 0
    if isinstance(a, int):
        return a % k
    return ("mod", a, k)


# ---- kernels -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Arg:
    """A buffer a kernel reads or writes: its position in the pointer array, dtype and
    whether the kernel writes it."""

    index: int
    dtype: str
    output: bool = False


@dataclass(frozen=True)
class Reduce:
    """Reduction ``kind`` ("sum", "max", "min") of ``expr`` over the row, accumulated in
    ``dtype``; its value is ``("reduced", k)`` in later expressions."""

    kind: str
    dtype: str
    expr: tuple


@dataclass(frozen=True)
class Store:
    """``arg[index] = value`` once per row (``level="outer"``) or per element
    (``"inner"``)."""

    arg: int
    index: tuple
    value: tuple
    level: str


@dataclass
class Kernel:
    """One fused loop nest; see the module docstring."""

    name: str
    outer: tuple
    inner: tuple
    args: list = field(default_factory=list)
    reductions: list = field(default_factory=list)
    stores: list = field(default_factory=list)

    @property
    def outer_numel(self):
        n = 1
        for s in self.outer:
            n *= s
        return n

    @property
    def inner_numel(self):
        n = 1
        for s in self.inner:
            n *= s
        return n

    def describe(self):
        """A stable text form (what a code generator's cache key may include)."""
        return repr((self.outer, self.inner, self.args, self.reductions, self.stores))
