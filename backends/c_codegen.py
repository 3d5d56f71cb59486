"""C expressions for ember.compile's kernel IR: the part of a code generator
(``ember_kernel_codegen``) that C, CUDA C and their kin share.

``ember._inductor.ir`` describes a fused kernel as loops over rows with device-neutral
expressions.  A generator writes the loops its device wants (OpenMP blocks on the CPU,
threads and block reductions on a GPU) and asks an ``ExprRenderer`` for the values: each
subexpression becomes one ``const`` temporary per scope, and a value that does not change
along a row is computed once per row (``Scope(parent, inner=True)`` hands such values to
its parent).  A row's loops (its reductions, then its stores) may share one ``PassScope``,
which keeps a costly value one loop made for the loops after it instead of computing it
again.  A subclass spells the math (``math``): the rest (loads, constants, casts,
comparisons, logical ops, ``where``) is plain C and lives here.

Vendors writing a generator for a C-like language import this module; it imports nothing.
"""

__all__ = ["CTYPE", "FLOAT", "KEEP_COST", "ExprRenderer", "PassScope", "Scope", "can_render",
           "cost", "decls", "index", "literal", "reduction_init", "varies"]

# storage and compute types of the IR's dtypes (bool is a byte, as in tensors)
CTYPE = {"float32": "float", "float64": "double", "int64": "int64_t", "int32": "int32_t",
         "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t", "bool": "uint8_t"}
FLOAT = frozenset({"float32", "float64"})
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
# the lowest and highest value of each integer dtype (stdint.h's names)
_INT_LIMITS = {"int64": ("INT64_MIN", "INT64_MAX"), "int32": ("INT32_MIN", "INT32_MAX"),
               "int16": ("INT16_MIN", "INT16_MAX"), "int8": ("INT8_MIN", "INT8_MAX"),
               "uint8": ("0", "UINT8_MAX"), "bool": ("0", "1")}
_LOGICAL = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}


def literal(value, dt, nan="NAN", inf="INFINITY"):
    """C spelling of constant ``value`` of dtype ``dt`` (``nan``/``inf``: the target's names
    for the float specials)."""
    if dt in FLOAT:
        v = float(value)
        if v != v:
            return f"(({CTYPE[dt]}){nan})"
        if v in (float("inf"), float("-inf")):
            return f"(({CTYPE[dt]}){inf})" if v > 0 else f"(-({CTYPE[dt]}){inf})"
        return f"(({CTYPE[dt]}){v!r})"
    if dt == "bool":
        return "1" if value else "0"
    return f"(({CTYPE[dt]}){int(value)}LL)"


def reduction_init(kind, dt, inf="INFINITY"):
    """The starting value of a ``kind`` ("sum", "max", "min") reduction accumulated in
    ``dt``: 0, or the lowest/highest value of the type (an accumulator of a narrow integer
    type must not start from int64's limits, which wrap to 0 there)."""
    if kind == "sum":
        return "0"
    if dt in FLOAT:
        return f"(-{inf})" if kind == "max" else inf
    return _INT_LIMITS[dt][0 if kind == "max" else 1]


def index(e):
    """C spelling of index expression ``e`` (int64 arithmetic)."""
    if isinstance(e, int):
        return f"{e}LL"
    tag = e[0]
    if tag == "var":
        return e[1]
    a = index(e[1])
    if tag == "add":
        return f"({a} + {index(e[2])})"
    op = {"mul": "*", "div": "/", "mod": "%"}[tag]
    return f"({a} {op} {e[2]}LL)"


def varies(e, memo={}):
    """Whether expression ``e`` changes along a row (reads the inner position)."""
    if isinstance(e, int):
        return False
    r = memo.get(e)
    if r is None:
        tag = e[0]
        if tag == "var":
            r = e[1] == "j" or e[1].startswith("i")
        elif tag == "load":
            r = varies(e[2])
        elif tag in ("const", "reduced"):
            r = False
        else:
            r = any(varies(x) for x in e[1:] if isinstance(x, (tuple, int)))
        memo[e] = r
    return r


def decls(prefix, var, sizes):
    """Declarations of the multi-index ``{prefix}0, {prefix}1, ...`` of flat position ``var``
    over ``sizes`` (row-major)."""
    out, stride = [], 1
    strides = []
    for s in reversed(sizes):
        strides.append(stride)
        stride *= s
    strides.reverse()
    for d, (s, st) in enumerate(zip(sizes, strides)):
        code = var if len(sizes) == 1 else f"(({var} / {st}LL) % {s}LL)"
        out.append(f"const int64_t {prefix}{d} = {code};")
    return out


class Scope:
    """The lines of one loop level and the expressions already named there.  An inner
    scope's row-invariant expressions go to its parent."""

    def __init__(self, parent=None, inner=False):
        self.parent, self.inner = parent, inner
        self.lines, self.memo = [], {}


class PassScope(Scope):
    """The inner scope of a row's successive loops (its reductions, then its stores).  A
    value an earlier loop computed that a later loop needs again is computed again when that
    is cheap (loads, plain arithmetic), else kept: the loop that made it stores it in a
    per-row array (``keep_<name>``) and the later loop reads it back (``keep=False``:
    always computed again, as for rows too long to keep; ``min_cost``: the cost from which
    a value is kept, 1 to keep loads too).  Call ``begin()`` before rendering each loop's
    values; ``body(i)`` is loop ``i``'s lines, ``arrays(n)`` the arrays' declarations, once
    everything is rendered."""

    def __init__(self, parent, keep=True, min_cost=None):
        super().__init__(parent, inner=True)
        self.keep = keep
        self.min_cost = KEEP_COST if min_cost is None else min_cost
        self.loops = []                 # (lines, names read back) per loop
        self.origin, self.types, self.kept = {}, {}, []

    def begin(self):
        self.lines = []
        self.loops.append((self.lines, []))
        return len(self.loops) - 1

    def reuse(self, e, name):
        """Whether the current loop may use ``name`` (``e``'s value): made in this loop, or
        kept from an earlier one."""
        if self.origin[name] == len(self.loops) - 1:
            return True
        if not self.keep or cost(e) < self.min_cost:
            return False
        if name not in self.kept:
            self.kept.append(name)
        if name not in self.loops[-1][1]:
            self.loops[-1][1].append(name)
        return True

    def made(self, name, ctype):
        self.origin[name] = len(self.loops) - 1
        self.types[name] = ctype

    def body(self, i, j="j"):
        lines, read = self.loops[i]
        return [f"const {self.types[n]} {n} = keep_{n}[{j}];" for n in read] + lines + \
            [f"keep_{n}[{j}] = {n};" for n in self.kept if self.origin[n] == i]

    def arrays(self, n):
        return [f"{self.types[name]} keep_{name}[{n}];" for name in self.kept]


# what computing a value again costs, roughly in multiply-adds: a value of KEEP_COST or more
# is worth keeping in memory between a row's loops
KEEP_COST = 6
_CHEAP = frozenset("add sub mul div neg abs relu square maximum minimum fmax fmin where eq ne "
                   "lt le gt ge logical_and logical_or logical_xor logical_not floor ceil trunc "
                   "round".split())


def cost(e, memo={}):
    """Rough cost of computing expression ``e`` from memory (a transcendental op is 8)."""
    if not isinstance(e, tuple) or e[0] in ("const", "reduced", "var"):
        return 0
    c = memo.get(e)
    if c is None:
        if e[0] == "load":
            c = 1
        elif e[0] == "cast":
            c = cost(e[2])
        else:
            c = (1 if e[1] in _CHEAP else 8) + sum(cost(a) for a in e[3:])
        memo[e] = c
    return c


class ExprRenderer:
    """C expressions for IR expressions; a subclass defines ``math(name, dtype, args)`` for
    the arithmetic and math ops (the arguments are C expressions already in the op's
    compute type, except for comparisons)."""

    nan, inf = "NAN", "INFINITY"

    def __init__(self):
        self.n = 0

    def expr(self, e, scope):
        """The name (or literal) of ``e``'s value in ``scope``, emitting what it needs."""
        if scope.inner and not varies(e):
            return self.expr(e, scope.parent)
        s = scope
        while s is not None:
            if e in s.memo:
                name = s.memo[e]
                if not isinstance(s, PassScope) or s.reuse(e, name):
                    return name
                break                   # an earlier loop's cheap value: compute it again
            s = s.parent
        code, ct = self._code(e, scope)
        if e[0] in ("const", "reduced"):
            return code
        self.n += 1
        name = f"t{self.n}"
        scope.lines.append(f"const {ct} {name} = {code};")
        scope.memo[e] = name
        if isinstance(scope, PassScope):
            scope.made(name, ct)
        return name

    def _code(self, e, scope):
        tag = e[0]
        if tag == "load":
            return f"a{e[1]}[{index(e[2])}]", CTYPE[e[3]]
        if tag == "const":
            return literal(e[1], e[2], self.nan, self.inf), CTYPE[e[2]]
        if tag == "reduced":
            return f"r{e[1]}", CTYPE[e[2]]
        if tag == "cast":
            dt, x = e[1], self.expr(e[2], scope)
            if dt == "bool":
                return f"(uint8_t)({x} != 0)", "uint8_t"
            return f"({CTYPE[dt]})({x})", CTYPE[dt]
        name, dt = e[1], e[2]
        xs = [self.expr(a, scope) for a in e[3:]]
        return self.op(name, dt, xs), CTYPE[dt]

    def op(self, name, dt, xs):
        """C for op ``name`` of result dtype ``dt`` on the C expressions ``xs``."""
        if name in _CMP:
            return f"(uint8_t)({xs[0]} {_CMP[name]} {xs[1]})"
        if name in _LOGICAL:
            return f"(uint8_t)(({xs[0]} != 0) {_LOGICAL[name]} ({xs[1]} != 0))"
        if name == "logical_not":
            return f"(uint8_t)({xs[0]} == 0)"
        if name == "where":
            return f"({xs[0]} ? {xs[1]} : {xs[2]})"
        return self.math(name, dt, xs)

    def math(self, name, dt, xs):
        raise NotImplementedError(f"{type(self).__name__} cannot render op {name!r} "
                                  f"of dtype {dt}")



def can_render(renderer, kernel):
    """Whether ``renderer`` can write every value of ``kernel`` (a generator's
    ``supports``): its dtypes have C types and each expression renders (into scratch
    scopes)."""
    if not all(a.dtype in CTYPE for a in kernel.args) or \
            not all(r.dtype in CTYPE for r in kernel.reductions):
        return False
    try:
        for e in [r.expr for r in kernel.reductions] + [s.value for s in kernel.stores]:
            renderer.expr(e, Scope())
    except (NotImplementedError, KeyError):
        return False
    return True
