"""embedding_bag/EmbeddingBag and the max_norm renormalisation of embedding/Embedding
against PyTorch: every mode with offsets, 2-D input, include_last_offset, empty bags,
padding_idx and per_sample_weights; forward and gradients (weight and per-sample weights),
float32/float64, int32/int64 indices, from_pretrained and the error cases."""
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import nn

DTYPES = [ember.float32, ember.float64]
IDX = [0, 1, 2, 3, 1, 5, 4, 4]
CASES = [                                        # (input, offsets, extra keywords)
    (IDX, [0, 2, 2, 5], {}),                     # an empty bag in the middle
    (IDX, [0, 3, 8], {}),                        # an empty bag at the end
    (IDX, [0, 2, 5, 8], {"include_last_offset": True}),
    (IDX, [0, 4], {"padding_idx": 1}),
    (IDX, [0, 1, 6], {"padding_idx": -2}),       # index 4: a bag of padding only
    ([[0, 2, 1], [3, 3, 5]], None, {}),           # 2-D: fixed-length bags
    ([[0, 2, 1], [3, 3, 5]], None, {"padding_idx": 3}),
    ([5], [0], {}),
]


def tol(dtype):
    return 2e-6 if dtype == ember.float32 else 1e-12


def run_both(inp, offsets, dtype, idx_dtype=np.int64, psw=None, **kw):
    """F.embedding_bag in ember and torch on the same weight; backward of a random
    cotangent; returns ((out, weight, psw) ember, (...) torch)."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=(6, 3))
    ew = ember.tensor(w).to(dtype).requires_grad_(True)
    tw = torch.tensor(w).to(getattr(torch, dtype.name)).requires_grad_(True)
    ei, ti = ember.tensor(np.array(inp, dtype=idx_dtype)), torch.tensor(np.array(inp,
                                                                               dtype=idx_dtype))
    eo = to = None
    if offsets is not None:
        eo = ember.tensor(np.array(offsets, dtype=idx_dtype))
        to = torch.tensor(np.array(offsets, dtype=idx_dtype))
    ep = tp = None
    if psw is not None:
        ep = ember.tensor(np.array(psw)).to(dtype).requires_grad_(True)
        tp = torch.tensor(np.array(psw)).to(tw.dtype).requires_grad_(True)
    e = F.embedding_bag(ei, ew, eo, per_sample_weights=ep, **kw)
    t = TF.embedding_bag(ti, tw, to, per_sample_weights=tp, **kw)
    g = rng.normal(size=tuple(t.shape))
    e.backward(ember.tensor(g, device=e.device).to(dtype))
    t.backward(torch.tensor(g).to(tw.dtype))
    return (e, ew, ep), (t, tw, tp)


def match(e, t, dtype):
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol(dtype),
                               atol=tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_embedding_bag_matches_torch(dtype, mode, case):
    inp, offsets, kw = CASES[case]
    (e, ew, _), (t, tw, _) = run_both(inp, offsets, dtype, mode=mode, **kw)
    assert e.dtype == dtype
    match(e, t, dtype)
    match(ew.grad, tw.grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_per_sample_weights(dtype, case):
    inp, offsets, kw = CASES[case]
    psw = np.random.default_rng(1).normal(size=np.array(inp).shape)
    (e, ew, ep), (t, tw, tp) = run_both(inp, offsets, dtype, psw=psw, mode="sum", **kw)
    match(e, t, dtype)
    match(ew.grad, tw.grad, dtype)
    match(ep.grad, tp.grad, dtype)


def test_int32_indices_and_offsets():
    (e, ew, _), (t, tw, _) = run_both(IDX, [0, 3, 5], ember.float32, np.int32, mode="mean")
    match(e, t, ember.float32)
    match(ew.grad, tw.grad, ember.float32)


def test_scale_grad_by_freq():
    # bags [3], [1, 1], [3]: each index's gradient divided by its count in the batch
    for mode in ("sum", "mean"):
        (e, ew, _), (t, tw, _) = run_both([3, 1, 1, 3], [0, 1, 3], ember.float64, mode=mode,
                                          scale_grad_by_freq=True)
        match(e, t, ember.float64)
        match(ew.grad, tw.grad, ember.float64)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_renormalises_used_rows_in_place(mode, norm_type):
    w = np.random.default_rng(2).normal(size=(6, 3)) * 3
    ew, tw = ember.tensor(w), torch.tensor(w)
    inp = [0, 2, 2, 5]
    e = F.embedding_bag(ember.tensor(inp), ew, ember.tensor([0, 2]), max_norm=1.5,
                        norm_type=norm_type, mode=mode)
    t = TF.embedding_bag(torch.tensor(inp), tw, torch.tensor([0, 2]), max_norm=1.5,
                         norm_type=norm_type, mode=mode)
    match(e, t, ember.float64)
    match(ew, tw, ember.float64)                 # rows 0, 2, 5 rescaled, the others not
    np.testing.assert_array_equal(ew.numpy()[[1, 3, 4]], w[[1, 3, 4]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_embedding_max_norm_functional_and_module(dtype):
    w = np.random.default_rng(3).normal(size=(5, 4)) * 2
    ew = ember.tensor(w).to(dtype)
    tw = torch.tensor(w).to(getattr(torch, dtype.name))
    idx = [[0, 3], [3, 4]]
    match(F.embedding(ember.tensor(idx), ew, max_norm=1.0),
          TF.embedding(torch.tensor(idx), tw, max_norm=1.0), dtype)
    match(ew, tw, dtype)
    em = nn.Embedding(5, 4, max_norm=0.5, norm_type=1.0)
    tm = torch.nn.Embedding(5, 4, max_norm=0.5, norm_type=1.0)
    em.to(dtype)
    tm.to(getattr(torch, dtype.name))
    em.load_state_dict({"weight": ember.tensor(tm.weight.detach().numpy())})
    y, ty = em(ember.tensor(idx)), tm(torch.tensor(idx))
    match(y, ty, dtype)
    match(em.weight, tm.weight, dtype)
    y.sum().backward()
    ty.sum().backward()
    match(em.weight.grad, tm.weight.grad, dtype)


def test_embedding_bag_errors():
    w = ember.randn(5, 2)
    i = ember.tensor([0, 1, 2, 3])
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(i, w)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(i, w, ember.tensor([[0]]))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(i.reshape(2, 2), w, ember.tensor([0]))
    with pytest.raises(ValueError, match="input has to be 1D or 2D"):
        F.embedding_bag(i.reshape(1, 2, 2), w)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(i, w, ember.tensor([0]), mode="min")
    with pytest.raises(ValueError, match="max mode does not support scaling"):
        F.embedding_bag(i, w, ember.tensor([0]), mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        F.embedding_bag(i, ember.randn(5), ember.tensor([0]))
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        F.embedding_bag(i, w, ember.tensor([0]), per_sample_weights=ember.ones(3), mode="sum")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(i, w, ember.tensor([0]), per_sample_weights=ember.ones(4))
    with pytest.raises(RuntimeError, match="same type as tensor for argument #1 "
                                           "'per_sample_weights'"):
        F.embedding_bag(i, w, ember.tensor([0]), per_sample_weights=ember.ones(4).double(),
                        mode="sum")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(i, w, ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="can not be greater than input's length"):
        F.embedding_bag(i, w, ember.tensor([0, 9]))
    with pytest.raises(RuntimeError, match="non-decreasing"):
        F.embedding_bag(i, w, ember.tensor([0, 3, 2]))
    with pytest.raises(RuntimeError, match="index out of range"):
        F.embedding_bag(ember.tensor([0, 7]), w, ember.tensor([0]))
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of"):
        F.embedding_bag(i, w, ember.tensor([0]), padding_idx=7)
    with pytest.raises(RuntimeError, match="scalar types: Long, Int"):
        F.embedding_bag(i.float(), w, ember.tensor([0]))
    with pytest.raises(RuntimeError, match="scalar types: Long, Int"):
        F.embedding_bag(i, w, ember.tensor([0.0]))
    with pytest.warns(UserWarning, match="Argument order"):     # the old (weight, input) order
        out = F.embedding_bag(w, i, ember.tensor([0]))
    assert tuple(out.shape) == (1, 2)


# --- the module ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"mode": "sum", "padding_idx": 2}, {"mode": "max"},
                                {"include_last_offset": True, "mode": "sum"}])
def test_embedding_bag_module(dtype, kw):
    em, tm = nn.EmbeddingBag(6, 3, **kw), torch.nn.EmbeddingBag(6, 3, **kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["weight"]
    if "padding_idx" in kw:                      # the padding row starts at zero
        np.testing.assert_array_equal(em.weight.detach().numpy()[2], 0)
    tm.to(getattr(torch, dtype.name))
    em.to(dtype)
    em.load_state_dict({"weight": ember.tensor(tm.weight.detach().numpy())})
    offsets = [0, 2, 2, 8] if kw.get("include_last_offset") else [0, 2, 2, 5]
    y = em(ember.tensor(IDX), ember.tensor(offsets))
    ty = tm(torch.tensor(IDX), torch.tensor(offsets))
    match(y, ty, dtype)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    match(em.weight.grad, tm.weight.grad, dtype)
    y2 = em(ember.tensor([[1, 2], [4, 0]]))
    match(y2, tm(torch.tensor([[1, 2], [4, 0]])), dtype)


def test_embedding_bag_module_per_sample_weights_and_init():
    em = nn.EmbeddingBag(100, 8, mode="sum", max_norm=2.0, norm_type=3.0,
                         scale_grad_by_freq=True)
    tm = torch.nn.EmbeddingBag(100, 8, mode="sum", max_norm=2.0, norm_type=3.0,
                               scale_grad_by_freq=True)
    assert repr(em) == repr(tm)
    w = em.weight.detach().numpy()
    assert abs(w.mean()) < 0.1 and abs(w.std() - 1) < 0.1       # N(0, 1)
    y = em(ember.tensor([1, 2, 3]), ember.tensor([0, 1]), ember.tensor([1.0, 2.0, 0.5]))
    assert tuple(y.shape) == (2, 8)


def test_embedding_bag_from_pretrained():
    w = ember.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    bag = nn.EmbeddingBag.from_pretrained(w)
    assert not bag.weight.requires_grad and bag.mode == "mean"
    tb = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w.numpy()))
    match(bag(ember.tensor([[1, 0]])), tb(torch.tensor([[1, 0]])), ember.float32)
    assert nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="max").weight.requires_grad
    with pytest.raises(AssertionError, match="expected to be 2-dimensional"):
        nn.EmbeddingBag.from_pretrained(ember.ones(3))
    e = nn.Embedding.from_pretrained(w, padding_idx=1)
    assert not e.weight.requires_grad and e.padding_idx == 1


def test_embedding_bag_module_errors():
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(4, 2, padding_idx=4)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(4, 2, padding_idx=-5)
    assert nn.EmbeddingBag(4, 2, padding_idx=-1).padding_idx == 3
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        nn.EmbeddingBag(4, 2, _weight=ember.ones(2, 4))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)
