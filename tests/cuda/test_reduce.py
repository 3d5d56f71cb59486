"""Reductions (the `reduce` entry) and scans (`scan`) on cuda against PyTorch: every dtype,
the kernels' layouts (inner rows by warps or blocks, strided, outer columns, splits across
blocks), non-contiguous and expanded inputs, empty and 0-d tensors, NaN, ties, extremes,
and bitwise reproducibility."""
import numpy as np
import pytest

import ember

DEV = "cuda"
DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
          ember.float16, ember.bfloat16, ember.float32, ember.float64]
FLOATS = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
NAN = float("nan")
INF = float("inf")


def data(shape, dtype, seed=0, kind="normal"):
    """Values of `dtype` as a NumPy array (float64 for the floating dtypes)."""
    rng = np.random.default_rng(seed)
    if dtype == ember.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        if kind == "prod":
            return rng.uniform(0.8, 1.25, shape)
        if kind == "positive":
            return rng.random(shape)
        return rng.standard_normal(shape)
    lo = 0 if dtype == ember.uint8 else -50
    if kind == "prod":
        return rng.choice(np.array([1, 1, 2, 3] if lo == 0 else [-1, 1, 1, 2]), shape)
    return rng.integers(lo, 50, shape)


def pair(oracle, arr, dtype):
    """The same values as a PyTorch tensor on the oracle's device and an ember cuda tensor."""
    t = oracle.torch.from_numpy(np.array(arr)).to(oracle.tdtype(dtype)).to(oracle.device)
    return oracle.from_torch(t, device=DEV), t


def close(oracle, e, t, n=1):
    """`e` matches `t`; sums of n terms get an absolute slack growing with sqrt(n)."""
    tol = oracle.tol(e.dtype)
    oracle.assert_matches(e, t, rtol=tol, atol=tol * max(1.0, float(np.sqrt(n))))


def count(shape, dim):
    if dim is None or dim == ():
        return int(np.prod(shape))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return int(np.prod([shape[d] for d in dims]))


# -- every op over every dtype, several dims, keepdim ---------------------------------------

SHAPE = (5, 37, 19)
DIMS = [None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sum_mean_prod(oracle, dtype):
    torch = oracle.torch
    x, t = pair(oracle, data(SHAPE, dtype), dtype)
    for dim in DIMS:
        for keepdim in (False, True):
            tdim = list(dim) if isinstance(dim, tuple) else dim
            close(oracle, ember.sum(x, dim, keepdim), torch.sum(t, tdim, keepdim),
                  count(SHAPE, dim))
            if dtype.is_floating_point:
                close(oracle, ember.mean(x, dim, keepdim), torch.mean(t, tdim, keepdim))
    xp, tp = pair(oracle, data(SHAPE, dtype, kind="prod"), dtype)
    close(oracle, ember.prod(xp[:, :4, :4]), torch.prod(tp[:, :4, :4]), 64)
    for dim in (0, 1, 2):
        for keepdim in (False, True):
            close(oracle, ember.prod(xp, dim, keepdim), torch.prod(tp, dim, keepdim), 64)
    if not dtype.is_floating_point:
        with pytest.raises(RuntimeError):
            ember.mean(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_extremes(oracle, dtype):
    torch = oracle.torch
    x, t = pair(oracle, data(SHAPE, dtype), dtype)
    for dim in DIMS:
        for keepdim in (False, True):
            d = () if dim is None else dim
            oracle.assert_matches(ember.amax(x, d, keepdim), torch.amax(t, d, keepdim))
            oracle.assert_matches(ember.amin(x, d, keepdim), torch.amin(t, d, keepdim))
    oracle.assert_matches(x.max(), t.max())
    oracle.assert_matches(x.min(), t.min())
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            ev, ei = x.max(dim, keepdim)
            tv, ti = t.max(dim, keepdim)
            oracle.assert_matches(ev, tv)
            oracle.assert_matches(ei, ti)
            ev, ei = x.min(dim, keepdim)
            tv, ti = t.min(dim, keepdim)
            oracle.assert_matches(ev, tv)
            oracle.assert_matches(ei, ti)
    if dtype == ember.bool:
        with pytest.raises(RuntimeError):
            ember.argmax(x)
        return
    for dim in (None, 0, 1, 2):
        for keepdim in (False, True):
            oracle.assert_matches(ember.argmax(x, dim, keepdim), torch.argmax(t, dim, keepdim))
            oracle.assert_matches(ember.argmin(x, dim, keepdim), torch.argmin(t, dim, keepdim))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_all_any(oracle, dtype):
    arr = data((6, 40), dtype)
    arr[1] = 1                                     # a row of all-nonzero
    arr[2] = 0                                     # a row of zeros
    x, t = pair(oracle, arr, dtype)
    oracle.assert_matches(x.all(), t.all())
    oracle.assert_matches(x.any(), t.any())
    for dim in (0, 1):
        oracle.assert_matches(x.all(dim), t.all(dim))
        oracle.assert_matches(x.any(dim), t.any(dim))


# -- the layouts -------------------------------------------------------------------------------
# (shape, dims) chosen to land on each kernel: inner warp rows, inner blocks, inner blocks
# split across blocks, strided inner (several reduced dims, steps), outer columns with and
# without splits, tiny reductions, mixed kept/reduced orders

LAYOUTS = [
    ((3000, 100), 1),            # inner, a warp per row
    ((4096, 1024), 1),           # inner, a warp per row, vector loads
    ((600, 5000), 1),            # inner, a block per row
    ((3, 200001), 1),            # inner, blocks split (odd length: a partial last vector)
    ((1, 1 << 20), None),        # inner, one output split
    ((32, 16, 56, 56), (0, 2, 3)),   # strided inner (batch-norm statistics), split
    ((7, 300, 11), (0, 2)),      # strided inner, no split
    ((7, 300, 11), (0, 1)),      # outer over merged dims
    ((50000, 64), 0),            # outer, split across blocks
    ((100000, 3), 0),            # outer, narrow (3 columns per block)
    ((37, 4096), 0),             # outer, no split
    ((512, 4096), 0),            # outer, wide, split
    ((100000, 5), 1),            # tiny reductions: outer
    ((9, 1, 17, 1), (1, 3)),     # only size-1 dims reduced
    ((2, 3, 4, 5, 6), (1, 3)),   # alternating kept and reduced
]


@pytest.mark.parametrize("shape,dim", LAYOUTS, ids=str)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float16, ember.int32], ids=str)
def test_layouts(oracle, shape, dim, dtype):
    torch = oracle.torch
    x, t = pair(oracle, data(shape, dtype), dtype)
    tdim = list(dim) if isinstance(dim, tuple) else dim
    close(oracle, ember.sum(x, dim), torch.sum(t, tdim), count(shape, dim))
    d = () if dim is None else dim
    oracle.assert_matches(ember.amax(x, d), torch.amax(t, d))
    oracle.assert_matches(ember.amin(x, d), torch.amin(t, d))
    if dtype == ember.float32:
        close(oracle, ember.mean(x, dim), torch.mean(t, tdim))
    if not isinstance(dim, tuple):
        oracle.assert_matches(ember.argmax(x, dim), torch.argmax(t, dim))
        oracle.assert_matches(ember.argmin(x, dim), torch.argmin(t, dim))


def test_argmax_over_dims_in_order(oracle):
    """Arg-reductions over several dims (the core flattens for dim=None) of permuted and
    strided views: positions are row-major over the reduced dims as the view orders them."""
    torch = oracle.torch
    x, t = pair(oracle, data((40, 30, 20), ember.float32), ember.float32)
    for ev, tv in [(x.permute(2, 0, 1), t.permute(2, 0, 1)), (x[:, ::3, 1:], t[:, ::3, 1:]),
                   (x.transpose(0, 2), t.transpose(0, 2))]:
        oracle.assert_matches(ember.argmax(ev), torch.argmax(tv))
        oracle.assert_matches(ember.argmin(ev), torch.argmin(tv))
        for dim in (0, 1, 2):
            oracle.assert_matches(ember.argmax(ev, dim), torch.argmax(tv, dim))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64, ember.bfloat16],
                         ids=str)
def test_non_contiguous(oracle, dtype):
    torch = oracle.torch
    x, t = pair(oracle, data((64, 48, 10), dtype), dtype)
    views = [
        (lambda a: a.transpose(0, 2)),
        (lambda a: a.permute(1, 2, 0)),
        (lambda a: a[::2, 1::3, :]),
        (lambda a: a[:, :, ::4]),
        (lambda a: a[5]),
        (lambda a: a[:, 3]),
    ]
    for view in views:
        ev, tv = view(x), view(t)
        for dim in [None] + list(range(tv.dim())) + [(0, tv.dim() - 1)]:
            tdim = list(dim) if isinstance(dim, tuple) else dim
            close(oracle, ember.sum(ev, dim), torch.sum(tv, tdim), count(tuple(tv.shape), dim))
            d = () if dim is None else dim
            oracle.assert_matches(ember.amax(ev, d), torch.amax(tv, d))
            if not isinstance(dim, tuple):
                oracle.assert_matches(ember.argmin(ev, dim), torch.argmin(tv, dim))


def test_expanded(oracle):
    """Stride-0 dims, kept and reduced."""
    torch = oracle.torch
    x, t = pair(oracle, data((1, 300), ember.float32), ember.float32)
    ex, et = x.expand(1000, 300), t.expand(1000, 300)
    for dim in (None, 0, 1):
        close(oracle, ember.sum(ex, dim), torch.sum(et, dim), count((1000, 300), dim))
        oracle.assert_matches(ember.argmax(ex, dim), torch.argmax(et, dim))
    y, u = pair(oracle, data((500, 1, 7), ember.int64), ember.int64)
    ey, eu = y.expand(500, 64, 7), u.expand(500, 64, 7)
    for dim in (0, 1, 2, (0, 2), (1, 2)):
        tdim = list(dim) if isinstance(dim, tuple) else dim
        oracle.assert_matches(ember.sum(ey, dim), torch.sum(eu, tdim))
        oracle.assert_matches(ember.amin(ey, dim), torch.amin(eu, dim))


def test_many_outputs_tiny_reductions(oracle):
    torch = oracle.torch
    for shape in [(200000, 2), (70000, 17), (3, 70000, 2)]:
        x, t = pair(oracle, data(shape, ember.float32), ember.float32)
        close(oracle, ember.sum(x, -1), torch.sum(t, -1), shape[-1])
        oracle.assert_matches(ember.argmax(x, -1), torch.argmax(t, -1))


# -- edge cases ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [ember.float32, ember.int32, ember.float16], ids=str)
def test_empty(oracle, dtype):
    torch = oracle.torch
    x, t = pair(oracle, data((0, 5), dtype), dtype)
    for dim in (0, 1, None, (0, 1)):
        tdim = list(dim) if isinstance(dim, tuple) else dim
        oracle.assert_matches(ember.sum(x, dim), torch.sum(t, tdim))
        if dtype.is_floating_point:
            oracle.assert_matches(ember.mean(x, dim), torch.mean(t, tdim))
    oracle.assert_matches(ember.prod(x, 0), torch.prod(t, 0))
    oracle.assert_matches(ember.prod(x), torch.prod(t))
    oracle.assert_matches(ember.amax(x, 1), torch.amax(t, 1))          # empty output
    oracle.assert_matches(ember.argmax(x, 1), torch.argmax(t, 1))
    with pytest.raises(IndexError):
        ember.amax(x, 0)
    with pytest.raises(IndexError):
        ember.argmin(x, 0)
    with pytest.raises((IndexError, RuntimeError)):
        ember.argmax(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_dim(oracle, dtype):
    torch = oracle.torch
    x, t = pair(oracle, data((), dtype), dtype)
    oracle.assert_matches(ember.sum(x), torch.sum(t))
    oracle.assert_matches(ember.sum(x, 0, True), torch.sum(t, 0, True))
    oracle.assert_matches(ember.amax(x), torch.amax(t))
    oracle.assert_matches(ember.amin(x, 0), torch.amin(t, 0))
    oracle.assert_matches(ember.prod(x), torch.prod(t))
    if dtype.is_floating_point:
        oracle.assert_matches(ember.mean(x), torch.mean(t))
    if dtype != ember.bool:
        oracle.assert_matches(ember.argmax(x), torch.argmax(t))
        oracle.assert_matches(ember.argmin(x, 0), torch.argmin(t, 0))
        for op in ("cumsum", "cumprod"):
            oracle.assert_matches(getattr(ember, op)(x, 0), getattr(torch, op)(t, 0))
    for op in ("cummax", "cummin"):
        ev, ei = getattr(ember, op)(x, 0)
        tv, ti = getattr(torch, op)(t, 0)
        oracle.assert_matches(ev, tv)
        oracle.assert_matches(ei, ti)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan(oracle, dtype):
    """max/min propagate NaN; argmax/argmin pick the first NaN; ties go to the first index."""
    torch = oracle.torch
    arr = data((6, 3000), dtype)
    arr[0, 5] = NAN
    arr[1, 7] = arr[1, 2999] = NAN
    arr[2, :] = NAN
    arr[3, :] = 2.0                                # ties everywhere
    arr[4, 100] = arr[4, 2000] = 9.0               # a tied maximum
    arr[4, 10] = arr[4, 1500] = -9.0
    arr[5, :] = -INF
    x, t = pair(oracle, arr, dtype)
    for dim in (1, None):
        d = () if dim is None else dim
        oracle.assert_matches(ember.amax(x, d), torch.amax(t, d))
        oracle.assert_matches(ember.amin(x, d), torch.amin(t, d))
        oracle.assert_matches(ember.argmax(x, dim), torch.argmax(t, dim))
        oracle.assert_matches(ember.argmin(x, dim), torch.argmin(t, dim))
    ev, ei = x.t().max(0)                          # the same rows as columns (outer layout)
    tv, ti = t.t().max(0)
    oracle.assert_matches(ev, tv)
    oracle.assert_matches(ei, ti)
    close(oracle, ember.sum(x, 1), torch.sum(t, 1), 3000)
    big, tbig = pair(oracle, np.where(np.arange(1 << 20) % 300007 == 5, NAN, 1.0), dtype)
    oracle.assert_matches(ember.argmax(big), torch.argmax(tbig))       # split across blocks
    oracle.assert_matches(ember.amin(big), torch.amin(tbig))


def test_integer_extremes(oracle):
    torch = oracle.torch
    lo, hi = -(1 << 63), (1 << 63) - 1
    arr = np.full((3, 1000), lo, dtype=np.int64)
    arr[1, 500] = hi
    arr[2, :] = hi
    x, t = pair(oracle, arr, ember.int64)
    for op in ("amax", "amin", "argmax", "argmin"):
        oracle.assert_matches(getattr(ember, op)(x, 1), getattr(torch, op)(t, 1))
    oracle.assert_matches(ember.sum(x, 1), torch.sum(t, 1))           # wraps, as PyTorch's


# -- large reductions and reproducibility --------------------------------------------------------

def bits(e):
    return e.cpu().numpy().tobytes()


def test_sum_10m(oracle):
    torch = oracle.torch
    x, t = pair(oracle, data(10_000_000, ember.float32, kind="positive"), ember.float32)
    s = ember.sum(x)
    ref = torch.sum(t.double()).float()
    oracle.assert_matches(s, ref, rtol=3e-6, atol=0)
    close(oracle, ember.mean(x), torch.mean(t.double()).float())
    assert bits(s) == bits(ember.sum(x))
    h, th = pair(oracle, data(10_000_000, ember.float16, kind="positive"), ember.float16)
    oracle.assert_matches(ember.mean(h), torch.mean(th.float()).half(), rtol=2e-3, atol=0)


@pytest.mark.parametrize("shape,dim", [((10_000_000,), None), ((3, 200001), 1),
                                       ((50000, 64), 0), ((32, 16, 56, 56), (0, 2, 3)),
                                       ((4096, 1024), 1)], ids=str)
def test_same_bits(oracle, shape, dim):
    x, _ = pair(oracle, data(shape, ember.float32), ember.float32)
    first = [bits(ember.sum(x, dim)), bits(ember.mean(x, dim))]
    for _ in range(2):
        assert [bits(ember.sum(x, dim)), bits(ember.mean(x, dim))] == first
    y = x.clone()                                  # the same values elsewhere in memory
    assert bits(ember.sum(y, dim)) == first[0]


def test_streams(oracle):
    """Split reductions on other streams than the default one (tickets per stream)."""
    torch = oracle.torch
    x, t = pair(oracle, data((3, 300001), ember.float32), ember.float32)
    y, u = pair(oracle, data((50000, 64), ember.float32), ember.float32)
    want = bits(ember.sum(x, 1)), bits(ember.sum(y, 0))
    for s in [ember.cuda.Stream() for _ in range(3)]:
        s.wait_stream(ember.cuda.current_stream())
        with ember.cuda.stream(s):
            r = ember.sum(x, 1), ember.sum(y, 0)      # split across blocks: rows, columns
            c = ember.sum(x, 0)
        s.synchronize()
        assert (bits(r[0]), bits(r[1])) == want
        close(oracle, c, torch.sum(t, 0), 3)


# -- scans ---------------------------------------------------------------------------------------

# a thread per row (<= 16 elements), a warp per row (one round, several), a block per row
SCAN_SHAPES = [((5, 37), 1), ((5, 37), 0), ((7, 1000), 1), ((3, 4, 5000), 2), ((2, 30000), 1),
               ((100001,), 0), ((9000, 3), 1), ((6, 7, 8), 1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cumsum_cumprod(oracle, dtype):
    torch = oracle.torch
    for shape, dim in SCAN_SHAPES:
        x, t = pair(oracle, data(shape, dtype, kind="positive"), dtype)
        ref = torch.cumsum(t.double(), dim).to(torch.cumsum(t, dim).dtype)
        close(oracle, ember.cumsum(x, dim), ref, shape[dim])
        if shape[dim] <= 40:
            xp, tp = pair(oracle, data(shape, dtype, kind="prod"), dtype)
            close(oracle, ember.cumprod(xp, dim), torch.cumprod(tp, dim), 64)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cummax_cummin(oracle, dtype):
    torch = oracle.torch
    for shape, dim in SCAN_SHAPES:
        arr = data(shape, dtype)
        if not dtype.is_floating_point and dtype != ember.bool:
            arr = arr % 7                          # many ties
        x, t = pair(oracle, arr, dtype)
        for op in ("cummax", "cummin"):
            ev, ei = getattr(ember, op)(x, dim)
            tv, ti = getattr(torch, op)(t, dim)
            oracle.assert_matches(ev, tv)
            oracle.assert_matches(ei, ti)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_scan_nan_ties(oracle, dtype):
    """Ties move cummax/cummin's index forward; a NaN becomes and stays the extreme, and each
    later NaN takes the index."""
    torch = oracle.torch
    rows = [[1, 3, 3, 2, 3, NAN, 5, NAN, 1], [2, 2, 2, 2, 2, 2, 2, 2, 2],
            [NAN, 1, 2, 3, 4, 5, 6, 7, 8], [-INF, -INF, 0, INF, INF, 1, NAN, INF, NAN],
            [5, 4, 3, 2, 1, 1, 2, 3, 4]]
    x, t = pair(oracle, np.array(rows), dtype)                   # a thread per row
    mid = np.tile(np.array(rows[0] + rows[3]), 30)                # 540: a warp per row
    y, u = pair(oracle, mid[None, :].repeat(3, 0), dtype)
    long = np.tile(np.array(rows[0] + rows[3]), 700)              # 12600: a block per row
    e3, t3 = pair(oracle, long[None, :].repeat(2, 0), dtype)
    for ev, tv in ((x, t), (y, u), (e3, t3)):
        for op in ("cummax", "cummin"):
            v, i = getattr(ember, op)(ev, 1)
            w, j = getattr(torch, op)(tv, 1)
            oracle.assert_matches(v, w)
            oracle.assert_matches(i, j)
        close(oracle, ember.cumsum(ev, 1), torch.cumsum(tv, 1), ev.shape[1])


def test_scan_non_contiguous(oracle):
    torch = oracle.torch
    x, t = pair(oracle, data((40, 3000), ember.float32), ember.float32)
    views = [(x.t(), t.t()), (x[::3, 1::2], t[::3, 1::2]),
             (x[:, :100].unsqueeze(1).expand(40, 5, 100), t[:, :100].unsqueeze(1).expand(40, 5, 100))]
    for ev, tv in views:
        for dim in range(tv.dim()):
            close(oracle, ember.cumsum(ev, dim), torch.cumsum(tv.double(), dim).float(),
                  tv.shape[dim])
            v, i = ember.cummin(ev, dim)
            w, j = torch.cummin(tv, dim)
            oracle.assert_matches(v, w)
            oracle.assert_matches(i, j)


def test_scan_empty_and_reproducible(oracle):
    torch = oracle.torch
    x, t = pair(oracle, data((0, 7), ember.float32), ember.float32)
    for dim in (0, 1):
        oracle.assert_matches(ember.cumsum(x, dim), torch.cumsum(t, dim))
        v, i = ember.cummax(x, dim)
        w, j = torch.cummax(t, dim)
        oracle.assert_matches(v, w)
        oracle.assert_matches(i, j)
    y, _ = pair(oracle, data((3, 50000), ember.float32), ember.float32)
    first = bits(ember.cumsum(y, 1))
    assert bits(ember.cumsum(y, 1)) == first
    assert bits(ember.cumsum(y.clone(), 1)) == first
