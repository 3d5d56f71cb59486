"""Cases of the elementwise entries: unary and binary op codes, where, copy (casts), fill
and lerp/addcmul/addcdiv (ternary), over every dtype each op takes and every operand
layout."""
import numpy as np

import ember
from ember.core import optable
from ember.testing.conformance import _special as sp
from ember.testing.conformance._case import case, key
from ember.testing.conformance._data import (
    DTYPES,
    FLOATS,
    INTS,
    LAYOUTS,
    base_shape,
    check,
    read,
    round_to,
    seeded,
    suite_dtypes,
    to_device,
    tolerance,
    values,
    view,
)

F = ember.nn.functional


# --- unary -------------------------------------------------------------------------------

def _np_round(x):
    return np.round(x)          # half to even, as the ABI's ROUND


def _gelu(x):
    return x * sp.ndtr(x)


# NumPy's value of each unary op code; the dtypes its kernel takes, the input domain and the
# tolerance come from the op table (core/optable.py), so a new code needs only a line here
UNARY_REF = {
    "neg": np.negative, "exp": np.exp, "relu": lambda x: np.maximum(x, 0), "abs": np.abs,
    "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "reciprocal": lambda x: 1 / x,
    "square": np.square, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": _np_round, "exp2": np.exp2, "expm1": np.expm1, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "erf": sp.erf, "erfc": sp.erfc, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "rsqrt": lambda x: 1 / np.sqrt(x), "bitwise_not": np.invert, "tan": np.tan,
    "erfinv": sp.erfinv, "lgamma": sp.lgamma, "digamma": sp.digamma, "gelu": _gelu,
    "sign": lambda x: (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype),   # NaN: 0, as abi.h
}
# the ember call of a code that is no torch.<name> function
_CALL = {"gelu": F.gelu}


def _unary_case(op, fn, ref, domain, scale):
    def run(device, dtype, layout):
        host = values(seeded("unary", op, dtype, layout), base_shape(layout), dtype, domain)
        x = view(layout, to_device(host, dtype, device))
        hv = view(layout, host)
        want = ref(hv if dtype == "bool" else hv.astype(np.float64 if dtype in FLOATS
                                                         else np.int64))
        check(fn(x), want, dtype, device, tolerance(dtype, scale), f"{op}({dtype})")
    return run


for _d in optable.UNARY.ops:
    case("unary", _d.name, suite_dtypes(_d), LAYOUTS)(_unary_case(
        _d.name, _CALL.get(_d.name) or getattr(ember, _d.name), UNARY_REF[_d.name], _d.domain,
        _d.tol))


# --- binary ------------------------------------------------------------------------------

def _shift_left(a, b):
    return np.left_shift(a.astype(np.int64), b)


def _bool_or_int(f):
    """A NumPy ufunc applied in int64 (wrapping back on the cast), or as is on bools."""
    return lambda a, b: f(a, b) if a.dtype == bool else f(a.astype(np.int64),
                                                          b.astype(np.int64))


PREDICATES = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
              "gt": np.greater, "ge": np.greater_equal, "logical_and": np.logical_and,
              "logical_or": np.logical_or, "logical_xor": np.logical_xor}
# NumPy's value of each binary op code (by its ABI name); dtypes, input domains and whether
# `other` may be a Python number come from the op table (gelu_backward has its own case)
BINARY_REF = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "pow": np.power, **PREDICATES,
    "atan2": np.arctan2, "fmod": np.fmod, "remainder": np.remainder,
    "floor_divide": np.floor_divide, "fmax": np.fmax, "fmin": np.fmin,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "shift_left": _shift_left, "shift_right": np.right_shift,
}
BINARY_LAYOUTS = LAYOUTS + ("pyscalar",)
_BIN_SHAPES = {"contiguous": ((3, 4), (3, 4)), "strided": ((8, 3), (8, 3)),
               "broadcast": ((3, 1), (4,)), "empty": ((0, 4), (4,)), "scalar": ((), ()),
               "pyscalar": ((3, 4), None)}


def _py_scalar(dtype, domain):
    if dtype == "bool":
        return True
    if dtype in FLOATS:
        return 1.5 if domain != "small" else 0.5
    return 2


def _binary_operands(op, dtype, layout, device, dom_a, dom_b):
    rng = seeded("binary", op, dtype, layout)
    sa, sb = _BIN_SHAPES[layout]
    ha = values(rng, sa, dtype, dom_a)
    a = to_device(ha, dtype, device)
    if layout == "strided":
        a, ha = view("strided", a), view("strided", ha)
    if sb is None:
        hb = b = _py_scalar(dtype, dom_b)
        return a, b, ha, np.asarray(hb, dtype=ha.dtype)
    hb = values(rng, sb, dtype, dom_b)
    b = to_device(hb, dtype, device)
    if layout == "strided":
        b, hb = view("strided", b), view("strided", hb)
    return a, b, ha, hb


def _binary_case(op, fn, ref, dom_a, dom_b):
    def run(device, dtype, layout):
        a, b, ha, hb = _binary_operands(op, dtype, layout, device, dom_a, dom_b)
        if op == "pow" and dtype in FLOATS:
            ha = ha.astype(np.float64)
        if dtype in FLOATS:
            want = ref(ha.astype(np.float64), hb.astype(np.float64))
        elif op in PREDICATES:
            want = ref(ha, hb)
        else:
            want = _bool_or_int(ref)(ha, hb)
        out = "bool" if op in PREDICATES else dtype
        check(fn(a, b), want, out, device, tolerance(dtype, 2), f"{op}({dtype}, {dtype})")
    return run


def _binary_skip(takes_scalar):
    """pyscalar where the op takes no Python number; negative shifts of uint8 (no negative
    amount of its dtype exists)."""
    return lambda dtype, layout: (layout == "pyscalar" and not takes_scalar) or \
        (layout == "negative" and dtype == "uint8")


# --- shifts by 0, by the bit width and past it, by negative amounts ------------------------
# PyTorch's rule: a shift by s in [0, bits) is C's (left wraps, right is arithmetic); any
# other s shifts everything out: left gives 0, right gives the sign (0 or -1).
_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
SHIFT_EDGES = ("by_zero", "by_width", "negative", "scalar")


def np_shift(a, s, left, dtype):
    """PyTorch's `a << s` (left) or `a >> s` of dtype `dtype`, in NumPy."""
    a, s = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(s, np.int64))
    out = (s < 0) | (s >= _BITS[dtype])
    s = np.where(out, 0, s)
    if left:
        return np.where(out, 0, np.left_shift(a, s)).astype(dtype)      # wraps to dtype
    return np.where(out, np.where(a < 0, -1, 0), np.right_shift(a, s)).astype(dtype)


def _shift_operands(dtype, variant):
    """(a, shift amounts: an array, or Python ints for "scalar") of one edge variant."""
    info = np.iinfo(dtype)
    a = np.array([1, 5, 0, 3, 100, info.max, info.min, -7 if info.min else 200])
    bits = _BITS[dtype]
    if variant == "by_zero":
        return a, np.zeros_like(a)
    if variant == "by_width":
        return a, np.resize([bits - 1, bits, bits + 1, min(100, info.max), 0], a.shape)
    if variant == "negative":
        return a, np.resize([-1, -bits, -100, 1], a.shape)
    return a, [0, 1, bits - 1, bits, bits + 3]


def _shift_edge_case(op, fn, run_layout):
    left = op == "shift_left"

    def run(device, dtype, variant):
        if variant not in SHIFT_EDGES:
            run_layout(device, dtype, variant)
            return
        ha, hs = _shift_operands(dtype, variant)
        a = to_device(ha.astype(dtype), dtype, device)
        if variant != "scalar":
            check(fn(a, to_device(hs.astype(dtype), dtype, device)),
                  np_shift(ha.astype(dtype), hs, left, dtype), dtype, device,
                  what=f"{op}({dtype}) {variant}")
            return
        for k in hs:                             # a Python int keeps the tensor's dtype
            check(fn(a, k), np_shift(ha.astype(dtype), k, left, dtype), dtype, device,
                  what=f"{op}({dtype}) by the Python int {k}")
    return run


for _d in optable.BINARY.ops:
    if _d.name == "gelu_backward":
        continue
    _op, _fn = _d.enum.lower(), getattr(ember, _d.name)
    _da, _db = (_d.domain, _d.domain) if isinstance(_d.domain, str) else _d.domain
    _run = _binary_case(_op, _fn, BINARY_REF[_op], _da, _db)
    _variants = BINARY_LAYOUTS
    if _op.startswith("shift"):
        _run, _variants = _shift_edge_case(_op, _fn, _run), BINARY_LAYOUTS + SHIFT_EDGES
    case("binary", _op, suite_dtypes(_d), _variants, skip=_binary_skip(_d.scalar_other))(_run)


@case("binary", "gelu_backward", FLOATS, ("contiguous", "strided", "empty", "scalar"))
def _gelu_backward(device, dtype, layout):
    rng = seeded("gelu_backward", dtype, layout)
    hx = values(rng, base_shape(layout), dtype)
    hg = view(layout, values(rng, base_shape(layout), dtype))
    x = view(layout, to_device(hx, dtype, device)).detach().requires_grad_()
    F.gelu(x).backward(to_device(np.array(hg), dtype, device))
    hx = view(layout, hx)
    check(x.grad, hg * (sp.ndtr(hx) + hx * sp.npdf(hx)), dtype, device,
          tolerance(dtype, 2), "gelu backward")


# --- where, fill, copy -------------------------------------------------------------------

@case("where", "where", DTYPES, LAYOUTS + ("pyscalar",))
def _where(device, dtype, layout):
    rng = seeded("where", dtype, layout)
    shape = base_shape("contiguous" if layout == "pyscalar" else layout)
    hc = rng.random(shape) < 0.5
    ha, hb = values(rng, shape, dtype), values(rng, shape, dtype)
    c, a = to_device(hc, "bool", device), to_device(ha, dtype, device)
    b = hb_v = None
    if layout == "pyscalar":
        b = hb_v = True if dtype == "bool" else 2
    else:
        b, hb_v = view(layout, to_device(hb, dtype, device)), view(layout, hb)
    got = ember.where(view(layout, c), view(layout, a), b)
    check(got, np.where(view(layout, hc), view(layout, ha), hb_v), dtype, device)


def _fill_value(dtype):
    return True if dtype == "bool" else (2.5 if dtype in FLOATS else 7)


@case("fill", "fill", DTYPES, ("contiguous", "strided", "empty", "scalar"))
def _fill(device, dtype, layout):
    v = _fill_value(dtype)
    shape = base_shape(layout)
    if layout == "strided":
        x = ember.zeros(shape, dtype=getattr(ember, dtype), device=device)
        x.t()[1].fill_(v)
        want = np.zeros(shape)
        want.T[1] = v
        check(x, want, dtype, device)
        return
    check(ember.full(shape, v, dtype=getattr(ember, dtype), device=device),
          np.full(shape, v), dtype, device)


def _copy_values(rng, shape, src):
    if src in FLOATS:       # non-negative halves: exact in every float, in range for uint8
        return rng.integers(0, 60, shape) / 2
    if src == "uint8":
        return rng.integers(0, 60, shape).astype(np.uint8)
    return values(rng, shape, src)


@case("copy", "copy", DTYPES, [f"{d}-{lay}" for d in DTYPES for lay in ("contiguous",
                                                                          "strided")],
      key=lambda src, variant: key("copy", "", f"{src}->{variant.split('-')[0]}"))
def _copy(device, src, variant):
    dst, layout = variant.split("-")
    rng = seeded("copy", src, variant)
    shape = (3, 4) if layout == "contiguous" else (8, 3)
    host = _copy_values(rng, shape, src)
    x = view(layout, to_device(host, src, device))
    want = view(layout, host)
    if dst == "bool":
        want = want != 0
    elif dst in INTS:
        want = np.trunc(want.astype(np.float64)).astype(np.int64).astype(dst) \
            if src in FLOATS else want.astype(np.int64).astype(dst)
    check(x.to(getattr(ember, dst)), want, dst, device, what=f"copy {src} -> {dst}")


# --- copies between the host and the device ---------------------------------------------

def _cpu_available():
    try:
        return bool(ember.get_device_module("cpu").is_available())
    except Exception:
        return False


@case("host", "host", DTYPES, ("tensor", "numpy", "item", "cpu", "to_device"))
def _host(device, dtype, variant):
    import pytest
    rng = seeded("host", dtype, variant)
    host = values(rng, (3, 4), dtype)
    if variant == "tensor":                     # from a nested list, then from an array
        check(ember.tensor(host.tolist(), dtype=getattr(ember, dtype), device=device), host,
              dtype, device)
        check(to_device(host, dtype, device), host, dtype, device)
    elif variant == "numpy":
        x = to_device(host, dtype, device)
        got = x.t().numpy(force=True)
        np.testing.assert_array_equal(got.astype(np.float64), host.T.astype(np.float64))
    elif variant == "item":
        x = to_device(host, dtype, device)
        for i in (0, 5):
            v = x.flatten()[i].item()
            assert type(v) is {"bool": bool}.get(dtype, float if dtype in FLOATS else int)
            assert v == host.flat[i].item()
    else:
        if not _cpu_available():
            pytest.skip("the CPU plugin is not installed: no cpu device to copy with")
        if variant == "cpu":
            c = to_device(host, dtype, device).t().cpu()
            assert c.device.type == "cpu" and c.dtype == getattr(ember, dtype)
            np.testing.assert_array_equal(read(c).astype(np.float64),
                                          host.T.astype(np.float64))
        else:
            c = ember.tensor(host.astype(np.float32) if dtype == "bfloat16" else host,
                             dtype=getattr(ember, dtype))
            check(c.t().to(device), host.T, dtype, device)
            check(c.to(device, ember.float64), host.astype(np.float64), "float64", device)


# --- ternary: lerp, addcmul, addcdiv (the optional entry; without it, the composites) -----

_TERNARY_VALUE = {"addcmul": 0.75, "addcdiv": -1.5}


def _ternary_np(op, a, b, c, v):
    """(result, (d/da, d/db, d/dc) as factors of the incoming gradient) in float64."""
    if op == "lerp":
        small = np.abs(c) < 0.5
        return (np.where(small, a + c * (b - a), b - (b - a) * (1 - c)),
                (1 - c, c, b - a))
    if op == "addcmul":
        return a + v * b * c, (np.ones_like(a), v * c, v * b)
    return a + v * b / c, (np.ones_like(a), v / c, -v * b / (c * c))


def _ternary_call(op, a, b, c, v, inplace=False):
    if op == "lerp":
        return a.lerp_(b, c) if inplace else ember.lerp(a, b, c)
    fn = getattr(a, op + "_") if inplace else getattr(ember, op)
    return fn(b, c, value=v) if inplace else fn(a, b, c, value=v)


def _ternary_case(op):
    @case("ternary", op, FLOATS, LAYOUTS + ("number", "inplace", "backward"),
          skip=lambda dtype, variant: op != "lerp" and variant == "number")
    def run(device, dtype, variant):
        rng = seeded("ternary", op, dtype, variant)
        layout = variant if variant in LAYOUTS else "contiguous"
        shape = base_shape(layout)
        ha, hb = values(rng, shape, dtype), values(rng, shape, dtype)
        # lerp's weight on both sides of 1/2 (its two formulas); a divisor away from 0
        hc = values(rng, shape, dtype, "unit") + 0.4 if op == "lerp" else \
            values(rng, shape, dtype, "nonzero")
        hc = round_to(hc, dtype)
        v = _TERNARY_VALUE.get(op)
        tol = tolerance(dtype, 4)
        if variant == "number":                 # lerp with a number weight, both formulas
            a, b = to_device(ha, dtype, device), to_device(hb, dtype, device)
            for w in (0.3, 0.8):
                check(ember.lerp(a, b, w), _ternary_np(op, ha, hb, np.float64(w), v)[0],
                      dtype, device, tol, f"lerp weight {w}")
            return
        a, b, c = (to_device(h, dtype, device) for h in (ha, hb, hc))
        want, factors = _ternary_np(op, *(view(layout, h) for h in (ha, hb, hc)), v)
        if variant == "inplace":
            out = a.clone()
            assert _ternary_call(op, out, b, c, v, inplace=True) is out
            check(out, want, dtype, device, tol, f"{op}_")
            return
        if variant == "backward":
            a, b, c = (x.requires_grad_() for x in (a, b, c))
        got = _ternary_call(op, *(view(layout, x) for x in (a, b, c)), v)
        check(got, want, dtype, device, tol, op)
        if variant == "backward":
            g = values(rng, shape, dtype)
            got.backward(to_device(g, dtype, device))
            for x, f, name in zip((a, b, c), factors, ("input", "tensor1", "tensor2")):
                check(x.grad, round_to(g, dtype) * f, dtype, device, tolerance(dtype, 8),
                      f"{op} grad of {name}")
    return run


for _op in ("lerp", "addcmul", "addcdiv"):
    _ternary_case(_op)
