"""The index family against PyTorch: gather, scatter(_add/_reduce), index_select/add/copy/
fill/put, take, put_, searchsorted, multinomial and tan, over dtypes, non-contiguous and
expanded inputs, empty tensors, negative dims, duplicates and out-of-range indices."""
import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]


def pair(shape, dt, device, seed=0):
    g = np.random.default_rng(seed)
    t = torch.tensor(g.integers(0, 5, size=shape) if dt in ("bool", "uint8") else
                     g.uniform(-4, 4, size=shape)).to(getattr(torch, dt))
    e = ember.tensor(t.float().numpy() if dt == "bfloat16" else t.numpy(), device=device)
    return e.to(getattr(ember, dt)), t


def idx(shape, high, device, seed=1):
    a = np.random.default_rng(seed).integers(0, high, size=shape)
    return ember.tensor(a, device=device), torch.tensor(a)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dt, dim, device, oracle):
    e, t = pair((4, 5), dt, device)
    ei, ti = idx((3, 4), 4, device)                  # in range for e and e.t()
    oracle.assert_matches(ember.gather(e, dim, ei), torch.gather(t, dim, ti))
    oracle.assert_matches(e.t().gather(dim, ei), t.t().gather(dim, ti))      # non-contiguous
    exp = ember.tensor([[1, 0]], device=device).expand(3, 2)                   # expanded index
    oracle.assert_matches(e.gather(1, exp), t.gather(1, torch.tensor([[1, 0]]).expand(3, 2)))


def test_gather_errors_and_empty(device, oracle):
    e, t = pair((2, 3), "float32", device)
    for bad in ([[5]], [[-1]]):
        with pytest.raises(IndexError, match="index -?[15] is out of bounds for dimension 1"):
            e.gather(1, ember.tensor(bad, device=device))
        with pytest.raises(RuntimeError):                 # torch raises RuntimeError here
            e.gather(1, ember.tensor(bad, device=device))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        e.gather(1, ember.tensor([0], device=device))
    with pytest.raises(RuntimeError, match="int64"):
        e.gather(1, ember.tensor([[0.0]], device=device))
    z = ember.zeros(0, 3, dtype=ember.int64, device=device)
    oracle.assert_matches(e.gather(1, z), t.gather(1, torch.zeros(0, 3, dtype=torch.long)))
    oracle.assert_matches(e.gather(1, ember.tensor([[2]], dtype=ember.int32, device=device)),
                          t.gather(1, torch.tensor([[2]], dtype=torch.int32)))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter(dt, reduce, device, oracle):
    e, t = pair((4, 5), dt, device)
    s, ts = pair((3, 5), dt, device, seed=2)
    ei, ti = idx((3, 4), 4, device)
    if reduce is None:                                  # duplicates: keep distinct rows
        ei, ti = ember.tensor([[0, 1, 2, 3]] * 3, device=device), torch.tensor([[0, 1, 2, 3]] * 3)
    kw = {} if reduce is None else {"reduce": reduce}
    oracle.assert_matches(ember.scatter(e, 1, ei, s, **kw), torch.scatter(t, 1, ti, ts, **kw))
    oracle.assert_matches(e.scatter(0, ei, 1, **kw), t.scatter(0, ti, 1, **kw))
    c, tc = e.clone(), t.clone()
    assert c.scatter_(1, ei, s, **kw) is c
    oracle.assert_matches(c, tc.scatter_(1, ti, ts, **kw))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_duplicates(dt, dim, device, oracle):
    e, t = pair((5, 6), dt, device)
    s, ts = pair((5, 6), dt, device, seed=3)
    ei, ti = idx((5, 6), 3, device)                   # many duplicates along either dim
    oracle.assert_matches(e.scatter_add(dim, ei, s), t.scatter_add(dim, ti, ts))
    oracle.assert_matches(ember.scatter_add(e.t().contiguous().t(), dim, ei, s),
                          torch.scatter_add(t, dim, ti, ts))


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "bfloat16"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dt, reduce, include_self, device, oracle):
    e, t = pair((3, 5), dt, device)
    s, ts = pair((3, 4), dt, device, seed=4)
    ei, ti = idx((3, 4), 5, device)
    got = e.scatter_reduce(1, ei, s, reduce, include_self=include_self)
    oracle.assert_matches(got, t.scatter_reduce(1, ti, ts, reduce, include_self=include_self))
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        e.scatter_reduce(1, ei, s, "max")


def test_scatter_errors(device):
    e = ember.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        e.scatter(1, ember.tensor([[3]], device=device), 1.0)
    with pytest.raises(RuntimeError, match="self.dtype to be equal to src.dtype"):
        e.scatter(1, ember.tensor([[0]], device=device), ember.ones(1, 1, dtype=ember.float64,
                                                                    device=device))
    with pytest.raises(RuntimeError, match="no larger"):
        e.scatter_add(1, ember.tensor([[0, 1, 2, 0]], device=device), ember.ones(1, 3,
                                                                             device=device))
    with pytest.raises(RuntimeError, match="reduce argument"):
        e.scatter(1, ember.tensor([[0]], device=device), 1.0, reduce="max")


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -2])
def test_index_select_add_copy_fill(dt, dim, device, oracle):
    e, t = pair((4, 3), dt, device)
    ei, ti = ember.tensor([3, 0, 3], device=device), torch.tensor([3, 0, 3])
    n = 3 if dim in (0, -2) else 3
    ei, ti = ei.clamp(max=min(e.shape[dim], n) - 1), ti.clamp(max=min(t.shape[dim], n) - 1)
    oracle.assert_matches(e.index_select(dim, ei), t.index_select(dim, ti))
    oracle.assert_matches(e.t().index_select(dim, ei), t.t().index_select(dim, ti))
    shape = list(t.shape)
    shape[dim] = 3
    s, ts = pair(tuple(shape), dt, device, seed=5)
    if dt != "bool":
        oracle.assert_matches(e.index_add(dim, ei, s), t.index_add(dim, ti, ts))
        alpha = 2 if dt != "uint8" else 1
        oracle.assert_matches(ember.index_add(e, dim, ei, s, alpha=alpha),
                              torch.index_add(t, dim, ti, ts, alpha=alpha))
    u, tu = ember.tensor([2, 0], device=device), torch.tensor([2, 0])
    shape[dim] = 2
    s2, ts2 = pair(tuple(shape), dt, device, seed=6)
    oracle.assert_matches(e.index_copy(dim, u, s2), t.index_copy(dim, tu, ts2))
    neg = ember.tensor([-1, 0], device=device)
    oracle.assert_matches(e.index_fill(dim, neg, 1), t.index_fill(dim, torch.tensor([-1, 0]), 1))
    c, tc = e.clone(), t.clone()
    assert c.index_fill_(dim, u, ember.tensor(0, device=device).to(e.dtype)) is c
    oracle.assert_matches(c, tc.index_fill_(dim, tu, 0))


def test_index_select_out_of_range_exception_types(device):
    # torch raises IndexError at dim 0 and RuntimeError at dim 1: either except clause
    # written for torch must catch ember's
    e, t = ember.zeros(2, 3, device=device), torch.zeros(2, 3)
    for dim, bad in ((0, 2), (1, 3), (1, -1)):
        with pytest.raises(Exception) as te:
            t.index_select(dim, torch.tensor([bad]))
        with pytest.raises(type(te.value), match=f"index {bad} is out of bounds for dimension "
                                                 f"{dim} with size {e.shape[dim]}"):
            e.index_select(dim, ember.tensor([bad], device=device))


def test_index_errors(device):
    e = ember.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        e.index_select(0, ember.tensor([2], device=device))
    with pytest.raises(IndexError, match="out of bounds"):
        e.index_select(0, ember.tensor([-1], device=device))      # no wrapping, as torch
    with pytest.raises(RuntimeError, match="int32 or int64"):
        e.index_select(0, ember.tensor([0.0], device=device))
    with pytest.raises(IndexError, match="vector"):
        e.index_select(0, ember.tensor([[0]], device=device))
    with pytest.raises(RuntimeError, match="out of bounds"):
        e.index_add(0, ember.tensor([5], device=device), ember.ones(1, 3, device=device))
    with pytest.raises(RuntimeError, match="same scalar type"):
        e.index_add(0, ember.tensor([0], device=device), ember.ones(1, 3, dtype=ember.float64,
                                                                   device=device))
    with pytest.raises(RuntimeError, match="Expected dtype int64"):
        e.index_copy(0, ember.tensor([0], dtype=ember.int32, device=device),
                     ember.ones(1, 3, device=device))
    with pytest.raises(IndexError, match="out of bounds"):
        e.index_fill(0, ember.tensor([2], device=device), 1.0)


def test_take_put(device, oracle):
    e, t = pair((3, 4), "float32", device)
    ei, ti = ember.tensor([[0, -1], [11, 5]], device=device), torch.tensor([[0, -1], [11, 5]])
    oracle.assert_matches(ember.take(e, ei), torch.take(t, ti))
    oracle.assert_matches(e.t().take(ei), t.t().take(ti))                   # non-contiguous
    src, tsrc = pair((2, 2), "float32", device, seed=7)
    for acc in (False, True):
        oracle.assert_matches(e.clone().put_(ei, src, accumulate=acc),
                              t.clone().put_(ti, tsrc, accumulate=acc))
        c, tc = e.t(), t.t().clone()                                         # a strided self
        c = c.clone().t().t()
        oracle.assert_matches(c.put_(ei, src, accumulate=acc), tc.put_(ti, tsrc, accumulate=acc))
    dup = ember.tensor([1, 1, 1], device=device)
    oracle.assert_matches(ember.put(e, dup, ember.ones(3, device=device), accumulate=True),
                          torch.put(t, torch.tensor([1, 1, 1]), torch.ones(3), accumulate=True))
    with pytest.raises(IndexError, match="out of bounds"):
        e.take(ember.tensor([12], device=device))
    with pytest.raises(IndexError, match="out of bounds"):
        e.clone().put_(ember.tensor([-13], device=device), ember.ones(1, device=device))
    with pytest.raises(RuntimeError, match="same number of"):
        e.clone().put_(ember.tensor([0, 1], device=device), ember.ones(1, device=device))


def test_index_put(device, oracle):
    e, t = pair((4, 3), "float32", device)
    i = (ember.tensor([0, 2, 0], device=device), ember.tensor([1, 1, 1], device=device))
    ti = (torch.tensor([0, 2, 0]), torch.tensor([1, 1, 1]))
    v, tv = ember.tensor([1.0, 2.0, 3.0], device=device), torch.tensor([1.0, 2.0, 3.0])
    oracle.assert_matches(ember.index_put(e, i, v, accumulate=True),
                          torch.index_put(t, ti, tv, accumulate=True))
    c, tc = e.clone(), t.clone()
    assert c.index_put_(i[:1], ember.tensor(5.0, device=device)) is c
    oracle.assert_matches(c, tc.index_put_(ti[:1], torch.tensor(5.0)))
    with pytest.raises(RuntimeError, match="dtypes match"):
        e.index_put_(i, v.double())
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        e.index_put_((ember.tensor([4], device=device),), ember.tensor(1.0, device=device))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("dt", ["float32", "int64", "float16"])
def test_searchsorted_bucketize(right, dt, device, oracle):
    seq = torch.tensor([[1, 3, 3, 5, 7], [0, 2, 4, 4, 9]]).to(getattr(torch, dt))
    vals = torch.tensor([[3, 6, 0, 9], [4, 4, -1, 10]]).to(getattr(torch, dt))
    es, ev = ember.tensor(seq.float().numpy(), device=device).to(getattr(ember, dt)), \
        ember.tensor(vals.float().numpy(), device=device).to(getattr(ember, dt))
    oracle.assert_matches(ember.searchsorted(es, ev, right=right),
                          torch.searchsorted(seq, vals, right=right))
    oracle.assert_matches(ember.searchsorted(es[0], ev, out_int32=True, side="right" if right
                                             else "left"),
                          torch.searchsorted(seq[0], vals, out_int32=True, right=right))
    oracle.assert_matches(ember.bucketize(ev, es[1], right=right),
                          torch.bucketize(vals, seq[1], right=right))
    perm = torch.tensor([[4, 0, 3, 2, 1]] * 2)
    shuffled = torch.gather(seq, 1, torch.argsort(perm))
    oracle.assert_matches(ember.searchsorted(ember.gather(es, 1, ember.tensor(
        torch.argsort(perm).numpy(), device=device)), ev, sorter=ember.tensor(perm.numpy(),
                                                                               device=device)),
        torch.searchsorted(shuffled, vals, sorter=perm))
    oracle.assert_matches(ember.searchsorted(es[0], 4), torch.searchsorted(seq[0], 4))
    with pytest.raises(RuntimeError, match="opposites"):
        ember.searchsorted(es, ev, right=True, side="left")
    with pytest.raises(RuntimeError, match="first N-1 dimensions"):
        ember.searchsorted(es, ev[:1])


def test_multinomial(device):
    g = ember.Generator(device).manual_seed(0) if hasattr(ember.Generator(device), "manual_seed") \
        else None
    p = ember.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 0.0, 0.0, 2.0]], device=device)
    r = ember.multinomial(p, 4000, replacement=True, generator=g)
    assert r.shape == (2, 4000) and r.dtype == ember.int64
    counts = np.stack([np.bincount(row, minlength=4) for row in r.numpy(force=True)])
    assert counts[0, 0] == counts[0, 3] == counts[1, 1] == counts[1, 2] == 0
    assert abs(counts[0, 2] / 4000 - 0.75) < 0.05 and abs(counts[1, 0] / 4000 - 0.5) < 0.05
    w = ember.multinomial(p, 2)                          # without replacement: distinct
    assert sorted(w[0].tolist()) == [1, 2] and sorted(w[1].tolist()) == [0, 3]
    assert ember.multinomial(p[0], 1).shape == (1,)
    for bad in ([-1.0, 1.0], [float("nan"), 1.0], [float("inf"), 1.0]):
        with pytest.raises(RuntimeError, match="`inf`, `nan` or element < 0"):
            ember.multinomial(ember.tensor(bad, device=device), 1, True)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        ember.multinomial(ember.tensor([0.0, 0.0], device=device), 1)
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        ember.multinomial(p, 3)
    with pytest.raises(RuntimeError, match="without replacement"):
        ember.multinomial(p, 5)


def test_multinomial_reproducible(device):
    p = ember.tensor([0.2, 0.3, 0.5], device=device)
    ember.manual_seed(3)
    a = ember.multinomial(p, 50, True)
    ember.manual_seed(3)
    assert ember.multinomial(p, 50, True).tolist() == a.tolist()


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_tan(dt, device, oracle):
    e, t = pair((3, 4), dt, device)
    oracle.assert_matches(ember.tan(e), torch.tan(t))
    oracle.assert_matches(e.t().tan(), t.t().tan())
    if dt != "int64":
        c = e.clone()
        assert c.tan_() is c
        oracle.assert_matches(c, torch.tan(t))


def _values_and_grad(lib, fn):
    """(result, source's gradient) of fn(source) with a source that requires grad, or the
    exception's type name."""
    src = lib.tensor([1., 2., 3.], requires_grad=True)
    try:
        out = fn(lib, src)
        if out.requires_grad:
            out.sum().backward()
    except Exception as e:
        return type(e).__name__
    return out.tolist(), None if src.grad is None else src.grad.tolist()


_IDX = [0, 2, 1]


@pytest.mark.parametrize("fn", [
    # in-place index ops recorded by autograd: a source or self that requires grad
    lambda L, s: L.zeros(3).index_add_(0, L.tensor(_IDX), s * 2),
    lambda L, s: L.zeros(3).index_copy_(0, L.tensor(_IDX), s * 2),
    lambda L, s: L.zeros(3).scatter_(0, L.tensor(_IDX), s * 2),
    lambda L, s: L.zeros(3).scatter_add_(0, L.tensor(_IDX), s * 2),
    lambda L, s: L.zeros(3).scatter_reduce_(0, L.tensor(_IDX), s * 2, "sum"),
    lambda L, s: L.zeros(3).put_(L.tensor(_IDX), s * 2),
    lambda L, s: (s * 2).index_fill_(0, L.tensor([0]), 0.),
    lambda L, s: (s * 1).index_add_(0, L.tensor(_IDX), L.ones(3)),
    # a value's leading size-1 dims are dropped before it is written
    lambda L, s: (lambda z: (z.__setitem__(0, L.ones(1, 1, 3) * s), z)[1])(L.zeros(2, 3)),
    lambda L, s: (lambda z: (z.__setitem__(L.tensor([0]), L.ones(1, 1, 3) * s), z)[1])(
        L.zeros(2, 3)),
    lambda L, s: (lambda z: (z.__setitem__((slice(None), 1), s.reshape(1, 3)), z)[1])(
        L.zeros(3, 2)),
])
def test_inplace_index_ops_and_setitem_record_as_torch(fn):
    assert _values_and_grad(ember, fn) == _values_and_grad(torch, fn)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("transposed", [False, True])
def test_row_index_ops_match_torch(dtype, dim, transposed):
    # index_select / index_copy / index_add along a dim whose other dims are rows (the
    # kernel reads one index per row and moves or adds the row as a block)
    import torch
    rng = np.random.default_rng(5)
    base = (rng.standard_normal((40, 33)) * 10).astype(dtype)
    idx = np.array([3, 0, 3, 39 if dim == 0 else 32, 7, 3])
    src_shape = (len(idx), 33) if dim == 0 else (40, len(idx))
    src = (rng.standard_normal(src_shape) * 10).astype(dtype)
    out = []
    for lib in (ember, torch):
        a = lib.tensor(np.ascontiguousarray(base.T)).t() if transposed else lib.tensor(base)
        i, s = lib.tensor(idx), lib.tensor(src)
        out.append([a.index_select(dim, i), a.clone().index_add_(dim, i, s),
                    a.clone().index_copy_(dim, lib.tensor([5, 1, 2]),
                                          s.narrow(dim, 0, 3))])
    tol = 1e-2 if dtype == "float16" else 1e-6     # half: duplicates rounded in turn
    for e, t in zip(*out):
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=tol, atol=tol)
    with pytest.raises(IndexError, match="out of"):
        ember.tensor(base).index_select(dim, ember.tensor([0, 99]))


def _outcome(m, fn):
    try:
        r = fn(m)
        return r.tolist(), str(r.dtype).split(".")[-1]
    except RuntimeError as e:
        return "RuntimeError", str(e).split(",")[0]


@pytest.mark.parametrize("case", [
    lambda m: _put(m.zeros(3), "mask", m.tensor(1)),
    lambda m: _put(m.zeros(3), "mask", m.tensor(1.0, dtype=m.float64)),
    lambda m: _put(m.zeros(3, dtype=m.int64), "mask", m.tensor(1.5)),
    lambda m: _put(m.zeros(3), "mask", m.tensor([1.0], dtype=m.float64)),
    lambda m: _put(m.zeros(3), "mask", m.tensor([1, 2])),
    lambda m: _put(m.zeros(3), "index", m.tensor([1, 2])),
    lambda m: _put(m.zeros(3), "index", m.tensor(True)),
])
def test_setitem_value_dtypes_as_pytorch(case):
    """x[mask] = a one-element tensor of another dtype is PyTorch's masked_fill (cast);
    any other advanced assignment needs the dtypes to match."""
    assert _outcome(ember, case) == _outcome(torch, case)


def _put(x, kind, value):
    m = ember if isinstance(x, ember.Tensor) else torch
    idx = (x == 0) if kind == "mask" else m.tensor([0, 2])
    if kind == "mask" and value.dim() == 1 and value.numel() == 2:
        idx = m.tensor([True, False, True])
    x[idx] = value
    return x


def test_writes_through_none_indexing():
    for m in (ember, torch):
        x = m.zeros(2)
        x[None] += 1
        x[None, 0] += 1
        x[None] = x[None]
        assert x.tolist() == [2.0, 1.0]


@pytest.mark.parametrize("pattern", ["mask", "index +=", "index_select", "read then write"])
def test_an_index_read_does_not_pin_its_source(pattern):
    """y[m] = y[m] * 2 and friends: an index op's backward needs its source's shape, not
    its values, so writing the source afterwards is no error (it raised)."""
    grads = []
    for m in (ember, torch):
        a = m.tensor([-1.0, 2.0, -3.0], dtype=m.float64, requires_grad=True)
        y = a * 1
        if pattern == "mask":
            mask = y < 0
            y[mask] = y[mask] * 2
            loss = y.sum()
        elif pattern == "index +=":
            y[m.tensor([0, 1])] += 1
            loss = (y * y).sum()
        elif pattern == "index_select":
            z = m.index_select(y, 0, m.tensor([0, 2]))
            y.add_(1)
            loss = (z * z).sum() + y.sum()
        else:
            z = y[m.tensor([0, 2])]
            y.mul_(3)
            loss = (z * z).sum() + y.sum()
        loss.backward()
        grads.append(a.grad.tolist())
    assert grads[0] == grads[1]


def test_take_along_dim_wraps_indices_along_a_dim():
    x = np.arange(12.0).reshape(3, 4)
    for idx in ([[-1], [0], [-4]], [[5], [-9], [4]], [[0, 3], [1, 2], [2, 1]]):
        e = ember.take_along_dim(ember.tensor(x), ember.tensor(idx), 1)
        t = torch.take_along_dim(torch.tensor(x), torch.tensor(idx), 1)
        assert e.tolist() == t.tolist()
    with pytest.raises((IndexError, RuntimeError)):
        ember.take_along_dim(ember.tensor(x), ember.tensor([-1]))   # flattened: no wrap


def test_a_tensor_fill_value_gets_its_gradient():
    """index_fill/index_fill_/fill_ with a 0-d value requiring grad: the sum of the
    gradient over the filled positions (each index once), as PyTorch's."""
    out = []
    for m in (ember, torch):
        x = m.zeros(3, requires_grad=True)
        v = m.tensor(2.0, requires_grad=True)
        x.index_fill(0, m.tensor([0, 2, 2]), v).sum().backward()
        got = [v.grad.item()]
        v.grad = None
        y = x.clone()
        y.index_fill_(0, m.tensor([1]), v)
        (y * 3).sum().backward()
        got.append(v.grad.item())
        v.grad = None
        x.clone().fill_(v).sum().backward()
        got += [v.grad.item(), m.zeros(3).fill_(v).requires_grad, x.grad.tolist()]
        out.append(got)
    assert out[0] == out[1]
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        ember.zeros(3).fill_(ember.ones(2, requires_grad=True))
