"""The index family on "cuda" against PyTorch on the GPU: gather, scatter(_add/_reduce),
index_select/add/copy/fill, take, put_, advanced indexing, embedding-shaped gathers and
scatter-adds, searchsorted/bucketize and multinomial, over dtypes, non-contiguous and empty
operands.  Where duplicate indices make PyTorch's CUDA results depend on scheduling, or
PyTorch lacks a dtype, the oracle is ember's CPU plugin (the same semantics, abi.h).
Out-of-range indices raise IndexError with the CPU plugin's message; deterministic mode
gives the CPU plugin's bits for a float scatter-add with many duplicates."""
import pathlib

import numpy as np
import pytest

import ember

DEV = "cuda"
NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
         "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def pending(entry):
    """Whether this build of ember-cuda still lacks the kernel-table entry `entry` (the core
    would call a NULL pointer): ops built on it are skipped."""
    import ember_cuda
    src = pathlib.Path(ember_cuda.__file__).with_name("_cuda.pyx")
    return src.is_file() and f"TABLE.{entry} = NULL" in src.read_text()


def values(shape, name, seed=0, kind="small"):
    """NumPy values for dtype `name`: small integers (exact sums in any order), or normal
    floats (kind="real"), or factors whose products stay exact (kind="mul")."""
    g = np.random.default_rng(seed)
    if name == "bool":
        return g.integers(0, 2, size=shape).astype(bool)
    if name == "uint8":
        return g.integers(0, 6, size=shape).astype(np.uint8)
    if kind == "mul":
        return g.choice(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), size=shape)
    if kind == "real" and name in FLOATS:
        return g.standard_normal(size=shape)
    return g.integers(-4, 5, size=shape).astype(np.float64 if name in FLOATS else np.int64)


def host_array(shape, name, seed=0, kind="small"):
    """values() in the NumPy dtype ember takes for `name` (float32 for bfloat16)."""
    v = values(shape, name, seed, kind)
    return v.astype(np.float32 if name == "bfloat16" else np.dtype(name))


def etensor(shape, name, seed=0, kind="small"):
    """values() as an ember tensor of dtype `name` on cuda"""
    return ember.tensor(host_array(shape, name, seed, kind), device=DEV).to(getattr(ember, name))


def pair(oracle, shape, name, seed=0, kind="small"):
    """(ember tensor on cuda, torch tensor on the oracle's device) holding the same values."""
    src = host_array(shape, name, seed, kind)
    t = oracle.torch.from_numpy(src.copy()).to(oracle.device).to(getattr(oracle.torch, name))
    return ember.tensor(src, device=DEV).to(getattr(ember, name)), t


def tindex(oracle, a):
    return oracle.torch.tensor(np.asarray(a), dtype=oracle.torch.int64, device=oracle.device)


def eindex(a):
    return ember.tensor(np.asarray(a, dtype=np.int64), device=DEV)


def assert_same_as_cpu(e, c):
    """ember on cuda equals ember on the CPU, bit for bit (NaNs as NaNs)."""
    assert e.device.type == "cuda" and c.device.type == "cpu"
    assert tuple(e.shape) == tuple(c.shape) and e.dtype == c.dtype
    x, y = e.cpu(), c
    if e.dtype == ember.bfloat16:
        x, y = x.float(), y.float()
    np.testing.assert_array_equal(x.numpy(), y.numpy())


def check(oracle, e, torch_fn, cpu_fn):
    """e against PyTorch, or against ember's CPU plugin where PyTorch lacks the dtype."""
    try:
        t = torch_fn()
    except (RuntimeError, NotImplementedError):
        return assert_same_as_cpu(e, cpu_fn())
    oracle.assert_matches(e, t)


# -- gather and index_select -------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(oracle, name, dim):
    e, t = pair(oracle, (4, 5), name)
    ix = np.random.default_rng(1).integers(0, 4, size=(3, 4))
    oracle.assert_matches(ember.gather(e, dim, eindex(ix)),
                          oracle.torch.gather(t, dim, tindex(oracle, ix)))
    oracle.assert_matches(e.t().gather(dim, eindex(ix)), t.t().gather(dim, tindex(oracle, ix)))
    ex = eindex([[1, 0]]).expand(3, 2)                            # a stride-0 index
    oracle.assert_matches(e.gather(1, ex), t.gather(1, tindex(oracle, [[1, 0]]).expand(3, 2)))
    e3, t3 = pair(oracle, (3, 4, 6), name, seed=2)
    ix3 = np.random.default_rng(3).integers(0, 3, size=(2, 4, 3))
    oracle.assert_matches(e3[:, :, ::2].gather(0, eindex(ix3)),
                          t3[:, :, ::2].gather(0, tindex(oracle, ix3)))


@pytest.mark.parametrize("name", NAMES)
def test_index_select(oracle, name):
    e, t = pair(oracle, (6, 7), name)
    ix = [5, 0, 5, 2, 1]
    for dim in (0, 1, -1):
        oracle.assert_matches(e.index_select(dim, eindex(ix)),
                              t.index_select(dim, tindex(oracle, ix)))
        oracle.assert_matches(e.t().index_select(dim, eindex(ix)),
                              t.t().index_select(dim, tindex(oracle, ix)))
    i32 = ember.tensor(np.array(ix, np.int32), device=DEV)
    oracle.assert_matches(e.index_select(0, i32), t.index_select(0, tindex(oracle, ix)))
    oracle.assert_matches(e.index_select(1, eindex([])), t.index_select(1, tindex(oracle, [])))


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int64", "uint8"])
@pytest.mark.parametrize("d", [128, 130, 129])
def test_embedding_gather(oracle, name, d):
    """weight[V, D] rows by a long index: the vectorised row path (D=128: 16-byte units,
    130: 8- or 4-byte units, 129: elementwise)."""
    v, n = 1000, 4096
    e, t = pair(oracle, (v, d), name, seed=4)
    ix = np.random.default_rng(5).integers(0, v, size=n)
    oracle.assert_matches(e.index_select(0, eindex(ix)), t.index_select(0, tindex(oracle, ix)))
    tok = ix.reshape(64, 64)
    oracle.assert_matches(ember.nn.functional.embedding(eindex(tok), e),
                          oracle.torch.nn.functional.embedding(tindex(oracle, tok), t))
    k = (v - 1) * d                                           # rows one element off
    oracle.assert_matches(e.reshape(-1)[1:1 + k].reshape(v - 1, d).index_select(0, eindex(ix % (v - 1))),
                          t.reshape(-1)[1:1 + k].reshape(v - 1, d).index_select(0, tindex(oracle, ix % (v - 1))))


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int32", "int64"])
def test_embedding_backward_index_add(oracle, name):
    """the embedding gradient: rows of grad[N, D] added into [V, D] at a long index with
    many duplicates (atomics; integer-valued grads so any order is exact)"""
    v, d, n = 300, 128, 5000
    g, tg = pair(oracle, (n, d), name, seed=6)
    ix = np.random.default_rng(7).integers(0, v, size=n)
    z = ember.zeros(v, d, dtype=getattr(ember, name), device=DEV)
    tz = oracle.torch.zeros(v, d, dtype=getattr(oracle.torch, name), device=oracle.device)
    got = z.index_add(0, eindex(ix), g)
    want = tz.index_add(0, tindex(oracle, ix), tg)
    if name in ("float16", "bfloat16"):     # sums of up to ~40 small integers: exact in float32
        oracle.assert_matches(got.float(), want.float(), rtol=0, atol=0)
    else:
        oracle.assert_matches(got, want)


# -- scatter --------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter(oracle, name, reduce):
    kind = "mul" if reduce == "multiply" and name in FLOATS else "small"
    e, t = pair(oracle, (4, 5), name, kind=kind)
    s, ts = pair(oracle, (3, 5), name, seed=2, kind=kind)
    if reduce is None:                       # distinct targets: PyTorch's result is defined
        ix = np.array([[0, 1, 2, 3]] * 3)
    else:
        ix = np.random.default_rng(1).integers(0, 4, size=(3, 4))
    kw = {} if reduce is None else {"reduce": reduce}
    ei, ti = eindex(ix), tindex(oracle, ix)

    def cpu(f):
        return f(e.cpu(), ei.cpu(), s.cpu())
    check(oracle, ember.scatter(e, 1, ei, s, **kw), lambda: oracle.torch.scatter(t, 1, ti, ts, **kw),
          lambda: cpu(lambda a, i, b: ember.scatter(a, 1, i, b, **kw)))
    check(oracle, e.scatter(0, ei, 1, **kw), lambda: t.scatter(0, ti, 1, **kw),
          lambda: cpu(lambda a, i, b: a.scatter(0, i, 1, **kw)))
    c = e.clone()
    assert c.scatter_(1, ei, s, **kw) is c
    check(oracle, c, lambda: t.clone().scatter_(1, ti, ts, **kw),
          lambda: cpu(lambda a, i, b: a.scatter_(1, i, b, **kw)))


@pytest.mark.parametrize("name", NAMES)
def test_scatter_duplicates_keep_the_last(name):
    """plain scatter with duplicate indices keeps the last source in row-major order, as the
    CPU plugin: through the in-order walk (index varies outside dim) and through winners
    (index constant outside dim: index_copy, index_put_, put_)"""
    e, s = etensor((6, 5), name), etensor((8, 5), name, seed=3)
    ix = eindex(np.random.default_rng(2).integers(0, 6, size=(8, 5)))
    assert_same_as_cpu(e.scatter(0, ix, s), e.cpu().scatter(0, ix.cpu(), s.cpu()))
    assert_same_as_cpu(e.t().scatter(1, ix.t(), s.t()), e.cpu().t().scatter(1, ix.cpu().t(),
                                                                           s.cpu().t()))
    rows = eindex([3, 1, 3, 0, 3, 1, 5, 5])
    assert_same_as_cpu(e.index_copy(0, rows, s), e.cpu().index_copy(0, rows.cpu(), s.cpu()))
    cols = eindex([4, 4, 0, 4, 2])
    s2 = etensor((6, 5), name, seed=4)
    assert_same_as_cpu(e.index_copy(1, cols, s2), e.cpu().index_copy(1, cols.cpu(), s2.cpu()))
    flat = eindex(np.random.default_rng(9).integers(-30, 30, size=4000))
    src = etensor((4000,), name, seed=5)
    assert_same_as_cpu(e.clone().put_(flat, src), e.cpu().put_(flat.cpu(), src.cpu()))
    x, xc = e.clone(), e.cpu()
    x[rows] = s
    xc[rows.cpu()] = s.cpu()
    assert_same_as_cpu(x, xc)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add(oracle, name, dim):
    e, t = pair(oracle, (5, 6), name)
    s, ts = pair(oracle, (5, 6), name, seed=3)
    ix = np.random.default_rng(1).integers(0, 3, size=(5, 6))        # many duplicates
    ei, ti = eindex(ix), tindex(oracle, ix)
    check(oracle, e.scatter_add(dim, ei, s), lambda: t.scatter_add(dim, ti, ts),
          lambda: e.cpu().scatter_add(dim, ei.cpu(), s.cpu()))
    check(oracle, ember.scatter_add(e.t().contiguous().t(), dim, ei, s),
          lambda: oracle.torch.scatter_add(t, dim, ti, ts),
          lambda: e.cpu().scatter_add(dim, ei.cpu(), s.cpu()))


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                  "uint8"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(oracle, name, reduce, include_self):
    kind = "mul" if reduce == "prod" and name in FLOATS else "small"
    e, t = pair(oracle, (3, 5), name, kind=kind)
    s, ts = pair(oracle, (3, 6), name, seed=4, kind=kind)
    ix = np.random.default_rng(1).integers(0, 5, size=(3, 6))
    got = e.scatter_reduce(1, eindex(ix), s, reduce, include_self=include_self)
    oracle.assert_matches(got, t.scatter_reduce(1, tindex(oracle, ix), ts, reduce,
                                                include_self=include_self))


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_nan_wins(oracle, reduce):
    e, t = pair(oracle, (2, 4), "float32")
    src = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, 0.5, 7.0, 1.0]])
    s, ts = ember.tensor(src.astype(np.float32), device=DEV), oracle.torch.tensor(
        src, dtype=oracle.torch.float32, device=oracle.device)
    ix = [[0, 0, 1, 3], [2, 2, 2, 0]]
    oracle.assert_matches(e.scatter_reduce(1, eindex(ix), s, reduce),
                          t.scatter_reduce(1, tindex(oracle, ix), ts, reduce))


@pytest.mark.parametrize("name", ["float32", "float16", "float64"])
def test_deterministic_scatter_add(name):
    """deterministic mode: the same bits twice, and the CPU plugin's (duplicates added in
    row-major order); the default mode's atomics agree to rounding"""
    ix = eindex(np.random.default_rng(12).integers(0, 7, size=20000))
    z = ember.zeros(7, dtype=getattr(ember, name), device=DEV)
    ints = etensor((20000,), name, seed=11)          # small integers: exact in any order
    assert_same_as_cpu(z.scatter_add(0, ix, ints), z.cpu().scatter_add(0, ix.cpu(), ints.cpu()))
    src = etensor((20000,), name, seed=11, kind="real")
    want = z.cpu().scatter_add(0, ix.cpu(), src.cpu())
    if name != "float16":                 # float16 sums of normals: order-dependent beyond 1%
        fast = z.scatter_add(0, ix, src)
        np.testing.assert_allclose(fast.cpu().double().numpy(), want.double().numpy(),
                                   rtol=1e-4, atol=1e-3)
    ember.use_deterministic_algorithms(True)
    try:
        a = z.scatter_add(0, ix, src)
        b = z.index_add(0, ix, src)
        c = z.scatter_add(0, ix, src)
    finally:
        ember.use_deterministic_algorithms(False)
    assert_same_as_cpu(a, want)
    assert_same_as_cpu(c, want)
    assert_same_as_cpu(b, want)


# -- index_add/copy/fill, take, put_ -------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dim", [0, 1, -2])
def test_index_add_copy_fill(oracle, name, dim):
    e, t = pair(oracle, (4, 3), name)
    ix = [2, 0, 2]
    shape = [4, 3]
    shape[dim] = 3
    s, ts = pair(oracle, tuple(shape), name, seed=5)
    ei, ti = eindex(ix), tindex(oracle, ix)
    if name != "bool":
        check(oracle, e.index_add(dim, ei, s), lambda: t.index_add(dim, ti, ts),
              lambda: e.cpu().index_add(dim, ei.cpu(), s.cpu()))
        alpha = 2 if name != "uint8" else 1
        check(oracle, ember.index_add(e, dim, ei, s, alpha=alpha),
              lambda: oracle.torch.index_add(t, dim, ti, ts, alpha=alpha),
              lambda: ember.index_add(e.cpu(), dim, ei.cpu(), s.cpu(), alpha=alpha))
    u = [2, 0]
    shape[dim] = 2
    s2, ts2 = pair(oracle, tuple(shape), name, seed=6)
    oracle.assert_matches(e.index_copy(dim, eindex(u), s2), t.index_copy(dim, tindex(oracle, u), ts2))
    oracle.assert_matches(e.index_fill(dim, eindex([-1, 0]), 1),
                          t.index_fill(dim, tindex(oracle, [-1, 0]), 1))
    c = e.clone()
    assert c.index_fill_(dim, eindex(u), ember.tensor(0, device=DEV).to(e.dtype)) is c
    oracle.assert_matches(c, t.clone().index_fill_(dim, tindex(oracle, u), 0))


@pytest.mark.parametrize("name", ["float32", "int64", "float16", "bool"])
def test_take_put(oracle, name):
    e, t = pair(oracle, (3, 4), name)
    ix = [[0, -2], [11, 5]]            # no duplicate: PyTorch's CUDA put_ keeps any one
    ei, ti = eindex(ix), tindex(oracle, ix)
    oracle.assert_matches(ember.take(e, ei), oracle.torch.take(t, ti))
    oracle.assert_matches(e.t().take(ei), t.t().take(ti))
    src, tsrc = pair(oracle, (2, 2), name, seed=7)
    oracle.assert_matches(e.clone().put_(ei, src), t.clone().put_(ti, tsrc))
    if name != "bool":
        oracle.assert_matches(e.clone().put_(ei, src, accumulate=True),
                              t.clone().put_(ti, tsrc, accumulate=True))
        dup = [1, 1, 1, 6]
        one, tone = pair(oracle, (4,), name, seed=8)
        oracle.assert_matches(ember.put(e, eindex(dup), one, accumulate=True),
                              oracle.torch.put(t, tindex(oracle, dup), tone, accumulate=True))
    c = e.t().clone().t()                                      # a strided self
    oracle.assert_matches(c.put_(ei, src), t.t().clone().t().put_(ti, tsrc))


# -- advanced indexing -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "bfloat16", "int32", "bool"])
def test_advanced_indexing(oracle, name):
    e, t = pair(oracle, (5, 4, 3), name)
    i = [4, 0, -1, 2]
    oracle.assert_matches(e[eindex(i)], t[tindex(oracle, i)])
    oracle.assert_matches(e[:, eindex([3, 3, 1])], t[:, tindex(oracle, [3, 3, 1])])
    oracle.assert_matches(e[eindex([0, 2]), :, eindex([1, 2])],
                          t[tindex(oracle, [0, 2]), :, tindex(oracle, [1, 2])])
    oracle.assert_matches(e[eindex([[0, 1], [4, 4]]), eindex([1, 3])],
                          t[tindex(oracle, [[0, 1], [4, 4]]), tindex(oracle, [1, 3])])
    oracle.assert_matches(e.permute(2, 0, 1)[eindex([2, 0])], t.permute(2, 0, 1)[tindex(oracle, [2, 0])])
    m = values((5, 4), "bool", seed=3)
    em = ember.tensor(m, device=DEV)
    tm = oracle.torch.tensor(m, device=oracle.device)
    oracle.assert_matches(e[em], t[tm])
    v, tv = pair(oracle, (3,), name, seed=9)
    x, tx = e.clone(), t.clone()
    x[eindex([1, 3]), eindex([0, 2])] = v[0]
    tx[tindex(oracle, [1, 3]), tindex(oracle, [0, 2])] = tv[0]
    oracle.assert_matches(x, tx)
    x[em] = v[1]
    tx[tm] = tv[1]
    oracle.assert_matches(x, tx)
    rows, trows = pair(oracle, (2, 4, 3), name, seed=10)
    x[eindex([4, 0])] = rows
    tx[tindex(oracle, [4, 0])] = trows
    oracle.assert_matches(x, tx)
    if name != "bool":
        y, ty = e.clone(), t.clone()
        y[eindex([1, 2])] += rows
        ty[tindex(oracle, [1, 2])] += trows
        oracle.assert_matches(y, ty)
        dup = [1, 1, 0, 1]
        acc, tacc = pair(oracle, (4, 4, 3), name, seed=11)
        oracle.assert_matches(e.clone().index_put_((eindex(dup),), acc, accumulate=True),
                              t.clone().index_put_((tindex(oracle, dup),), tacc, accumulate=True))


# -- errors and empty operands -----------------------------------------------------------------

def test_out_of_range_messages():
    e = ember.zeros(2, 3, device=DEV)
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 1 with size 3"):
        e.gather(1, eindex([[5]]))
    with pytest.raises(IndexError, match=r"index -1 is out of bounds for dimension 1 with size 3"):
        e.gather(1, eindex([[0, -1]]))                         # no wrapping, as torch
    with pytest.raises(IndexError, match=r"index 2 is out of bounds for dimension 0 with size 2"):
        e.index_select(0, eindex([0, 2, 1]))
    with pytest.raises(IndexError, match=r"index 9 is out of bounds for dimension 0 with size 2"):
        ember.zeros(2, 4, device=DEV).index_select(0, eindex(np.r_[np.zeros(5000, np.int64), 9]))
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 1 with size 3"):
        e.scatter_add(1, eindex([[0, 3]]), ember.ones(1, 2, device=DEV))
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 1 with size 3"):
        e.scatter(1, eindex([[3], [1]]), 1.0)
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 0 with size 2"):
        e.index_add(0, eindex([5]), ember.ones(1, 3, device=DEV))
    with pytest.raises(IndexError, match=r"index -7 is out of bounds for dimension 0 with size 6"):
        e.take(eindex([-7]))
    with pytest.raises(IndexError, match=r"index 6 is out of bounds for dimension 0 with size 6"):
        e.clone().put_(eindex([1, 6]), ember.ones(2, device=DEV))
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for dimension 0 with size 2"):
        e[eindex([4])]
    with pytest.raises(IndexError, match=r"index -3 is out of bounds for dimension 0 with size 2"):
        e[eindex([-3])] = 1.0
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 1 with size 3"):
        e.index_fill(1, eindex([3]), 1.0)
    # the error is cleared: the next op runs
    assert e.gather(1, eindex([[2]])).cpu().tolist() == [[0.0]]


def test_empty_operands(oracle):
    e, t = pair(oracle, (2, 3), "float32")
    z = np.zeros((0, 3), np.int64)
    oracle.assert_matches(e.gather(1, eindex(z)), t.gather(1, tindex(oracle, z)))
    oracle.assert_matches(e.index_select(0, eindex([])), t.index_select(0, tindex(oracle, [])))
    oracle.assert_matches(e.scatter_add(0, eindex(z), ember.zeros(0, 3, device=DEV)),
                          t.scatter_add(0, tindex(oracle, z), oracle.torch.zeros(0, 3, device=oracle.device)))
    empty = ember.zeros(0, 4, device=DEV)
    oracle.assert_matches(empty.index_select(1, eindex([3, 0])),
                          oracle.torch.zeros(0, 4, device=oracle.device).index_select(1, tindex(oracle, [3, 0])))
    oracle.assert_matches(e[eindex([])], t[tindex(oracle, [])])


# -- searchsorted and bucketize -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                  "uint8", "int8", "int16"])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted(oracle, name, right):
    seq = np.array([[1, 3, 3, 5, 7], [0, 2, 4, 4, 9]])
    vals = np.array([[3, 6, 0, 9, 1], [4, 4, 2, 10, 0]])
    es, ts = _typed(oracle, seq, name)
    ev, tv = _typed(oracle, vals, name)
    oracle.assert_matches(ember.searchsorted(es, ev, right=right),
                          oracle.torch.searchsorted(ts, tv, right=right))
    oracle.assert_matches(ember.searchsorted(es[0], ev, out_int32=True,
                                             side="right" if right else "left"),
                          oracle.torch.searchsorted(ts[0], tv, out_int32=True, right=right))
    oracle.assert_matches(ember.searchsorted(es, ev.t().contiguous().t(), right=right),
                          oracle.torch.searchsorted(ts, tv, right=right))
    oracle.assert_matches(ember.bucketize(ev, es[1], right=right),
                          oracle.torch.bucketize(tv, ts[1], right=right))
    perm = np.array([[4, 0, 3, 2, 1]] * 2)
    inv = np.argsort(perm, axis=1)
    shuffled = np.take_along_axis(seq, inv, 1)
    esh, tsh = _typed(oracle, shuffled, name)
    oracle.assert_matches(ember.searchsorted(esh, ev, right=right, sorter=eindex(perm)),
                          oracle.torch.searchsorted(tsh, tv, right=right, sorter=tindex(oracle, perm)))
    oracle.assert_matches(ember.searchsorted(es[0], 4, right=right),
                          oracle.torch.searchsorted(ts[0], 4, right=right))
    oracle.assert_matches(ember.searchsorted(es, ev[:, :0], right=right),
                          oracle.torch.searchsorted(ts, tv[:, :0], right=right))


def _typed(oracle, a, name):
    t = oracle.torch.tensor(a, device=oracle.device).to(getattr(oracle.torch, name))
    return ember.tensor(a.astype(np.float32), device=DEV).to(getattr(ember, name)), t


def test_searchsorted_nan_and_long_rows(oracle):
    g = np.random.default_rng(13)
    seq = np.sort(g.standard_normal((3, 1000)).astype(np.float32), axis=1)
    vals = g.standard_normal((3, 777)).astype(np.float32)
    vals[0, :5] = np.nan
    es, ev = ember.tensor(seq, device=DEV), ember.tensor(vals, device=DEV)
    ts = oracle.torch.tensor(seq, device=oracle.device)
    tv = oracle.torch.tensor(vals, device=oracle.device)
    for right in (False, True):
        oracle.assert_matches(ember.searchsorted(es, ev, right=right),
                              oracle.torch.searchsorted(ts, tv, right=right))
    # NaNs in the sequence sort last (a NaN value lands before the first NaN), as the CPU
    withnan = ember.tensor([[1.0, 2.0, float("nan"), float("nan")]], device=DEV)
    probe = ember.tensor([[float("nan"), 2.0, 5.0]], device=DEV)
    for right in (False, True):
        assert_same_as_cpu(ember.searchsorted(withnan, probe, right=right),
                           ember.searchsorted(withnan.cpu(), probe.cpu(), right=right))


# -- multinomial --------------------------------------------------------------------------------

def test_multinomial_with_replacement():
    p = ember.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 0.0, 0.0, 2.0]], device=DEV)
    r = ember.multinomial(p, 4000, replacement=True)
    assert r.shape == (2, 4000) and r.dtype == ember.int64 and r.device.type == "cuda"
    counts = np.stack([np.bincount(row, minlength=4) for row in r.cpu().numpy()])
    assert counts[0, 0] == counts[0, 3] == counts[1, 1] == counts[1, 2] == 0
    assert abs(counts[0, 2] / 4000 - 0.75) < 0.05 and abs(counts[1, 0] / 4000 - 0.5) < 0.05
    assert ember.multinomial(p[0], 1, True).shape == (1,)
    for dt in (ember.float32, ember.float64, ember.float16, ember.bfloat16):
        w = ember.tensor(np.random.default_rng(3).random((3, 200)), device=DEV).to(dt)
        ember.manual_seed(21)
        a = ember.multinomial(w, 500, replacement=True)
        ember.manual_seed(21)
        b = ember.multinomial(w.cpu(), 500, replacement=True)
        assert_same_as_cpu(a, b)          # the same uniforms; rows <= 256 long: the same cdf


def test_multinomial_long_rows():
    """rows longer than a block's threads: chunked running sums, same distribution"""
    m = 5000
    w = np.zeros(m)
    w[[7, 1234, 4999]] = [1.0, 2.0, 1.0]
    w[2000:2100] = 0.01
    r = ember.multinomial(ember.tensor(w, device=DEV), 20000, replacement=True).cpu().numpy()
    counts = np.bincount(r, minlength=m)
    assert counts[w == 0].sum() == 0
    freq = counts / r.size
    want = w / w.sum()
    assert np.abs(freq[[7, 1234, 4999]] - want[[7, 1234, 4999]]).max() < 0.02
    assert abs(freq[2000:2100].sum() - want[2000:2100].sum()) < 0.02


@pytest.mark.skipif(pending("reduce"), reason="needs ember-cuda's reduce entry (pending)")
def test_multinomial_without_replacement():
    p = ember.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 0.0, 0.0, 2.0]], device=DEV)
    w = ember.multinomial(p, 2)
    assert sorted(w[0].cpu().tolist()) == [1, 2] and sorted(w[1].cpu().tolist()) == [0, 3]
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        ember.multinomial(p, 3)


def test_multinomial_errors():
    for bad in ([-1.0, 1.0], [float("nan"), 1.0], [float("inf"), 1.0]):
        with pytest.raises(RuntimeError, match="`inf`, `nan` or element < 0"):
            ember.multinomial(ember.tensor(bad, device=DEV), 1, True)
    with pytest.raises(RuntimeError, match=r"sum of probabilities <= 0"):
        ember.multinomial(ember.tensor([[1.0, 1.0], [0.0, 0.0]], device=DEV), 1, True)
    with pytest.raises(RuntimeError, match=r"sum of probabilities <= 0"):
        ember.multinomial(ember.tensor([0.0, 0.0], device=DEV), 1)      # checked with N = 0
    with pytest.raises(RuntimeError, match="without replacement"):
        ember.multinomial(ember.ones(4, device=DEV), 5)
    ok = ember.multinomial(ember.tensor([0.0, 1.0], device=DEV), 3, True)  # errors cleared
    assert ok.cpu().tolist() == [1, 1, 1]
