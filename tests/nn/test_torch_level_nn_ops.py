"""The torch.* forms of nn ops (torch.conv-style ATen entry points, functional RNN steps,
the SyncBatchNorm statistics pieces) and the smaller torch.* functions (gradient,
segment_reduce, unravel_index, low-rank SVD/PCA, poisson/binomial), against torch."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(11)


def _close(e, t, atol=1e-5):
    np.testing.assert_allclose(np.asarray(e.detach().numpy(), dtype=np.float64),
                               t.detach().numpy().astype(np.float64), atol=atol, rtol=1e-4)


def _both(x, grad=True):
    return ember.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def _backward_match(e, t, pairs, atol=1e-5):
    w = RNG.standard_normal(tuple(t.shape)).astype(np.float32)
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    for ex, tx in pairs:
        _close(ex.grad, tx.grad, atol)


def test_constant_pad_and_convolution():
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    ex, tx = _both(x)
    ew, tw = _both(w)
    e = ember.convolution(ex, ew, ember.tensor(b), [1, 2], [1, 0], [1, 1], False, [0, 0], 1)
    t = torch.convolution(tx, tw, torch.tensor(b), [1, 2], [1, 0], [1, 1], False, [0, 0], 1)
    _close(e, t, 1e-4)
    _backward_match(e, t, [(ex, tx), (ew, tw)], 1e-4)
    e = ember.constant_pad_nd(ember.tensor(x), [1, 2, 0, 1], 3.0)
    t = torch.constant_pad_nd(torch.tensor(x), [1, 2, 0, 1], 3.0)
    _close(e, t)


def test_norm_forms():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    e, t = ember.tensor(x), torch.tensor(x)
    _close(ember.frobenius_norm(e, [0, 1]), torch.frobenius_norm(t, [0, 1]))
    _close(ember.nuclear_norm(e), torch.nuclear_norm(t))
    _close(ember.native_norm(e), torch.linalg.vector_norm(t))     # torch: sparse inputs only
    _close(ember.norm_except_dim(e, 2, 0), torch.norm_except_dim(t, 2, 0))


def test_group_norm_and_dropout_forms():
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    w, b = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    eo = ember.native_group_norm(ember.tensor(x), ember.tensor(w), ember.tensor(b), 2, 4, 5,
                                 2, 1e-5)
    to = torch.native_group_norm(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 4, 5,
                                 2, 1e-5)
    for e, t in zip(eo, to):
        _close(e, t, 1e-4)
    out, mask = ember.native_dropout(ember.ones(1000), 0.3, True)
    assert mask.dtype == ember.bool and abs(mask.float().mean().item() - 0.7) < 0.07
    kept = out.numpy()[mask.numpy()]
    assert np.allclose(kept, 1 / 0.7) and np.all(out.numpy()[~mask.numpy()] == 0)
    out, mask = ember.native_dropout(ember.ones(5), 0.3, False)
    assert out.tolist() == [1.0] * 5 and mask.all()
    assert ember.dropout(ember.ones(4), 0.5, False).tolist() == [1.0] * 4


def test_max_pool1d_with_indices_and_embedding_renorm():
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    e = ember.max_pool1d_with_indices(ember.tensor(x), 3, 2)
    t = torch.max_pool1d_with_indices(torch.tensor(x), 3, 2)
    _close(e[0], t[0])
    assert e[1].tolist() == t[1].tolist()
    w = RNG.standard_normal((5, 3)).astype(np.float32) * 3
    ew, tw = ember.tensor(w), torch.tensor(w)
    ember.embedding_renorm_(ew, ember.tensor([0, 2, 2]), 1.0, 2.0)
    torch.embedding_renorm_(tw, torch.tensor([0, 2, 2]), 1.0, 2.0)
    _close(ew, tw)


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
def test_rnn_cells(name):
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(name, 1)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    h = RNG.standard_normal((2, 4)).astype(np.float32)
    wih = RNG.standard_normal((gates * 4, 3)).astype(np.float32)
    whh = RNG.standard_normal((gates * 4, 4)).astype(np.float32)
    bih = RNG.standard_normal(gates * 4).astype(np.float32)
    bhh = RNG.standard_normal(gates * 4).astype(np.float32)
    pe = [ember.tensor(a, requires_grad=True) for a in (x, wih, whh, bih, bhh)]
    pt = [torch.tensor(a, requires_grad=True) for a in (x, wih, whh, bih, bhh)]
    if name == "lstm_cell":
        he, ht = (ember.tensor(h), ember.tensor(h)), (torch.tensor(h), torch.tensor(h))
    else:
        he, ht = ember.tensor(h), torch.tensor(h)
    e = getattr(ember, name)(pe[0], he, *pe[1:])
    t = getattr(torch, name)(pt[0], ht, *pt[1:])
    e, t = (e[0], t[0]) if name == "lstm_cell" else (e, t)
    _close(e, t, 1e-4)
    _backward_match(e, t, zip(pe, pt), 1e-4)


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_functional_rnns(name, bidirectional):
    layer = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn_tanh": torch.nn.RNN}[name](
        3, 4, num_layers=2, bidirectional=bidirectional, batch_first=True)
    params = [p.detach() for p in layer._flat_weights]
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    dirs = 2 if bidirectional else 1
    h = np.zeros((2 * dirs, 2, 4), np.float32)
    th = (torch.tensor(h), torch.tensor(h)) if name == "lstm" else torch.tensor(h)
    eh = (ember.tensor(h), ember.tensor(h)) if name == "lstm" else ember.tensor(h)
    t = getattr(torch, name)(torch.tensor(x), th, params, True, 2, 0.0, False, bidirectional,
                             True)
    e = getattr(ember, name)(ember.tensor(x), eh, [ember.tensor(p.numpy()) for p in params],
                             True, 2, 0.0, False, bidirectional, True)
    for a, b in zip(e, t):
        _close(a, b, 1e-4)


def test_batch_norm_stat_pieces():
    # torch runs these (SyncBatchNorm's pieces) on CUDA only: the references are NumPy's
    x = RNG.standard_normal((4, 3, 5)).astype(np.float64)
    g = RNG.standard_normal((4, 3, 5)).astype(np.float64)
    w = RNG.standard_normal(3)
    b = RNG.standard_normal(3)
    mean, var = x.mean((0, 2)), x.var((0, 2))
    invstd = 1 / np.sqrt(var + 1e-5)
    em, ei = ember.batch_norm_stats(ember.tensor(x), 1e-5)
    np.testing.assert_allclose(em.numpy(), mean)
    np.testing.assert_allclose(ei.numpy(), invstd)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    gm, gi = ember.batch_norm_gather_stats_with_counts(
        ember.tensor(x), em[None].repeat(2, 1), ei[None].repeat(2, 1), rm, rv, 0.1, 1e-5,
        ember.tensor([20.0, 20.0], dtype=ember.float64))
    np.testing.assert_allclose(gm.numpy(), mean)
    np.testing.assert_allclose(gi.numpy(), invstd, rtol=1e-6)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mean)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * var * 40 / 39, rtol=1e-6)
    out = ember.batch_norm_elemt(ember.tensor(x), ember.tensor(w), ember.tensor(b), em, ei,
                                 1e-5)
    xhat = (x - mean[None, :, None]) * invstd[None, :, None]
    np.testing.assert_allclose(out.numpy(), xhat * w[None, :, None] + b[None, :, None])
    sum_dy, sum_dy_xmu, gw, gb = ember.batch_norm_backward_reduce(
        ember.tensor(g), ember.tensor(x), em, ei, ember.tensor(w), True, True, True)
    np.testing.assert_allclose(sum_dy.numpy(), g.sum((0, 2)))
    np.testing.assert_allclose(sum_dy_xmu.numpy(), (g * (x - mean[None, :, None])).sum((0, 2)))
    np.testing.assert_allclose(gw.numpy(), (g * xhat).sum((0, 2)))
    np.testing.assert_allclose(gb.numpy(), g.sum((0, 2)))
    gin = ember.batch_norm_backward_elemt(ember.tensor(g), ember.tensor(x), em, ei,
                                          ember.tensor(w), sum_dy, sum_dy_xmu,
                                          ember.tensor([20], dtype=ember.int32))
    # one replica's share: the autograd gradient of batch_norm over the same batch
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.batch_norm(xt, None, None, torch.tensor(w), torch.tensor(b),
                                   training=True, eps=1e-5).backward(torch.tensor(g))
    np.testing.assert_allclose(gin.numpy(), xt.grad.numpy(), atol=1e-10)
    e = ember.batch_norm_update_stats(ember.tensor(x), ember.zeros(3, dtype=ember.float64),
                                      ember.ones(3, dtype=ember.float64), 0.1)
    t = torch.batch_norm_update_stats(torch.tensor(x), torch.zeros(3, dtype=torch.float64),
                                      torch.ones(3, dtype=torch.float64), 0.1)
    for a, c in zip(e, t):
        _close(a, c, 1e-8)


def test_gradient():
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    for kw in [{}, {"spacing": 2.0}, {"dim": 1}, {"edge_order": 2},
               {"spacing": [ember.tensor([0.0, 1.0, 3.0, 4.0])], "dim": 0}]:
        tkw = {k: ([torch.tensor(s.numpy()) for s in v] if k == "spacing" and isinstance(v, list)
                   else v) for k, v in kw.items()}
        e = ember.gradient(ember.tensor(x), **kw)
        t = torch.gradient(torch.tensor(x), **tkw)
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce(reduce):
    data = RNG.standard_normal((6, 2)).astype(np.float32)
    lengths = [2, 0, 3, 1]
    e = ember.segment_reduce(ember.tensor(data), reduce, lengths=ember.tensor(lengths),
                             initial=0.0 if reduce in ("max", "min") else None)
    t = torch.segment_reduce(torch.tensor(data), reduce, lengths=torch.tensor(lengths),
                             initial=0.0 if reduce in ("max", "min") else None)
    _close(e, t)


def test_unravel_index_and_lowrank():
    e = ember.unravel_index(ember.tensor([0, 5, 11]), (3, 4))
    t = torch.unravel_index(torch.tensor([0, 5, 11]), (3, 4))
    assert [a.tolist() for a in e] == [a.tolist() for a in t]
    e = ember.unravel_index(ember.tensor([12, 13, -13, 25]), (3, 4))
    t = torch.unravel_index(torch.tensor([12, 13, -13, 25]), (3, 4))
    assert [a.tolist() for a in e] == [a.tolist() for a in t]
    with pytest.raises(TypeError):
        ember.unravel_index(ember.tensor([1.5]), (3, 4))
    a = RNG.standard_normal((20, 4)) @ RNG.standard_normal((4, 10))
    u, s, v = ember.svd_lowrank(ember.tensor(a), q=4, niter=4)
    np.testing.assert_allclose((u * s[None]) @ v.T, a, atol=1e-6)
    _close(s, torch.linalg.svdvals(torch.tensor(a))[:4], 1e-6)
    u, s, v = ember.pca_lowrank(ember.tensor(a), q=4)
    centered = a - a.mean(0)
    _close(s, torch.linalg.svdvals(torch.tensor(centered))[:4], 1e-6)


def test_poisson_binomial_and_empty_permuted():
    ember.manual_seed(0)
    rates = ember.full((20000,), 3.0)
    p = ember.poisson(rates)
    assert p.dtype == ember.float32 and abs(p.mean().item() - 3.0) < 0.1
    b = ember.binomial(ember.full((20000,), 10.0), ember.full((20000,), 0.3))
    assert abs(b.mean().item() - 3.0) < 0.1 and b.max().item() <= 10
    e = ember.empty_permuted((2, 3, 4), (0, 2, 1))
    t = torch.empty_permuted((2, 3, 4), (0, 2, 1))
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()


@pytest.mark.parametrize("x_dtype,c_dtype,edge_order", [
    (x, c, 2) for x in ("float32", "float64", "int64") for c in ("float32", "float64", "int64")
] + [("float32", "float64", 1), ("int64", "float64", 1)])
def test_gradient_with_coordinates(x_dtype, c_dtype, edge_order):
    # second-order edges through the three end samples at uneven spacing; the result
    # dtype promotes the input's with the coordinates' (integers count as the default)
    x = (RNG.standard_normal((6, 5)) * 10).astype(x_dtype)
    coords = ([0, 1, 3, 4, 5, 7], [0, 2, 3, 7, 8])
    results = []
    for lib in (ember, torch):
        spacing = [lib.tensor(c, dtype=getattr(lib, c_dtype)) for c in coords]
        both = lib.gradient(lib.tensor(x), spacing=spacing, edge_order=edge_order)
        one = lib.gradient(lib.tensor(x), spacing=spacing[1:], dim=-1, edge_order=edge_order)
        results.append(both + one)
    for e, t in zip(*results, strict=True):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        _close(e, t)
