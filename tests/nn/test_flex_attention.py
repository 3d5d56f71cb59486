"""ember.nn.attention.flex_attention against PyTorch 2.13's (run eagerly on the CPU): block
masks (every layout tensor, to_dense, sparsity, repr/str, slicing) for causal, sliding-window,
prefix-LM and document masks, lengths that are not multiples of BLOCK_SIZE and B/H None;
flex_attention's outputs and logsumexp with score_mods (ALiBi, relative and learned biases),
GQA, fully masked rows.  PyTorch refuses flex_attention's backward on the CPU, so gradients
(query, key, value and a bias the score_mod captures) are checked against the same attention
written densely in PyTorch, whose forward is first checked against PyTorch's flex_attention."""
import math
import warnings

import ember.nn.attention.flex_attention as efa
import numpy as np
import pytest
import torch
import torch.nn.attention.flex_attention as tfa

import ember

RNG = np.random.default_rng(0)
TOL = {np.float32: 2e-5, np.float64: 1e-10}
LAYOUT = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
          "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
          "dq_write_order", "dq_write_order_full"]


@pytest.fixture(autouse=True)
def _quiet_torch(monkeypatch):
    # PyTorch's eager flex_attention otherwise wraps the same dense math in a torch.compile
    # with the eager backend (seconds per new mod); the debug switch calls it directly.
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def arrays(*shapes, dtype=np.float32):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def et(a, device="cpu", grad=False):
    return ember.tensor(a, device=device, requires_grad=grad)


def tt(a, grad=False):
    return torch.tensor(a, requires_grad=grad)


def close(e, t, tol, what=""):
    assert tuple(e.shape) == tuple(t.shape), (what, e.shape, t.shape)
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol, err_msg=what)


def same_block_masks(e, t):
    """Every layout tensor equal (values, shape, int32), and the same lengths, block size,
    dense grid, sparsity, repr and picture."""
    for name in LAYOUT:
        ev, tv = getattr(e, name), getattr(t, name)
        assert (ev is None) == (tv is None), name
        if tv is not None:
            assert ev.dtype == ember.int32 and tv.dtype == torch.int32, name
            assert tuple(ev.shape) == tuple(tv.shape), name
            assert ev.cpu().tolist() == tv.tolist(), name
    assert e.shape == t.shape and tuple(e.seq_lengths) == tuple(t.seq_lengths)
    assert tuple(e.BLOCK_SIZE) == tuple(t.BLOCK_SIZE)
    assert e.to_dense().cpu().tolist() == t.to_dense().tolist()
    assert e.sparsity() == pytest.approx(t.sparsity())
    assert repr(e).replace("ember.Size", "torch.Size") == repr(t)
    assert str(e) == str(t)


# -- mask_mods / score_mods, written once for both libraries (ops and indexing only) --------

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window(width):
    def window(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx) < width
    return window


def prefix(length):
    def prefix_mask(b, h, q_idx, kv_idx):
        return kv_idx < length
    return prefix_mask


def documents(doc_ids):
    """Attend within the same document; ``doc_ids`` is [B, L] (captured)."""
    def document_mask(b, h, q_idx, kv_idx):
        return (doc_ids[b, q_idx] == doc_ids[b, kv_idx]) & (q_idx >= kv_idx)
    return document_mask


def alibi(slopes):
    def alibi_mod(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)
    return alibi_mod


def relative(table, max_len):
    """A learned bias per relative position (``table`` is [2 * max_len - 1])."""
    def relative_mod(score, b, h, q_idx, kv_idx):
        return score + table[q_idx - kv_idx + max_len - 1]
    return relative_mod


def head_bias(bias):
    def head_bias_mod(score, b, h, q_idx, kv_idx):
        return score + bias[h]
    return head_bias_mod


def both_masks(mask_mod_of, *args, B, H, Q, KV, block=128, **kwargs):
    """create_block_mask in both libraries; ``mask_mod_of(lib, converted args)`` builds the
    mask_mod (captured arrays become each library's tensors)."""
    t = tfa.create_block_mask(mask_mod_of(torch, *[tt(a) for a in args]), B, H, Q, KV,
                              device="cpu", BLOCK_SIZE=block, **kwargs)
    e = efa.create_block_mask(mask_mod_of(ember, *[et(a) for a in args]), B, H, Q, KV,
                              device="cpu", BLOCK_SIZE=block, **kwargs)
    return e, t


def fa(lib):
    return tfa if lib is torch else efa


MASKS = {
    "causal": lambda lib: causal,
    "sliding_window": lambda lib: fa(lib).and_masks(causal, sliding_window(37)),
    "prefix_lm": lambda lib: fa(lib).or_masks(causal, prefix(50)),
    "head_dependent": lambda lib: lambda b, h, q, kv: (q - kv).abs() <= 20 * (h + 1) + 7 * b,
}


# -- BlockMask -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(MASKS))
@pytest.mark.parametrize("B,H,Q,KV,block", [
    (None, None, 256, 256, 128),      # multiples of the block
    (2, 3, 300, 200, 64),             # neither length a multiple
    (1, 2, 130, 257, (32, 16)),       # rectangular tiles
])
def test_create_block_mask_matches_torch(name, B, H, Q, KV, block):
    e, t = both_masks(MASKS[name], B=B, H=H, Q=Q, KV=KV, block=block)
    same_block_masks(e, t)


def test_block_mask_options_match_torch():
    mod = MASKS["head_dependent"]
    same_block_masks(*both_masks(mod, B=2, H=2, Q=200, KV=150, block=32,
                                 separate_full_blocks=False))
    for order in (False, True):
        same_block_masks(*both_masks(mod, B=2, H=2, Q=200, KV=150, block=32,
                                     compute_dq_write_order=True, dq_kv_order=order))


def test_document_mask_with_captured_ids():
    doc = np.array([[0] * 40 + [1] * 70 + [2] * 50, [0] * 100 + [1] * 60])
    e, t = both_masks(lambda lib, d: documents(d), doc, B=2, H=None, Q=160, KV=160, block=32)
    same_block_masks(e, t)


def test_create_mask_matches_torch():
    doc = np.array([[0, 0, 1, 1, 1, 2], [0, 1, 1, 1, 2, 2]])
    for lib_mod in (lambda lib: causal, lambda lib: documents(lib.tensor(doc))):
        t = tfa.create_mask(lib_mod(torch), 2, 3, 6, 6, "cpu")
        e = efa.create_mask(lib_mod(ember), 2, 3, 6, 6, "cpu")
        assert e.dtype == ember.bool and e.tolist() == t.tolist()

    def minus_inf(lib):
        return lambda s, b, h, q, kv: lib.where(q >= kv + 2, s, float("-inf"))
    t = tfa.create_mask(minus_inf(torch), None, None, 5, 7, "cpu")
    assert efa.create_mask(minus_inf(ember), None, None, 5, 7, "cpu").tolist() == t.tolist()


def test_block_mask_methods_match_torch():
    e, t = both_masks(MASKS["sliding_window"], B=2, H=3, Q=1000, KV=900, block=16)
    assert e.shape == t.shape == (2, 3, 1000, 900) and e.numel() == t.numel()
    for kwargs in ({}, {"grid_size": 7, "limit": 2}, {"grid_size": (5, 40), "limit": 9}):
        assert e.to_string(**kwargs) == t.to_string(**kwargs)
    small_e, small_t = both_masks(MASKS["prefix_lm"], B=None, H=None, Q=96, KV=64, block=16)
    assert small_e.to_string(grid_size=-1) == small_t.to_string(grid_size=-1)
    et_, tt_ = e.as_tuple(), t.as_tuple()
    assert len(et_) == len(tt_) and et_[:2] == tt_[:2] and et_[-3:-1] == tt_[-3:-1]
    assert e.as_tuple(flatten=False)[0] == (1000, 900)
    moved = e.to("cpu")
    assert moved.kv_indices.tolist() == e.kv_indices.tolist() and moved.mask_mod is e.mask_mod


@pytest.mark.parametrize("index", [0, -1, (1, 2), (slice(0, 2), slice(1, 3)),
                                   (0, slice(None), np.array([1, 3]))])
def test_block_mask_getitem_matches_torch(index):
    e, t = both_masks(MASKS["head_dependent"], B=2, H=3, Q=150, KV=130, block=(32, 16),
                      compute_dq_write_order=True)
    conv = index if isinstance(index, tuple) else (index,)
    e_idx = tuple(et(i) if isinstance(i, np.ndarray) else i for i in conv)
    t_idx = tuple(tt(i) if isinstance(i, np.ndarray) else i for i in conv)
    es, ts = e[e_idx], t[t_idx]
    same_block_masks(es, ts)
    q = et(arrays((1, 3, 150, 8))[0])
    with pytest.raises(RuntimeError, match="sliced BlockMask"):
        efa.flex_attention(q, q[:, :, :130], q[:, :, :130], block_mask=e[0])


def test_from_kv_blocks_matches_torch():
    num = np.array([[[2, 1, 0]]], dtype=np.int32)
    idx = np.array([[[[2, 0, 1], [1, 0, 2], [0, 1, 2]]]], dtype=np.int32)
    full_num = np.array([[[0, 1, 1]]], dtype=np.int32)
    full_idx = np.array([[[[0, 1, 2], [2, 0, 1], [2, 1, 0]]]], dtype=np.int32)
    for extra in ({}, {"seq_lengths": (40, 48), "BLOCK_SIZE": 16}):
        t = tfa.BlockMask.from_kv_blocks(tt(num), tt(idx), tt(full_num), tt(full_idx), **extra)
        e = efa.BlockMask.from_kv_blocks(et(num), et(idx), et(full_num), et(full_idx), **extra)
        same_block_masks(e, t)
    e = efa.BlockMask.from_kv_blocks(et(num), et(idx), compute_q_blocks=False)
    assert e.q_indices is None and e.full_kv_indices is None and e.mask_mod is efa.noop_mask


def test_adjust_crops_to_the_corner():
    e, t = both_masks(MASKS["causal"], B=1, H=2, Q=256, KV=256, block=64)
    same_block_masks(e._adjust(128, 128), t._adjust(128, 128))
    # Where PyTorch's crop miscounts (or fails), ember's equals a mask made at that size.
    big, _ = both_masks(MASKS["head_dependent"], B=2, H=3, Q=150, KV=130, block=(32, 16))
    small, _ = both_masks(MASKS["head_dependent"], B=2, H=3, Q=100, KV=90, block=(32, 16))
    cropped = big._adjust(100, 90)
    assert cropped.shape == (2, 3, 100, 90)
    assert cropped.to_dense().tolist() == small.to_dense().tolist()


def test_mask_combinators():
    b, h = ember.zeros(1, 1, 1, 1, dtype=ember.int64), ember.zeros(1, 1, 1, 1,
                                                                  dtype=ember.int64)
    q, kv = ember.arange(4).view(1, 1, 4, 1), ember.arange(4).view(1, 1, 1, 4)
    assert efa.noop_mask(b, h, q, kv).item() is True
    assert efa.and_masks()(b, h, q, kv).item() is True
    assert efa.or_masks()(b, h, q, kv).item() is False
    assert efa.or_masks(causal, prefix(2))(b, h, q, kv).tolist() == \
        tfa.or_masks(causal, prefix(2))(*(tt(x.numpy()) for x in (b, h, q, kv))).tolist()
    for combine in (efa.and_masks, efa.or_masks):
        with pytest.raises(RuntimeError, match="callable"):
            combine(causal, 3)
    with pytest.raises(AssertionError):
        efa.create_block_mask(alibi(None), 1, 1, 8, 8)


# -- flex_attention --------------------------------------------------------------------------

def run_both(q, k, v, e_kwargs, t_kwargs, tol, **kwargs):
    t_out = tfa.flex_attention(tt(q), tt(k), tt(v), **t_kwargs, **kwargs)
    e_out = efa.flex_attention(et(q), et(k), et(v), **e_kwargs, **kwargs)
    if isinstance(t_out, tuple):
        assert isinstance(e_out, tuple) and len(e_out) == len(t_out)
        for ev, tv in zip(e_out, t_out):
            close(ev, tv, tol)
        return e_out, t_out
    close(e_out, t_out, tol)
    return e_out, t_out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(MASKS))
def test_masks_match_torch(dtype, name):
    B, H, L, S = 2, 3, 150, 130
    q, k, v = arrays((B, H, L, 16), (B, H, S, 16), (B, H, S, 16), dtype=dtype)
    e_bm, t_bm = both_masks(MASKS[name], B=B, H=H, Q=L, KV=S, block=32)
    e_out, t_out = run_both(q, k, v, {"block_mask": e_bm}, {"block_mask": t_bm}, TOL[dtype])
    assert e_out.dtype == {np.float32: ember.float32, np.float64: ember.float64}[dtype]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_no_mask_and_value_dim_and_scale(dtype):
    q, k, v = arrays((2, 2, 33, 8), (2, 2, 47, 8), (2, 2, 47, 5), dtype=dtype)
    run_both(q, k, v, {}, {}, TOL[dtype])
    run_both(q, k, v, {}, {}, TOL[dtype], scale=0.3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_document_masking_matches_torch(dtype):
    doc = np.array([[0] * 40 + [1] * 70 + [2] * 50, [0] * 100 + [1] * 60])
    q, k, v = arrays((2, 2, 160, 8), (2, 2, 160, 8), (2, 2, 160, 8), dtype=dtype)
    e_bm, t_bm = both_masks(lambda lib, d: documents(d), doc, B=2, H=None, Q=160, KV=160,
                            block=64)
    run_both(q, k, v, {"block_mask": e_bm}, {"block_mask": t_bm}, TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_score_mods_match_torch(dtype):
    B, H, L = 2, 4, 70
    q, k, v = arrays((B, H, L, 16), (B, H, L, 16), (B, H, L, 16), dtype=dtype)
    slopes = np.array([2.0 ** (-8 * (i + 1) / H) for i in range(H)], dtype=dtype)
    table = arrays((2 * L - 1,), dtype=dtype)[0]
    e_bm, t_bm = both_masks(MASKS["causal"], B=None, H=None, Q=L, KV=L, block=32)
    cases = [(alibi(et(slopes)), alibi(tt(slopes))),
             (relative(et(table), L), relative(tt(table), L))]
    for e_mod, t_mod in cases:
        run_both(q, k, v, {"score_mod": e_mod}, {"score_mod": t_mod}, TOL[dtype])
        run_both(q, k, v, {"score_mod": e_mod, "block_mask": e_bm},
                 {"score_mod": t_mod, "block_mask": t_bm}, TOL[dtype])


def test_score_mod_using_where_and_soft_cap():
    q, k, v = arrays((1, 2, 40, 8), (1, 2, 40, 8), (1, 2, 40, 8))

    def mod(lib):
        def soft_cap(score, b, h, q_idx, kv_idx):
            capped = 5 * lib.tanh(score / 5)
            return lib.where((q_idx + kv_idx) % 3 == 0, capped, score - 0.1 * h)
        return soft_cap
    run_both(q, k, v, {"score_mod": mod(ember)}, {"score_mod": mod(torch)}, TOL[np.float32])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gqa_matches_torch(dtype):
    B, Hq, Hkv, L = 2, 6, 2, 50
    q, k, v = arrays((B, Hq, L, 8), (B, Hkv, L, 8), (B, Hkv, L, 4), dtype=dtype)
    bias = arrays((Hq,), dtype=dtype)[0]
    e_bm, t_bm = both_masks(MASKS["head_dependent"], B=B, H=Hq, Q=L, KV=L, block=16)
    run_both(q, k, v, {"score_mod": head_bias(et(bias)), "block_mask": e_bm},
             {"score_mod": head_bias(tt(bias)), "block_mask": t_bm}, TOL[dtype],
             enable_gqa=True)
    with pytest.raises(ValueError, match="enable_gqa"):
        efa.flex_attention(et(q), et(k), et(v))
    with pytest.raises(ValueError, match="multiple"):
        efa.flex_attention(et(q[:, :5]), et(k), et(v), enable_gqa=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lse_matches_torch(dtype):
    q, k, v = arrays((2, 2, 100, 8), (2, 2, 90, 8), (2, 2, 90, 8), dtype=dtype)
    e_bm, t_bm = both_masks(MASKS["sliding_window"], B=None, H=None, Q=100, KV=90, block=32)
    (e_out, e_lse), _ = run_both(q, k, v, {"block_mask": e_bm}, {"block_mask": t_bm},
                                 TOL[dtype], return_lse=True)
    assert e_lse.dtype == (ember.float64 if dtype == np.float64 else ember.float32)
    (e_out, aux), (t_out, t_aux) = (
        efa.flex_attention(et(q), et(k), et(v), block_mask=e_bm,
                           return_aux=efa.AuxRequest(lse=True)),
        tfa.flex_attention(tt(q), tt(k), tt(v), block_mask=t_bm,
                           return_aux=tfa.AuxRequest(lse=True)))
    assert isinstance(aux, efa.AuxOutput) and aux.max_scores is None
    close(aux.lse, t_aux.lse, TOL[dtype])
    close(e_out, t_out, TOL[dtype])
    # PyTorch's CPU path refuses max_scores; ember gives the largest modified score.
    _, aux = efa.flex_attention(et(q), et(k), et(v), block_mask=e_bm,
                                return_aux=efa.AuxRequest(max_scores=True))
    assert aux.lse is None
    dense = dense_reference(tt(q), tt(k), tt(v), None, MASKS["sliding_window"](torch))
    close(aux.max_scores, dense["max"], TOL[dtype])
    with pytest.raises(ValueError, match="both return_lse and return_aux"):
        efa.flex_attention(et(q), et(k), et(v), return_lse=True,
                           return_aux=efa.AuxRequest(lse=True))


def test_half_precision_works_in_float32():
    q, k, v = arrays((1, 2, 40, 8), (1, 2, 40, 8), (1, 2, 40, 8))
    e_bm, t_bm = both_masks(MASKS["causal"], B=None, H=None, Q=40, KV=40, block=16)
    e_out, e_lse = efa.flex_attention(et(q).half(), et(k).half(), et(v).half(),
                                      block_mask=e_bm, return_lse=True)
    t_out, t_lse = tfa.flex_attention(tt(q).half(), tt(k).half(), tt(v).half(),
                                      block_mask=t_bm, return_lse=True)
    assert e_out.dtype == ember.float16 and e_lse.dtype == ember.float32
    close(e_out.float(), t_out.float(), 2e-3)
    close(e_lse, t_lse, 1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fully_masked_rows_give_zeros(dtype):
    q, k, v = arrays((2, 2, 40, 8), (2, 2, 40, 8), (2, 2, 40, 8), dtype=dtype)

    def mod(lib):
        return lambda b, h, q_idx, kv_idx: (q_idx % 3 != 0) & (kv_idx <= q_idx) & (h + b < 2)
    e_bm, t_bm = both_masks(mod, B=2, H=2, Q=40, KV=40, block=16)
    (e_out, e_lse), _ = run_both(q, k, v, {"block_mask": e_bm}, {"block_mask": t_bm},
                                 TOL[dtype], return_lse=True)
    out, lse = e_out.numpy(), e_lse.numpy()
    assert not np.isnan(out).any() and (out[:, :, ::3] == 0).all() and (out[1, 1] == 0).all()
    assert np.isneginf(lse[:, :, ::3]).all() and np.isfinite(lse[0, 0, 1])
    # A score_mod sending a whole row to -inf masks it just as well.
    def kill_row(lib):
        return lambda s, b, h, q_idx, kv_idx: lib.where(q_idx == 5, float("-inf"), s)
    run_both(q, k, v, {"score_mod": kill_row(ember)}, {"score_mod": kill_row(torch)},
             TOL[dtype])
    grads = compare_grads(q, k, v, None, mod, tol=TOL[dtype])
    assert all(np.isfinite(g).all() for g in grads)


def test_batch_and_head_broadcasting():
    B, H, L = 2, 3, 60
    q, k, v = arrays((B, H, L, 8), (B, H, L, 8), (B, H, L, 8))
    e_bm, t_bm = both_masks(MASKS["causal"], B=None, H=None, Q=L, KV=L, block=16)
    assert tuple(e_bm.kv_num_blocks.shape) == (1, 1, 4)
    run_both(q, k, v, {"block_mask": e_bm}, {"block_mask": t_bm}, TOL[np.float32])
    # key/value with batch 1 broadcast when the block mask has the query's batch.
    e_bm, t_bm = both_masks(MASKS["causal"], B=B, H=None, Q=L, KV=L, block=16)
    run_both(q, k[:1], v[:1], {"block_mask": e_bm}, {"block_mask": t_bm}, TOL[np.float32])
    with pytest.raises(ValueError, match="batch size"):
        efa.flex_attention(et(q), et(k[:1]), et(v[:1]))


def test_block_mask_length_errors():
    q = et(arrays((1, 1, 64, 8))[0])
    bm = efa.create_block_mask(causal, None, None, 128, 128, device="cpu", BLOCK_SIZE=32)
    with pytest.raises(ValueError, match="larger length"):
        efa.flex_attention(q, q, q, block_mask=bm)
    big = et(arrays((1, 1, 256, 8))[0])
    with pytest.raises(ValueError, match="smaller length"):
        efa.flex_attention(big, big, big, block_mask=bm)
    out = efa.flex_attention(q, q, q, block_mask=bm._adjust(64, 64))
    close(out, tfa.flex_attention(tt(q.numpy()), tt(q.numpy()), tt(q.numpy()),
                                  block_mask=tfa.create_block_mask(causal, None, None, 64, 64,
                                                                   device="cpu",
                                                                   BLOCK_SIZE=32)), 2e-5)
    with pytest.raises(ValueError, match="BACKEND"):
        efa.flex_attention(q, q, q, kernel_options={"BACKEND": "NOPE"})


def test_hand_built_blocks_are_honoured():
    """A block-sparse mask given as blocks (noop mask_mod) keeps only its blocks, as the
    fused kernel does (PyTorch's eager path would attend everywhere); its full blocks skip
    the mask_mod."""
    q, k, v = arrays((1, 2, 48, 8), (1, 2, 48, 8), (1, 2, 48, 8))
    num = np.array([[[1, 2, 1]]], dtype=np.int32)
    idx = np.array([[[[0, 1, 2], [0, 2, 1], [1, 0, 2]]]], dtype=np.int32)
    bm = efa.BlockMask.from_kv_blocks(et(num), et(idx), BLOCK_SIZE=16)
    keep = np.kron(bm.to_dense().numpy()[0, 0], np.ones((16, 16))).astype(bool)
    dense = dense_reference(tt(q), tt(k), tt(v), None,
                            lambda b, h, qi, ki: torch.tensor(keep)[qi, ki])
    close(efa.flex_attention(et(q), et(k), et(v), block_mask=bm), dense["out"], 2e-5)
    full = efa.BlockMask.from_kv_blocks(et(num), et(idx), et(num), et(idx), BLOCK_SIZE=16,
                                        mask_mod=causal)
    # Everything listed is full, so the causal mask_mod is never consulted.
    close(efa.flex_attention(et(q), et(k), et(v), block_mask=full), dense["out"], 2e-5)


# -- gradients -------------------------------------------------------------------------------

def dense_reference(q, k, v, score_mod, mask_mod, scale=None, enable_gqa=False):
    """Attention written out in PyTorch with the same broadcasting index tensors."""
    B, Hq, L, E = q.shape
    S = k.shape[2]
    if enable_gqa:
        k = k.repeat_interleave(Hq // k.shape[1], dim=1)
        v = v.repeat_interleave(Hq // v.shape[1], dim=1)
    scores = q @ k.transpose(-2, -1) * (scale or 1 / math.sqrt(E))
    grid = (torch.arange(B).view(B, 1, 1, 1), torch.arange(Hq).view(1, Hq, 1, 1),
            torch.arange(L).view(1, 1, L, 1), torch.arange(S).view(1, 1, 1, S))
    if score_mod is not None:
        scores = score_mod(scores, *grid)
    if mask_mod is not None:
        scores = torch.where(mask_mod(*grid), scores, float("-inf"))
    dead = torch.isneginf(scores).all(-1, keepdim=True)
    probs = torch.softmax(torch.where(dead, 0.0, scores), dim=-1)
    out = torch.where(dead, 0.0, probs @ v)
    # (logsumexp of the sanitised rows: an all -inf row would send NaN gradients back)
    lse = torch.where(dead[..., 0], float("-inf"),
                      torch.logsumexp(torch.where(dead, 0.0, scores), -1))
    return {"out": out, "lse": lse, "max": scores.amax(-1)}


def compare_grads(q, k, v, mod_of, mask_of, captured=(), tol=2e-5, **kwargs):
    """Forward and gradients (of sum(out * w) + sum(lse)) of q, k, v and the ``captured``
    arrays, ember's flex_attention against dense_reference; the reference's forward is
    first checked against PyTorch's flex_attention."""
    w = arrays((q.shape[0], q.shape[1], q.shape[2], v.shape[-1]), dtype=q.dtype)[0]
    L, S = q.shape[2], k.shape[2]
    t_in = [tt(a, grad=True) for a in (q, k, v, *captured)]
    e_in = [et(a, grad=True) for a in (q, k, v, *captured)]
    t_score = mod_of(torch, *t_in[3:]) if mod_of else None
    e_score = mod_of(ember, *e_in[3:]) if mod_of else None
    ref = dense_reference(*t_in[:3], t_score, mask_of(torch) if mask_of else None, **kwargs)
    with torch.no_grad():
        t_bm = tfa.create_block_mask(mask_of(torch), q.shape[0], q.shape[1], L, S,
                                     device="cpu", BLOCK_SIZE=16) if mask_of else None
        t_out, t_lse = tfa.flex_attention(*(x.detach() for x in t_in[:3]), score_mod=t_score,
                                          block_mask=t_bm, return_lse=True, **kwargs)
    close(ref["out"], t_out, tol)
    close(ref["lse"], t_lse, tol)
    e_bm = efa.create_block_mask(mask_of(ember), q.shape[0], q.shape[1], L, S, device="cpu",
                                 BLOCK_SIZE=16) if mask_of else None
    e_out, e_lse = efa.flex_attention(*e_in[:3], score_mod=e_score, block_mask=e_bm,
                                      return_lse=True, **kwargs)
    close(e_out, ref["out"], tol)
    finite = torch.isfinite(ref["lse"])
    ((ref["out"] * tt(w)).sum() + ref["lse"][finite].sum()).backward()
    ((e_out * et(w)).sum() + e_lse[et(finite.numpy())].sum()).backward()
    names = ["query", "key", "value"] + [f"captured {i}" for i in range(len(captured))]
    for name, e, t in zip(names, e_in, t_in):
        assert e.grad is not None, name
        close(e.grad, t.grad, tol * 10, name)
    return [e.grad.numpy() for e in e_in]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_learned_bias_gradients(dtype):
    B, H, L = 2, 3, 40
    q, k, v = arrays((B, H, L, 8), (B, H, L, 8), (B, H, L, 6), dtype=dtype)
    bias, table = arrays((H,), (2 * L - 1,), dtype=dtype)

    def mods(lib, head, rel):
        def learned(score, b, h, q_idx, kv_idx):
            return score + head[h] + rel[q_idx - kv_idx + L - 1]
        return learned
    compare_grads(q, k, v, mods, lambda lib: MASKS["sliding_window"](lib),
                  captured=(bias, table), tol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gqa_gradients(dtype):
    q, k, v = arrays((1, 4, 30, 8), (1, 2, 30, 8), (1, 2, 30, 8), dtype=dtype)
    slopes = arrays((4,), dtype=dtype)[0]
    compare_grads(q, k, v, lambda lib, s: alibi(s), lambda lib: causal, captured=(slopes,),
                  tol=TOL[dtype], enable_gqa=True, scale=0.5)


def test_gradients_without_mask():
    q, k, v = arrays((1, 2, 20, 4), (1, 2, 25, 4), (1, 2, 25, 4))
    compare_grads(q, k, v, None, None)
