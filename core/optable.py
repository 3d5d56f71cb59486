"""The op-definition table of the uniform kernel families: elementwise unary and binary,
reductions and scans.  One row per ABI op code holds every fact about that op that is not
its kernel: its name, its code, the dtypes its kernel takes, what abi.h says of it, its
derivative, how the conformance suite feeds it.

From this table come
  - the op-code enums of ``ember/abi.h`` and their Cython declarations in ``ember_abi.pxd``,
    and ``ember/abi_tables.h`` (op names and the dtypes each kernel takes, for plugins):
    ``python -m ember.core.optable_codegen`` writes them, ``tests/core/test_optable.py``
    fails when a file is stale;
  - the core's Ops, public functions, Tensor methods (with in-place forms) and derivative
    registrations of the simple elementwise ops (``core/_math.pxi``);
  - the conformance suite's dtypes, input domains and tolerances for these families.

Adding an elementwise op: a row here (the next free code: codes are append-only, a published
code never changes meaning), ``python -m ember.core.optable_codegen``, the kernel in
ember-cpu (other devices run it through the host fallback until they add it) and its NumPy
reference in the conformance suite (``UNARY_REF``/``BINARY_REF``).  This module imports
nothing: the generator runs before anything is built.
"""
from typing import NamedTuple

_INTS = ("uint8", "int8", "int16", "int32", "int64")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
# PyTorch's unsigned dtypes of limited support: integer kernels take them (ember-cpu does)
_LIMITED = ("uint16", "uint32", "uint64")
# the dtype sets a kernel takes, by name (abi.h's EMBER_<NAME> dtype codes)
DTYPE_SETS = {
    "all": ("bool",) + _INTS + _FLOATS + _LIMITED,
    "numeric": _INTS + _FLOATS + _LIMITED,
    "float": _FLOATS,
    "int": _INTS + _LIMITED,
    "int_bool": ("bool",) + _INTS + _LIMITED,
}


class OpDef(NamedTuple):
    """One op code of a uniform family."""
    name: str                 # PyTorch's name of the op (function, method, the core's Op)
    code: int                 # its ABI code: append-only
    dtypes: str = "float"     # the dtypes its kernel takes: a key of DTYPE_SETS
    abi: str = ""             # the enum's suffix when it is not name.upper()
    note: str = ""            # abi.h's comment, written above this code
    # the derivative: one formula per input in PyTorch's derivatives.yaml words (grad,
    # self, other, result), "zero" (a zero gradient), or None (written in the core)
    grad: object = None
    # the forms built from this row: "function" (torch.name), "method" (Tensor.name),
    # "inplace" (Tensor.name_), "inplace_function" (torch.name_); () where the core writes
    # the op's forms itself
    forms: tuple = ()
    aliases: tuple = ()       # other names PyTorch gives the function and the method
    op: str = ""              # the core's Op name when it is not `name`
    schema: str = ""          # the Op's schema when it is not "name(Tensor self[, Tensor other])"
    # conformance inputs: any, small, positive, nonzero, unit, prod (binary: one per operand)
    domain: object = "any"
    tol: int = 1              # conformance tolerance scale
    scalar_other: bool = True  # binary: `other` may be a Python number (PyTorch's schema)
    scalar_self: bool = False  # binary: the function's `input` may be one (Scalar_Tensor)
    # an expression of the op in other ops (the derivative's words: self, other, and the
    # constants LN2, LN10, SQRT1_2): what a device that declares this kernel unimplemented
    # (the ember_unimplemented hook) runs on the device instead of the host fallback, for
    # the floating dtypes
    composite: str = ""
    # complex inputs: the formula reads conj(self), conj(other), conj(result), which for
    # an op holomorphic with real coefficients is PyTorch's convention, grad * conj(f'(z));
    # False where the formula is written for complex inputs as it stands (abs)
    conj_saved: bool = True

    @property
    def enum(self):
        return self.abi or self.name.upper()

    @property
    def dtype_names(self):
        return DTYPE_SETS[self.dtypes]


class Family(NamedTuple):
    """One op-coded family: one C enum, one kernel-table entry."""
    name: str                 # "unary": the enum prefix EMBER_UNARY_ and the table entry
    note: str                 # abi.h's comment above the enum
    ops: tuple


ALL_FORMS = ("function", "method", "inplace", "inplace_function")
NO_INPLACE_FUNCTION = ("function", "method", "inplace")


def _u(name, code, dtypes="float", simple=True, forms=ALL_FORMS, **kw):
    """A unary row; `simple`: its `forms` are built from it."""
    return OpDef(name, code, dtypes, forms=forms if simple else (), **kw)


def _b(name, code, dtypes="float", simple=True, forms=NO_INPLACE_FUNCTION, **kw):
    """A binary row; `simple`: its `forms` are built from it."""
    return OpDef(name, code, dtypes, forms=forms if simple else (), **kw)


def _r(name, code, dtypes="float", **kw):
    """A reduction's or scan's row (their forms are written in the core)."""
    return OpDef(name, code, dtypes, **kw)


UNARY = Family("unary", "elementwise unary op codes: out = f(a)", (
    _u("neg", 0, "numeric", grad="-grad", simple=False),
    _u("exp", 1, grad="grad * result", simple=False, domain="small"),
    _u("relu", 2, "numeric", simple=False),
    _u("abs", 3, "numeric", grad="grad * self.sgn()", conj_saved=False),
    _u("log", 4, grad="grad / self", domain="positive"),
    _u("sqrt", 5, grad="grad / (2 * result)", domain="positive"),
    _u("sin", 6, grad="grad * self.cos()"),
    _u("cos", 7, grad="-grad * self.sin()"),
    _u("tanh", 8, grad="grad * (1 - result * result)"),
    _u("sigmoid", 9, grad="grad * result * (1 - result)", composite="1 / (1 + (-self).exp())"),
    _u("reciprocal", 10, grad="-grad * result * result", domain="nonzero",
       composite="1 / self"),
    _u("square", 11, "numeric", grad="grad * 2 * self", composite="self * self"),
    _u("floor", 12, "numeric", grad="zero",
       note="rounding keeps the dtype (identity on integers); ROUND is half-to-even"),
    _u("ceil", 13, "numeric", grad="zero"),
    _u("trunc", 14, "numeric", grad="zero", aliases=("fix",)),
    _u("round", 15, "numeric", grad="zero", simple=False,
       schema="round(Tensor self, *, int decimals=0) -> Tensor"),
    _u("exp2", 16, grad="grad * result * LN2", note="floating dtypes only, like EXP",
       domain="small", composite="(self * LN2).exp()"),
    _u("expm1", 17, grad="grad * (result + 1)", domain="small", composite="self.exp() - 1"),
    _u("log2", 18, grad="grad / (self * LN2)", domain="positive", composite="self.log() / LN2"),
    _u("log10", 19, grad="grad / (self * LN10)", domain="positive",
       composite="self.log() / LN10"),
    _u("log1p", 20, grad="grad / (self + 1)", domain="positive", composite="(self + 1).log()"),
    _u("erf", 21, grad="grad * TWO_OVER_SQRT_PI * (-self.square()).exp()", domain="small"),
    _u("erfc", 22, grad="-grad * TWO_OVER_SQRT_PI * (-self.square()).exp()", domain="small",
       composite="1 - self.erf()"),
    _u("asin", 23, aliases=("arcsin",), grad="grad * (1 - self.square()).rsqrt()", domain="unit"),
    _u("acos", 24, aliases=("arccos",), grad="-grad * (1 - self.square()).rsqrt()", domain="unit"),
    _u("atan", 25, aliases=("arctan",), grad="grad / (1 + self.square())"),
    _u("sinh", 26, grad="grad * self.cosh()", domain="small",
       composite="(self.exp() - (-self).exp()) / 2"),
    _u("cosh", 27, grad="grad * self.sinh()", domain="small",
       composite="(self.exp() + (-self).exp()) / 2"),
    _u("rsqrt", 28, grad="-0.5 * grad * result * result * result", domain="positive",
       composite="1 / self.sqrt()"),
    _u("bitwise_not", 29, "int_bool", forms=NO_INPLACE_FUNCTION,
       note="integers and bool: ~x (logical not on bool)"),
    _u("tan", 30, grad="grad * (1 + result.square())", note="floating dtypes only",
       domain="unit", composite="self.sin() / self.cos()"),
    _u("erfinv", 31, forms=NO_INPLACE_FUNCTION, domain="unit", tol=2,
       grad="grad * HALF_SQRT_PI * (result.square()).exp()",
       note="special functions, floating dtypes only: ERFINV is NaN outside [-1, 1] and "
            "+-inf at +-1; LGAMMA is log|gamma(x)| (+inf at 0 and the negative integers); "
            "DIGAMMA is -inf at +0, +inf at -0, NaN at the negative integers"),
    _u("lgamma", 32, forms=NO_INPLACE_FUNCTION, grad="grad * self.digamma()",
       domain="positive", tol=2),
    _u("digamma", 33, forms=NO_INPLACE_FUNCTION, grad="grad * polygamma(1, self)",
       domain="positive", tol=2),
    _u("gelu", 34, simple=False, op="_gelu",
       note="floating dtypes only: the exact GELU, x * Phi(x) with Phi(x) = (1 + erf(x / "
            "sqrt 2)) / 2 (ABI 6: one pass instead of a composite's five)",
       composite="self * (1 + (self * SQRT1_2).erf()) / 2"),
    _u("sign", 35, "numeric", simple=False, grad="zero",
       note="integers and floating: (a > 0) - (a < 0) in a's dtype, so NaN and -0.0 give 0, "
            "as PyTorch (a plugin built before this code answers NOT_IMPLEMENTED: the host "
            "fallback runs it)",
       composite="(self > 0).to(self.dtype) - (self < 0).to(self.dtype)"),
))

BINARY = Family("binary", "elementwise binary op codes: out = f(a, b)", (
    _b("add", 0, "all", simple=False,
       schema="add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
    _b("sub", 1, "numeric", simple=False,
       schema="sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
    _b("mul", 2, "all", simple=False),
    _b("div", 3, note="true division; integer dtypes never reach it", simple=False,
       domain=("any", "nonzero")),
    _b("maximum", 4, "all", simple=False, scalar_other=False),
    _b("minimum", 5, "all", simple=False, scalar_other=False),
    _b("pow", 6, "numeric", simple=False, domain=("positive", "small"),
       schema="pow(Tensor self, Tensor exponent) -> Tensor"),
    _b("eq", 7, "all", domain=("small", "small"),
       note="predicates: `out` is bool while a and b share any one dtype (NaN compares "
            "false, except NE); logical ops read \"nonzero\" as true"),
    _b("ne", 8, "all", aliases=("not_equal",), domain=("small", "small")),
    _b("lt", 9, "all", aliases=("less",), domain=("small", "small")),
    _b("le", 10, "all", aliases=("less_equal",), domain=("small", "small")),
    _b("gt", 11, "all", aliases=("greater",), domain=("small", "small")),
    _b("ge", 12, "all", aliases=("greater_equal",), domain=("small", "small")),
    _b("logical_and", 13, "all", domain=("small", "small"), scalar_other=False),
    _b("logical_or", 14, "all", domain=("small", "small"), scalar_other=False),
    _b("logical_xor", 15, "all", domain=("small", "small"), scalar_other=False),
    _b("atan2", 16, scalar_other=False, grad=("grad * other * atan2_recip(self, other)",
                                              "grad * -self * atan2_recip(self, other)"),
       note="same dtype in and out again: ATAN2 on floats; FMOD has the dividend's sign "
            "(C fmod), REMAINDER the divisor's (Python %); FLOOR_DIVIDE rounds toward -inf; "
            "FMAX/FMIN ignore a NaN when the other operand is a number; integer division by "
            "zero in FMOD, REMAINDER or FLOOR_DIVIDE returns EMBER_ERR_RUNTIME "
            "(\"ZeroDivisionError\")"),
    _b("fmod", 17, "numeric", domain=("any", "nonzero"),
       composite="self - (self / other).trunc() * other"),
    _b("remainder", 18, "numeric", domain=("any", "nonzero"), scalar_self=True,
       composite="self - (self / other).floor() * other"),
    _b("floor_divide", 19, "numeric", domain=("any", "nonzero"), scalar_self=True,
       composite="(self / other).floor()"),
    _b("fmax", 20, "all", scalar_other=False, forms=("function", "method")),
    _b("fmin", 21, "all", scalar_other=False, forms=("function", "method")),
    _b("bitwise_and", 22, "int_bool", scalar_self=True,
       note="integers and bool only; shifts by a negative or too-large count follow "
            "PyTorch (0 for left shifts, the sign fill for right shifts)"),
    _b("bitwise_or", 23, "int_bool", scalar_self=True),
    _b("bitwise_xor", 24, "int_bool", scalar_self=True),
    _b("bitwise_left_shift", 25, "int", abi="SHIFT_LEFT", domain=("any", "small"),
       scalar_self=True),
    _b("bitwise_right_shift", 26, "int", abi="SHIFT_RIGHT", domain=("any", "small"),
       scalar_self=True),
    _b("gelu_backward", 27, simple=False, op="_gelu_backward",
       schema="_gelu_backward(Tensor grad_output, Tensor self) -> Tensor",
       note="floating dtypes only: GELU's gradient, out = a * (Phi(b) + b * phi(b)) with a "
            "the incoming gradient, b the GELU's input, phi the standard normal density "
            "(ABI 6)"),
))

_REDUCE_SCHEMA = ("{}(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
                  "dtype=None) -> Tensor")
_EXTREME_SCHEMA = "{}(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"
_ARG_SCHEMA = "{}(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"
_SCAN_SCHEMA = "{}(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"
_CUMEXT_SCHEMA = "{}(Tensor self, int dim) -> (Tensor values, Tensor indices)"

REDUCE = Family("reduce", "reductions over the trailing `nreduce` dims of `a`; out has "
                "a->ndim - nreduce dims", (
    _r("sum", 0, "all", schema=_REDUCE_SCHEMA.format("sum")),
    _r("mean", 1, note="floating dtypes only; empty reduction gives NaN",
       schema=_REDUCE_SCHEMA.format("mean")),
    _r("prod", 2, "all", domain="prod", schema=_REDUCE_SCHEMA.format("prod")),
    _r("max", 3, "all", op="amax", schema=_EXTREME_SCHEMA.format("amax")),
    _r("min", 4, "all", op="amin", schema=_EXTREME_SCHEMA.format("amin")),
    _r("argmax", 5, "numeric", domain="small", schema=_ARG_SCHEMA.format("argmax"),
       note="`out` is int64: the position of the first maximum/minimum within the reduced "
            "dims (row-major over them); a NaN counts as the extreme (PyTorch); empty: the "
            "core errors"),
    _r("argmin", 6, "numeric", domain="small", schema=_ARG_SCHEMA.format("argmin")),
))

SCAN = Family("scan", "scans along the LAST dim of `a` (the core moves the scanned dim there); "
              "out has a's shape and dtype; CUMMAX/CUMMIN also write the position of the "
              "running extreme into `indices` (int64, a's shape; NULL for the other ops); a "
              "NaN becomes and stays the extreme", (
    _r("cumsum", 0, "numeric", schema=_SCAN_SCHEMA.format("cumsum")),
    _r("cumprod", 1, "numeric", domain="prod", schema=_SCAN_SCHEMA.format("cumprod")),
    _r("cummax", 2, "all", domain="small", schema=_CUMEXT_SCHEMA.format("cummax")),
    _r("cummin", 3, "all", domain="small", schema=_CUMEXT_SCHEMA.format("cummin")),
))

FAMILIES = (UNARY, BINARY, REDUCE, SCAN)


def family(name):
    """The Family called ``name`` ("unary", ...)."""
    for f in FAMILIES:
        if f.name == name:
            return f
    raise KeyError(name)


def row(family_name, name):
    """The OpDef of op ``name`` in family ``family_name``."""
    for d in family(family_name).ops:
        if d.name == name:
            return d
    raise KeyError(f"{family_name}.{name}")


def _check():
    """Codes are dense from 0 in order (what C's enums and the tables below assume)."""
    for f in FAMILIES:
        for i, d in enumerate(f.ops):
            if d.code != i:
                raise ValueError(f"optable: {f.name}.{d.name} has code {d.code}, expected {i}")


_check()
