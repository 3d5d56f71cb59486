"""Cases of the reduce, scan, index (gather/scatter) and search entries."""
import numpy as np

import ember
from ember.core import optable
from ember.testing.conformance._case import case
from ember.testing.conformance._data import (
    DTYPES,
    FLOATS,
    NUMERIC,
    base_shape,
    check,
    read,
    seeded,
    suite_dtypes,
    to_device,
    tolerance,
    values,
    view,
)

# --- reduce ------------------------------------------------------------------------------
# (dims reduced, dims for max/min/arg ops that cannot reduce an empty dim)
_RED_DIM = {"contiguous": 1, "strided": 0, "broadcast": 0, "empty": 0, "scalar": None,
            "full": None}


def _acc(dtype):
    return "int64" if dtype not in FLOATS else dtype


def _np_mean(x, dim):
    if x.size == 0 or (dim is not None and x.shape[dim] == 0):
        return np.full(np.sum(x, axis=dim).shape, np.nan)
    return np.mean(x, axis=dim)


def _np_argext(f):
    def ref(x, dim):
        if dim is None:
            return np.asarray(f(x.reshape(-1)))
        return f(x, axis=dim)
    return ref


# op: (ember call(x, dim), NumPy reference(x, dim), result dtype); dtypes and input domain
# come from the op table (core/optable.py)
REDUCE = {
    "sum": (lambda x, d: x.sum() if d is None else x.sum(d),
            lambda x, d: np.sum(x, axis=d), _acc),
    "mean": (lambda x, d: x.mean() if d is None else x.mean(d),
             lambda x, d: _np_mean(x, d), lambda d: d),
    "prod": (lambda x, d: x.prod() if d is None else x.prod(d),
             lambda x, d: np.prod(x, axis=d), _acc),
    "max": (lambda x, d: ember.amax(x) if d is None else ember.amax(x, d),
            lambda x, d: np.max(x, axis=d), lambda d: d),
    "min": (lambda x, d: ember.amin(x) if d is None else ember.amin(x, d),
            lambda x, d: np.min(x, axis=d), lambda d: d),
    "argmax": (lambda x, d: ember.argmax(x, d), _np_argext(np.argmax),
               lambda d: "int64"),
    "argmin": (lambda x, d: ember.argmin(x, d), _np_argext(np.argmin),
               lambda d: "int64"),
}


def _reduce_case(op, fn, ref, out_dtype, domain):
    def run(device, dtype, layout):
        dim = _RED_DIM[layout]
        if layout == "empty" and op in ("max", "min", "argmax", "argmin"):
            dim = 1            # an empty result, not an empty reduction (which raises)
        shape = base_shape("contiguous" if layout == "full" else layout)
        rng = seeded("reduce", op, dtype, layout)
        if domain == "prod" and dtype in FLOATS:
            host = values(rng, shape, dtype, "unit") * 0.5 + 1
            host = host.astype(np.float64)
        else:
            host = values(rng, shape, dtype, "small" if domain == "prod" else domain)
        x = view(layout, to_device(host, dtype, device))
        hv = view(layout, host)
        want = ref(hv.astype(np.float64) if dtype in FLOATS else
                   (hv.astype(np.int64) if dtype != "bool" or op in ("sum", "prod") else hv),
                   dim)
        n = hv.size if dim is None else (hv.shape[dim] if hv.ndim else 1)
        check(fn(x, dim), want, out_dtype(dtype), device,
              tolerance(dtype, 1 + np.sqrt(max(n, 1))), f"{op}({dtype}, dim={dim})")
    return run


for _d in optable.REDUCE.ops:
    _fn, _ref, _out = REDUCE[_d.name]
    case("reduce", _d.name, suite_dtypes(_d), ("contiguous", "strided", "broadcast", "empty",
                                               "scalar", "full"))(
        _reduce_case(_d.name, _fn, _ref, _out, _d.domain))


# --- scan --------------------------------------------------------------------------------

def _cumext(x, dim, better):
    """Running extreme and its index along `dim`: a tie moves the index (PyTorch); a NaN
    becomes and stays the extreme (a later NaN moves the index)."""
    x = np.moveaxis(np.asarray(x), dim, -1)
    vals, idx = np.empty_like(x), np.zeros(x.shape, np.int64)
    isnan = np.isnan if x.dtype.kind == "f" else (lambda v: False)
    for pos in np.ndindex(x.shape[:-1]):
        best, bi = None, 0
        for i, v in enumerate(x[pos]):
            if i == 0 or isnan(v) or (not isnan(best) and better(v, best)):
                best, bi = v, i
            vals[pos + (i,)], idx[pos + (i,)] = best, bi
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


# op: (ember call, NumPy reference); dtypes and input domain come from the op table
SCAN = {
    "cumsum": (ember.cumsum, np.cumsum),
    "cumprod": (ember.cumprod, np.cumprod),
    "cummax": (ember.cummax, lambda x, d: _cumext(x, d, lambda v, b: v >= b)),
    "cummin": (ember.cummin, lambda x, d: _cumext(x, d, lambda v, b: v <= b)),
}
_SCAN_DIM = {"contiguous": 1, "strided": 0, "broadcast": 0, "empty": 1, "scalar": 0}


def _scan_case(op, fn, ref, domain):
    def run(device, dtype, layout):
        dim = _SCAN_DIM[layout]
        rng = seeded("scan", op, dtype, layout)
        if domain == "prod" and dtype in FLOATS:
            host = values(rng, base_shape(layout), dtype, "unit") * 0.5 + 1
        else:
            host = values(rng, base_shape(layout), dtype, "small" if domain == "prod"
                          else domain)
        x = view(layout, to_device(host, dtype, device))
        hv = view(layout, host)
        hv = hv.astype(np.float64) if dtype in FLOATS else hv
        got = fn(x, dim)
        tol = tolerance(dtype, 4)
        if op in ("cummax", "cummin"):
            want, idx = ref(hv.reshape(hv.shape or (1,)), dim)
            want, idx = want.reshape(hv.shape), idx.reshape(hv.shape)
            check(got[0], want, dtype, device, tol, f"{op} values")
            check(got[1], idx, "int64", device, what=f"{op} indices")
        else:
            want = ref(hv.reshape(hv.shape or (1,)).astype(np.int64 if dtype not in FLOATS
                                                           else np.float64), axis=dim)
            check(got, want.reshape(hv.shape), dtype if dtype in FLOATS else "int64", device,
                  tol, f"{op}({dtype})")
    return run


for _d in optable.SCAN.ops:
    case("scan", _d.name, suite_dtypes(_d), ("contiguous", "strided", "broadcast", "empty",
                                             "scalar"))(
        _scan_case(_d.name, *SCAN[_d.name], _d.domain))


# --- index -------------------------------------------------------------------------------
# (out/src shape, index shape, dim)
_INDEX_SHAPES = {"contiguous": ((3, 5), (3, 4), 1), "dim0": ((4, 3), (3, 3), 0),
                 "strided": ((3, 5), (3, 4), 1), "empty": ((3, 5), (3, 0), 1)}


def _np_scatter(out, dim, index, src, combine):
    out = out.copy()
    for p in np.ndindex(index.shape):
        q = list(p)
        q[dim] = index[p]
        q = tuple(q)
        out[q] = src[p] if combine is None else combine(out[q], src[p])
    return out


def _np_gather(a, dim, index):
    out = np.empty(index.shape, a.dtype)
    for p in np.ndindex(index.shape):
        q = list(p)
        q[dim] = index[p]
        out[p] = a[tuple(q)]
    return out


def _combine(op, dtype):
    if dtype == "bool":
        return {"scatter_add": np.logical_or, "scatter_mul": np.logical_and,
                "scatter_amax": np.logical_or, "scatter_amin": np.logical_and}.get(op)
    return {"scatter_add": np.add, "scatter_mul": np.multiply, "scatter_amax": np.fmax,
            "scatter_amin": np.fmin}.get(op)


_REDUCE_NAME = {"scatter_mul": "prod", "scatter_amax": "amax", "scatter_amin": "amin"}


def _index_case(op):
    def run(device, dtype, layout):
        shape, ishape, dim = _INDEX_SHAPES[layout]
        rng = seeded("index", op, dtype, layout)
        hout = values(rng, shape, dtype, "small")
        hsrc = values(rng, ishape if op != "gather" else shape, dtype, "small")
        hidx = rng.integers(0, shape[dim], size=ishape)
        out = to_device(hout, dtype, device)
        src = to_device(hsrc, dtype, device)
        if layout == "strided":           # operands through transposed views
            out = to_device(np.ascontiguousarray(hout.T), dtype, device).t()
            src = to_device(np.ascontiguousarray(hsrc.T), dtype, device).t()
        idx = to_device(hidx, "int64", device)
        if op == "gather":
            check(ember.gather(src, dim, idx), _np_gather(hsrc, dim, hidx), dtype, device)
            return
        if op == "scatter":
            got = out.scatter(dim, idx, src)
            want = _np_scatter(hout, dim, hidx, hsrc, None)
        elif op == "scatter_add":
            got = out.scatter_add(dim, idx, src)
            want = _np_scatter(hout, dim, hidx, hsrc, _combine(op, dtype))
        else:
            got = out.scatter_reduce(dim, idx, src, _REDUCE_NAME[op])
            want = _np_scatter(hout, dim, hidx, hsrc, _combine(op, dtype))
        check(got, want, dtype, device, tolerance(dtype, 4), f"{op}({dtype})")
    return run


for _op in ("gather", "scatter", "scatter_add", "scatter_mul", "scatter_amax",
            "scatter_amin"):
    case("index", _op, DTYPES, tuple(_INDEX_SHAPES))(_index_case(_op))


# --- search ------------------------------------------------------------------------------

def _search_case(right):
    def run(device, dtype, layout):
        rng = seeded("search", right, dtype, layout)
        srt = np.sort(values(rng, (3, 6), dtype, "small"), axis=-1)
        vals = values(rng, (3, 5) if layout != "empty" else (3, 0), dtype, "small")
        side = "right" if right else "left"
        if layout == "broadcast":             # one sorted row for every row of values
            s = to_device(srt[0], dtype, device)
            want = np.searchsorted(srt[0], vals, side=side)
        else:
            s = to_device(srt, dtype, device)
            want = np.stack([np.searchsorted(srt[i], vals[i], side=side) for i in range(3)])
        v = to_device(vals, dtype, device)
        if layout == "strided":
            v = to_device(np.ascontiguousarray(vals.T), dtype, device).t()
        kw = {}
        if layout.startswith("sorter"):      # an unsorted sequence and its sorting order
            seq = values(rng, (3, 6), dtype, "small")
            order = np.argsort(seq, axis=-1, kind="stable")
            if layout == "sorter_1d":
                seq, order = seq[0], order[0]
                want = np.searchsorted(np.sort(seq), vals, side=side)
            else:
                want = np.stack([np.searchsorted(np.sort(seq[i]), vals[i], side=side)
                                 for i in range(3)])
            s, kw = to_device(seq, dtype, device), {"sorter": to_device(order, "int64", device)}
        check(ember.searchsorted(s, v, right=right, **kw), want, "int64", device)
    return run


_SEARCH_LAYOUTS = ("contiguous", "strided", "broadcast", "empty", "sorter", "sorter_1d")
case("search", "left", NUMERIC, _SEARCH_LAYOUTS)(_search_case(False))
case("search", "right", NUMERIC, _SEARCH_LAYOUTS)(_search_case(True))


@case("search", "multinomial", FLOATS, ("contiguous", "strided", "vector", "without",
                                      "permutation"))
def _multinomial(device, dtype, layout):
    if layout in ("without", "permutation"):
        _multinomial_without(device, dtype, layout)
        return
    w = np.array([[0.0, 1.0, 0.0, 3.0, 0.0], [2.0, 2.0, 0.0, 0.0, 4.0],
                  [0.0, 0.0, 0.0, 0.0, 5.0]])
    if layout == "vector":
        w = w[1:2]
    p = to_device(w, dtype, device)
    if layout == "strided":
        p = to_device(np.ascontiguousarray(w.T), dtype, device).t()
    if layout == "vector":
        p = p[0]
    n = 2000
    ember.manual_seed(0)
    got = ember.multinomial(p, n, replacement=True)
    assert got.dtype == ember.int64 and tuple(got.shape) == ((n,) if layout == "vector"
                                                             else (w.shape[0], n))
    samples = got.numpy(force=True).reshape(w.shape[0], n)
    for row, s in zip(w, samples):
        assert ((s >= 0) & (s < w.shape[1])).all(), "multinomial: sample out of range"
        assert (row[s] > 0).all(), "multinomial: sampled a zero-weight category"
        freq = np.bincount(s, minlength=w.shape[1]) / n
        np.testing.assert_allclose(freq, row / row.sum(), atol=0.05,
                                   err_msg="multinomial: frequencies far from weights")


def _multinomial_without(device, dtype, layout):
    """Without replacement: the draws of a row are distinct categories of nonzero weight;
    over many rows (a fixed seed) the first draw follows the weights q, the second
    sum_i q_i q_j / (1 - q_i); as many draws as nonzero weights: a permutation of them."""
    w = np.array([1.0, 2.0, 0.0, 3.0, 4.0])
    rows, n = 4000, 4 if layout == "permutation" else 2
    ember.manual_seed(0)
    got = ember.multinomial(to_device(np.tile(w, (rows, 1)), dtype, device), n)
    assert got.dtype == ember.int64 and tuple(got.shape) == (rows, n)
    s = read(got)
    assert ((s >= 0) & (s < len(w))).all(), "multinomial: sample out of range"
    assert (w[s] > 0).all(), "multinomial: sampled a zero-weight category"
    assert (np.sort(s, 1)[:, 1:] != np.sort(s, 1)[:, :-1]).all(), \
        "multinomial without replacement drew a category twice in a row"
    if layout == "permutation":
        return
    q = w / w.sum()
    second = np.array([sum(q[i] * q[j] / (1 - q[i]) for i in range(len(q)) if i != j)
                       for j in range(len(q))])
    for k, want in ((0, q), (1, second)):
        np.testing.assert_allclose(np.bincount(s[:, k], minlength=len(w)) / rows, want,
                                   atol=0.03, err_msg=f"multinomial: draw {k + 1}'s "
                                                      f"frequencies far from its law")


# --- sort (ABI 6.1; a device without it sorts on the host) -------------------------------

_SORT_LAYOUTS = ("contiguous", "dim0", "strided", "descending", "empty", "scalar")


@case("sort", "sort", DTYPES, _SORT_LAYOUTS)
def _sort(device, dtype, layout):
    rng = seeded("sort", dtype, layout)
    shape = {"empty": (3, 0), "scalar": ()}.get(layout, (3, 7))
    hx = values(rng, shape, dtype, "small")          # small values: many ties
    if dtype in FLOATS and hx.size:
        hx.flat[::5] = np.nan                        # NaN orders above every number
    x = to_device(hx, dtype, device)
    axis, descending = (0 if layout == "dim0" else -1), layout == "descending"
    if layout == "strided":
        x = to_device(np.ascontiguousarray(hx.T), dtype, device).t()
    got = ember.sort(x, dim=axis, descending=descending, stable=True)
    row = np.atleast_1d(hx)
    if descending:      # stable descending: a stable ascending sort of the reversed rows
        idx = row.shape[axis] - 1 - np.flip(np.argsort(np.flip(row, axis), axis,
                                                       kind="stable"), axis)
    else:
        idx = np.argsort(row, axis, kind="stable")
    idx = idx.reshape(hx.shape)
    check(got.indices, idx, "int64", device, what="sort indices")
    check(got.values, np.take_along_axis(row, idx.reshape(row.shape), axis).reshape(hx.shape),
          dtype, device, what="sort values")
