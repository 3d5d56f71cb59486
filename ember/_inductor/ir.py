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
round exp2 expm1 log2 log10 log1p erf erfc gelu asin acos atan sinh cosh sign logical_not``,
the binary ops ``add sub mul div pow maximum minimum fmax fmin atan2 gelu_backward eq ne lt
le gt ge logical_and logical_or logical_xor`` and ``where`` (condition, a, b).
"""
from dataclasses import dataclass, field

__all__ = ["Arg", "Kernel", "Reduce", "Store", "UNARY", "BINARY", "PREDICATES", "index_add",
           "index_mul", "index_div", "index_mod", "var"]

UNARY = frozenset("neg exp log sin cos tan tanh sigmoid relu sqrt rsqrt abs reciprocal square "
                  "floor ceil trunc round exp2 expm1 log2 log10 log1p erf erfc gelu asin acos "
                  "atan sinh cosh sign logical_not".split())
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


# ---- simplification with the loop variables' ranges -------------------------------------------

def _affine(e, ranges):
    """``e`` as ({atom: coefficient}, constant), div/mod folded where the ranges allow."""
    if isinstance(e, int):
        return {}, e
    tag = e[0]
    if tag == "var":
        return {e: 1}, 0
    if tag == "add":
        ta, ca = _affine(e[1], ranges)
        tb, cb = _affine(e[2], ranges)
        terms = dict(ta)
        for k, v in tb.items():
            terms[k] = terms.get(k, 0) + v
        return {k: v for k, v in terms.items() if v}, ca + cb
    if tag == "mul":
        t, c = _affine(e[1], ranges)
        return {k: v * e[2] for k, v in t.items()}, c * e[2]
    t, c = _affine(e[1], ranges)
    k = e[2]
    q = {a: v // k for a, v in t.items() if v % k == 0}
    r = {a: v for a, v in t.items() if v % k}
    cq, cr = divmod(c, k)
    lo, hi = _bounds(r, cr, ranges)
    if 0 <= lo and hi < k:                  # the remainder part stays below k
        return (q, cq) if tag == "div" else (r, cr)
    atom = (tag, _rebuild(t, c), k)
    return {atom: 1}, 0


def _bounds(terms, const, ranges):
    lo = hi = const
    for atom, coeff in terms.items():
        a_lo, a_hi = _atom_bounds(atom, ranges)
        lo += min(coeff * a_lo, coeff * a_hi)
        hi += max(coeff * a_lo, coeff * a_hi)
    return lo, hi


def _atom_bounds(atom, ranges):
    if atom[0] == "var":
        return ranges.get(atom[1], (-2 ** 62, 2 ** 62))
    lo, hi = _bounds(*_affine(atom[1], ranges), ranges)
    if atom[0] == "mod":
        return (0, atom[2] - 1) if lo >= 0 else (-(atom[2] - 1), atom[2] - 1)
    return lo // atom[2], hi // atom[2]


def _rebuild(terms, const):
    out = const
    for atom, coeff in sorted(terms.items(), key=repr):
        out = index_add(out, index_mul(atom, coeff))
    return out


def simplify_index(e, ranges):
    """Index expression ``e`` with div/mod removed where ``ranges`` (variable name ->
    (low, high), inclusive) show they change nothing."""
    return _rebuild(*_affine(e, ranges))


def simplify_expr(e, ranges, memo=None):
    """Value expression ``e`` with every load index simplified."""
    if memo is None:
        memo = {}
    if e in memo:
        return memo[e]
    tag = e[0]
    if tag == "load":
        out = ("load", e[1], simplify_index(e[2], ranges), e[3])
    elif tag == "op":
        out = e[:3] + tuple(simplify_expr(a, ranges, memo) for a in e[3:])
    elif tag == "cast":
        out = ("cast", e[1], simplify_expr(e[2], ranges, memo))
    else:
        out = e
    memo[e] = out
    return out
