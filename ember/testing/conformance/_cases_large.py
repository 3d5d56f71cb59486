"""Cases on tensors past the size cutoffs where the core stops holding the GIL and the CPU
plugin goes parallel (32768 elements each): one case per kernel entry at about 67k
elements, odd sizes (so blocks end in tails), contiguous and through strided views, with
whole-number values so that sums of many stay exact in every dtype.  Each case is keyed
by the kernel entry it runs, so a declared-unimplemented entry skips it too."""
import numpy as np

import ember
from ember.testing.conformance._case import case, key
from ember.testing.conformance._cases_elementwise import _fill_value
from ember.testing.conformance._data import (
    DTYPES,
    FLOATS,
    NUMERIC,
    check,
    edtype,
    read,
    seeded,
    to_device,
    tolerance,
    values,
)

CUTOFF = 32768              # the core's GIL_CUTOFF and ember-cpu's PARALLEL_CUTOFF
SHAPE = (257, 263)          # 67591 elements: past both cutoffs, odd sizes
LAYOUTS = ("contiguous", "strided")


def _operand(rng, dtype, device, layout, domain="integer"):
    """(device tensor, host array) of SHAPE: contiguous, or a transposed view with a step
    (of a base twice as large)."""
    if layout == "strided":
        base = values(rng, (2 * SHAPE[1], SHAPE[0]), dtype, domain)
        return to_device(base, dtype, device).t()[:, ::2], base.T[:, ::2]
    host = values(rng, SHAPE, dtype, domain)
    return to_device(host, dtype, device), host


def _wide(h, dtype):
    """Host values as the reference computes with them: float64, int64, or bool."""
    return h if dtype == "bool" else h.astype(np.float64 if dtype in FLOATS else np.int64)


def _entry(family, op=None):
    """The host-fallback key of the kernel entry a case runs (op None: the variant)."""
    return lambda dtype, variant: key(family, variant if op is None else op, dtype)


# --- elementwise, where, copy, fill ------------------------------------------------------

def _unary_op(dtype):
    if dtype == "bool":
        return "bitwise_not", ember.bitwise_not, np.invert
    if dtype in FLOATS:
        return "exp", ember.exp, np.exp
    return "abs", ember.abs, np.abs


@case("large", "unary", DTYPES, LAYOUTS,
      key=lambda dtype, variant: key("unary", _unary_op(dtype)[0], dtype))
def _unary(device, dtype, layout):
    op, fn, ref = _unary_op(dtype)
    x, hx = _operand(seeded("large", "unary", dtype, layout), dtype, device, layout)
    check(fn(x), ref(_wide(hx, dtype)), dtype, device, what=f"{op}({dtype}), {layout}")


@case("large", "binary", DTYPES, ("broadcast", "strided", "pyscalar"),
      key=lambda dtype, variant: key("binary", "mul" if variant == "pyscalar" else "add",
                                     dtype))
def _binary(device, dtype, layout):
    rng = seeded("large", "binary", dtype, layout)
    if layout == "pyscalar":
        a, ha = _operand(rng, dtype, device, "contiguous")
        s = True if dtype == "bool" else 3
        check(a * s, _wide(ha, dtype) * s, dtype, device, what="x * scalar")
        return
    if layout == "broadcast":           # (R, 1) + (C,): the output alone is large
        ha, hb = values(rng, (SHAPE[0], 1), dtype, "integer"), values(rng, (SHAPE[1],),
                                                                      dtype, "integer")
        a, b = to_device(ha, dtype, device), to_device(hb, dtype, device)
    else:
        (a, ha), (b, hb) = (_operand(rng, dtype, device, "strided") for _ in range(2))
    check(a + b, _wide(ha, dtype) + _wide(hb, dtype), dtype, device, what=f"add, {layout}")


@case("large", "where", DTYPES, LAYOUTS, key=_entry("where", ""))
def _where(device, dtype, layout):
    rng = seeded("large", "where", dtype, layout)
    hc = rng.random(SHAPE) < 0.5
    a, ha = _operand(rng, dtype, device, layout)
    b, hb = _operand(rng, dtype, device, "contiguous")
    check(ember.where(to_device(hc, "bool", device), a, b), np.where(hc, ha, hb), dtype,
          device)


def _cast_target(dtype):
    return "int64" if dtype == "float32" else "float32"


@case("large", "copy", DTYPES, ("strided", "cast"),
      key=lambda dtype, variant: key("copy", "", f"{dtype}->" + (
          _cast_target(dtype) if variant == "cast" else dtype)))
def _copy(device, dtype, variant):
    x, hx = _operand(seeded("large", "copy", dtype, variant), dtype, device, "strided")
    if variant == "strided":
        got = x.contiguous()
        assert got.is_contiguous()
        check(got, hx, dtype, device, what="contiguous() of a strided view")
        return
    dst = _cast_target(dtype)
    check(x.to(edtype(dst)), hx.astype(np.float64), dst, device, what=f"{dtype} -> {dst}")


@case("large", "fill", DTYPES, LAYOUTS, key=_entry("fill", ""))
def _fill(device, dtype, layout):
    v = _fill_value(dtype)
    if layout == "contiguous":
        check(ember.full(SHAPE, v, dtype=edtype(dtype), device=device), np.full(SHAPE, v),
              dtype, device)
        return
    x = ember.zeros(2 * SHAPE[1], SHAPE[0], dtype=edtype(dtype), device=device)
    x.t()[:, ::2].fill_(v)                       # the rows in between stay zero
    want = np.zeros((2 * SHAPE[1], SHAPE[0]))
    want[::2] = v
    check(x, want, dtype, device, what="fill_ through a strided view")


# --- reductions, scans, sort -------------------------------------------------------------

_REDUCE = {"sum": (lambda x, d: x.sum() if d is None else x.sum(d), np.sum),
           "mean": (lambda x, d: x.mean() if d is None else x.mean(d), np.mean),
           "max": (lambda x, d: ember.amax(x) if d is None else ember.amax(x, d), np.max),
           "argmax": (lambda x, d: ember.argmax(x, d), np.argmax)}


def _reduce_out(op, dtype):
    if op == "argmax" or (op == "sum" and dtype not in FLOATS):
        return "int64"
    return dtype


@case("large", "reduce", DTYPES, tuple(_REDUCE), key=_entry("reduce"),
      skip=lambda dtype, op: (op == "mean" and dtype not in FLOATS) or
      (op == "argmax" and dtype == "bool"))
def _reduce(device, dtype, op):
    fn, ref = _REDUCE[op]
    for layout in LAYOUTS:
        x, hx = _operand(seeded("large", "reduce", op, dtype, layout), dtype, device, layout)
        h = hx if dtype == "bool" and op == "max" else _wide(hx, dtype).astype(
            np.float64 if dtype in FLOATS else np.int64)
        for dim in (None, 0, 1):           # ties: argmax answers the first (PyTorch, NumPy)
            check(fn(x, dim), ref(h, axis=dim), _reduce_out(op, dtype), device,
                  tolerance(dtype, 2), f"{op}({dtype}, dim={dim}), {layout}")


def _np_cummax(h):
    """Running max and its index (a tie moves the index, as PyTorch's cummax), in NumPy."""
    run = np.maximum.accumulate(h)
    at = np.where(h == run, np.arange(h.size), 0)
    return run, np.maximum.accumulate(at)


@case("large", "scan", DTYPES, ("cumsum", "cummax"), key=_entry("scan"),
      skip=lambda dtype, op: op == "cumsum" and dtype == "bool")
def _scan(device, dtype, op):
    x, hx = _operand(seeded("large", "scan", op, dtype), dtype, device, "contiguous")
    x, h = x.reshape(-1), _wide(hx, dtype).reshape(-1)      # one scan of 67591 elements
    if op == "cumsum":
        out = dtype if dtype in FLOATS else "int64"
        check(ember.cumsum(x, 0), np.cumsum(h), out, device, what="cumsum, one long row")
        y, hy = _operand(seeded("large", "scan", dtype, "strided"), dtype, device, "strided")
        check(ember.cumsum(y, 0), np.cumsum(_wide(hy, dtype), 0), out, device,
              what="cumsum down the columns of a strided view")
        return
    got = ember.cummax(x, 0)
    run, at = _np_cummax(h)
    check(got.values, run, dtype, device, what="cummax values")
    check(got.indices, at, "int64", device, what="cummax indices")


@case("large", "sort", DTYPES, ("stable",), key=_entry("sort", ""))
def _sort(device, dtype, variant):
    x, hx = _operand(seeded("large", "sort", dtype), dtype, device, "contiguous")
    got = ember.sort(x.reshape(-1), stable=True)          # few values: long runs of ties
    idx = np.argsort(hx.reshape(-1), kind="stable")
    check(got.indices, idx, "int64", device, what="sort indices")
    check(got.values, hx.reshape(-1)[idx], dtype, device, what="sort values")


# --- index and search --------------------------------------------------------------------

@case("large", "index", DTYPES, ("gather", "scatter_add", "index_select"),
      key=lambda dtype, op: key("index", "gather" if op == "index_select" else op, dtype))
def _index(device, dtype, op):
    rng = seeded("large", "index", op, dtype)
    src, hsrc = _operand(rng, dtype, device, "contiguous")
    if op == "gather":
        hidx = rng.integers(0, SHAPE[1], size=SHAPE)
        got = ember.gather(src, 1, to_device(hidx, "int64", device))
        check(got, np.take_along_axis(hsrc, hidx, 1), dtype, device)
    elif op == "index_select":              # an index of 50k positions into a 1-d tensor
        hidx = rng.integers(0, hsrc.size, size=50021)
        got = ember.index_select(src.reshape(-1), 0, to_device(hidx, "int64", device))
        check(got, hsrc.reshape(-1)[hidx], dtype, device)
    else:                                   # 67k sources into 16 columns: many collisions
        hidx = rng.integers(0, 16, size=SHAPE)
        want = np.zeros((SHAPE[0], 16), np.int64 if dtype not in FLOATS else np.float64)
        np.add.at(want, (np.arange(SHAPE[0])[:, None], hidx), _wide(hsrc, dtype))
        out = ember.zeros(SHAPE[0], 16, dtype=edtype(dtype), device=device)
        got = out.scatter_add(1, to_device(hidx, "int64", device), src)
        check(got, want != 0 if dtype == "bool" else want, dtype, device)


@case("large", "search", NUMERIC, ("left", "right"), key=_entry("search"))
def _search(device, dtype, side):
    rng = seeded("large", "search", dtype, side)
    srt = np.sort(values(rng, (1001,), dtype, "integer"))           # runs of ties
    v, hv = _operand(rng, dtype, device, "strided")
    got = ember.searchsorted(to_device(srt, dtype, device), v, right=side == "right")
    check(got, np.searchsorted(srt, hv, side=side), "int64", device)


# --- softmax, matmul, random -------------------------------------------------------------

@case("large", "softmax", FLOATS, ("rows",), key=_entry("softmax", "softmax"))
def _softmax(device, dtype, variant):
    hx = values(seeded("large", "softmax", dtype), (4, 20011), dtype, "small")
    e = np.exp(hx - hx.max(-1, keepdims=True))
    check(ember.softmax(to_device(hx, dtype, device), -1), e / e.sum(-1, keepdims=True),
          dtype, device, tolerance(dtype, 2))


@case("large", "matmul", FLOATS, ("2d",), key=_entry("matmul", ""))
def _matmul(device, dtype, variant):
    rng = seeded("large", "matmul", dtype)
    ha, hb = values(rng, (37, 65), dtype, "integer"), values(rng, (65, 997), dtype, "integer")
    got = to_device(ha, dtype, device) @ to_device(hb, dtype, device)
    check(got, ha @ hb, dtype, device, tolerance(dtype, 2), "(37, 65) @ (65, 997)")


@case("large", "random", FLOATS, ("uniform", "normal"), key=_entry("random"))
def _random(device, dtype, op):
    def draw(seed):
        ember.manual_seed(seed)
        x = ember.zeros(2 * SHAPE[1], SHAPE[0], dtype=edtype(dtype), device=device)
        v = x.t()[:, ::2]
        v.uniform_() if op == "uniform" else v.normal_()
        return read(x).astype(np.float64)
    a = draw(5)
    np.testing.assert_array_equal(a, draw(5), err_msg=f"{op}: the same seed, other numbers")
    assert not (a[1::2] != 0).any(), f"{op} through a strided view wrote between its rows"
    h = a[::2]
    if op == "uniform":
        assert h.min() >= 0 and h.max() <= 1 and abs(h.mean() - 0.5) < 0.01
    else:
        assert abs(h.mean()) < 0.02 and abs(h.std() - 1) < 0.02, (h.mean(), h.std())
