"""nn.MultiheadAttention and F.multi_head_attention_forward against PyTorch 2.13 with the
same weights: outputs, attention weights and gradients (inputs and parameters) for every
kind of mask, both layouts, unbatched inputs, separate k/v dims, bias_k/bias_v and zero
attention; PyTorch's initialisation, parameter names and errors."""
import contextlib
import math

import ember.nn as enn
import ember.nn.functional as EF
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
DT = {np.float32: (torch.float32, ember.float32), np.float64: (torch.float64, ember.float64)}


def tols(dtype):
    return 1e-5 if dtype == np.float32 else 1e-10


def pair(arr, grad=True):
    """The same values as a torch and an ember tensor (float ones require grad)."""
    g = grad and arr.dtype.kind == "f"
    return (torch.tensor(arr, requires_grad=g), ember.tensor(arr, requires_grad=g))


def build(name, *args, dtype=np.float32, seed=0, **kwargs):
    """torch.nn.<name> and ember.nn.<name> with the same parameters (torch's state_dict)."""
    torch.manual_seed(seed)
    tm = getattr(torch.nn, name)(*args, **kwargs).to(DT[dtype][0])
    em = getattr(enn, name)(*args, **kwargs).to(DT[dtype][1])
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


def assert_close(e, t, tol, what=""):
    assert tuple(e.shape) == tuple(t.shape), (what, e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol,
                               err_msg=what)


def compare(em, tm, arrays, kwargs=(), tol=1e-5, grad=True, n_out=1):
    """Run both modules on ``arrays`` (numpy; float ones require grad; one array passed
    twice becomes one tensor, so self-attention stays ``query is key``) and keyword arrays /
    values ``kwargs``; compare the first ``n_out`` outputs, then the gradients of
    sum(out * w) for every float input and parameter.  ``grad=False`` runs both under
    no_grad (PyTorch's inference fast paths).  Returns the torch outputs."""
    made = {}
    for a in arrays:
        made.setdefault(id(a), pair(a, grad))
    ts, es = zip(*(made[id(a)] for a in arrays))
    kt, ke = {}, {}
    for k, v in dict(kwargs).items():
        kt[k], ke[k] = pair(v, grad=False) if isinstance(v, np.ndarray) else (v, v)
    with contextlib.nullcontext() if grad else torch.no_grad():
        out_t = tm(*ts, **kt)
    with contextlib.nullcontext() if grad else ember.no_grad():
        out_e = em(*es, **ke)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    outs_e = out_e if isinstance(out_e, tuple) else (out_e,)
    for i, (ot, oe) in enumerate(zip(outs_t[:n_out], outs_e[:n_out])):
        if ot is None:
            assert oe is None
        else:
            assert_close(oe, ot, tol, f"output {i}")
    if not grad:
        return outs_t
    w = RNG.standard_normal(tuple(outs_t[0].shape)).astype(arrays[0].dtype)
    (outs_t[0] * torch.tensor(w)).sum().backward()
    (outs_e[0] * ember.tensor(w)).sum().backward()
    for i, (t, e) in enumerate(made.values()):
        if t.requires_grad:
            assert_close(e.grad, t.grad, tol, f"grad of input {i}")
    pt, pe = dict(tm.named_parameters()), dict(em.named_parameters())
    assert pt.keys() == pe.keys()
    for k in pt:
        if pt[k].grad is None:
            assert pe[k].grad is None or not pe[k].grad.numpy().any(), k
        else:
            assert_close(pe[k].grad, pt[k].grad, tol, f"grad of {k}")
    return outs_t


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def masks(kind, L, S, N, heads, dtype=np.float32):
    """Keyword masks of one kind for queries of length L over S keys, batch N."""
    bool_attn = RNG.random((L, S)) < 0.3
    bool_attn[:, 0] = False                         # every query keeps one key: no NaN rows
    kpm = np.zeros((N, S), dtype=bool)
    kpm[:, -1] = True
    kpm[0, -2] = True
    return {
        "none": {},
        "bool_attn": {"attn_mask": bool_attn},
        "float_attn": {"attn_mask": randn(L, S, dtype=dtype)},
        "float_attn_3d": {"attn_mask": randn(N * heads, L, S, dtype=dtype)},
        "bool_attn_3d": {"attn_mask": np.broadcast_to(bool_attn, (N * heads, L, S)).copy()},
        "bool_kpm": {"key_padding_mask": kpm},
        "float_kpm": {"key_padding_mask": np.where(kpm, -1e4, 0.0).astype(dtype)},
        "both_bool": {"attn_mask": bool_attn, "key_padding_mask": kpm},
        "both_float": {"attn_mask": randn(L, S, dtype=dtype),
                       "key_padding_mask": np.where(kpm, -1e4, 0.0).astype(dtype)},
    }[kind]


MASK_KINDS = ["none", "bool_attn", "float_attn", "float_attn_3d", "bool_attn_3d", "bool_kpm",
              "float_kpm", "both_bool", "both_float"]


@pytest.mark.parametrize("mask", MASK_KINDS)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_masks_layouts(mask, need_weights, batch_first):
    E, H, L, S, N = 8, 2, 3, 5, 2
    em, tm = build("MultiheadAttention", E, H, batch_first=batch_first)
    shape = (lambda n: (N, n, E)) if batch_first else (lambda n: (n, N, E))
    compare(em, tm, [randn(*shape(L)), randn(*shape(S)), randn(*shape(S))],
            {**masks(mask, L, S, N, H), "need_weights": need_weights}, n_out=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("average", [True, False])
def test_mha_self_attention_weights(dtype, average):
    E, H, L, N = 6, 3, 4, 2
    em, tm = build("MultiheadAttention", E, H, dtype=dtype)
    x = randn(L, N, E, dtype=dtype)
    xt, xe = pair(x)
    out_t, w_t = tm(xt, xt, xt, average_attn_weights=average)
    out_e, w_e = em(xe, xe, xe, average_attn_weights=average)
    assert_close(out_e, out_t, tols(dtype))
    assert_close(w_e, w_t, tols(dtype))
    (out_t.sum() + (w_t * w_t).sum()).backward()
    (out_e.sum() + (w_e * w_e).sum()).backward()
    assert_close(xe.grad, xt.grad, tols(dtype))
    assert_close(em.in_proj_weight.grad, tm.in_proj_weight.grad, tols(dtype))


@pytest.mark.parametrize("kwargs", [
    {"kdim": 3, "vdim": 5}, {"kdim": 4}, {"bias": False}, {"add_bias_kv": True},
    {"add_zero_attn": True}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3}])
@pytest.mark.parametrize("mask", ["none", "both_bool", "float_attn_3d"])
def test_mha_options(kwargs, mask):
    E, H, L, S, N = 8, 2, 3, 4, 2
    em, tm = build("MultiheadAttention", E, H, **kwargs)
    assert list(em.state_dict()) == list(tm.state_dict())
    kd, vd = kwargs.get("kdim", E), kwargs.get("vdim", E)
    compare(em, tm, [randn(L, N, E), randn(S, N, kd), randn(S, N, vd)],
            masks(mask, L, S, N, H), n_out=2)


@pytest.mark.parametrize("mask", ["none", "bool_attn", "float_kpm", "unbatched_3d"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched(mask, need_weights):
    E, H, L, S = 8, 2, 3, 4
    em, tm = build("MultiheadAttention", E, H, batch_first=True)
    kw = {"need_weights": need_weights}
    if mask == "unbatched_3d":
        kw["attn_mask"] = randn(H, L, S)
    elif mask != "none":
        kw.update({k: v[0] if k == "key_padding_mask" else v
                   for k, v in masks(mask, L, S, 1, H).items()})
    compare(em, tm, [randn(L, E), randn(S, E), randn(S, E)], kw, n_out=2)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_kpm", [False, True])
def test_mha_is_causal(need_weights, with_kpm):
    E, H, L, N = 8, 2, 4, 2
    em, tm = build("MultiheadAttention", E, H)
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    kw = {"attn_mask": causal, "is_causal": True, "need_weights": need_weights}
    if with_kpm:
        kw["key_padding_mask"] = masks("bool_kpm", L, L, N, H)["key_padding_mask"]
    x = randn(L, N, E)
    compare(em, tm, [x, x, x], kw, n_out=2)


def test_mha_eval_fast_path_and_dropout():
    """Inference on self-attention runs PyTorch's fused path; dropout only acts in
    training."""
    E, H, L, N = 8, 2, 4, 3
    em, tm = build("MultiheadAttention", E, H, dropout=0.5, batch_first=True)
    em.eval(), tm.eval()
    x = randn(N, L, E)
    kpm = masks("bool_kpm", L, L, N, H)["key_padding_mask"]
    for kw in ({}, {"key_padding_mask": kpm}, {"need_weights": False}):
        compare(em, tm, [x, x, x], kw, grad=False, n_out=2)
    out_eval = em(*[ember.tensor(x)] * 3, need_weights=False)[0]
    em.train()
    out_train = em(*[ember.tensor(x)] * 3, need_weights=False)[0]
    assert not np.allclose(out_train.detach().numpy(), out_eval.detach().numpy())


def test_mha_functional_matches_torch():
    """F.multi_head_attention_forward called directly, separate projection weights and
    static_k/static_v included."""
    E, H, L, S, N = 6, 2, 3, 4, 2
    hd = E // H
    arrays = {"q": randn(L, N, E), "k": randn(S, N, E), "v": randn(S, N, E),
              "w": randn(3 * E, E), "b": randn(3 * E), "ow": randn(E, E), "ob": randn(E),
              "wq": randn(E, E), "wk": randn(E, E), "wv": randn(E, E),
              "sk": randn(N * H, S + 1, hd), "sv": randn(N * H, S + 1, hd)}
    ts = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    es = {k: ember.tensor(v, requires_grad=True) for k, v in arrays.items()}

    def run(F, d):
        a, _ = F.multi_head_attention_forward(
            d["q"], d["k"], d["v"], E, H, d["w"], d["b"], None, None, False, 0.0, d["ow"],
            d["ob"], training=True)
        b, wb = F.multi_head_attention_forward(
            d["q"], d["k"], d["v"], E, H, None, d["b"], None, None, False, 0.0, d["ow"],
            d["ob"], use_separate_proj_weight=True, q_proj_weight=d["wq"],
            k_proj_weight=d["wk"], v_proj_weight=d["wv"], average_attn_weights=False)
        c, _ = F.multi_head_attention_forward(
            d["q"], d["k"], d["v"], E, H, d["w"], d["b"], None, None, True, 0.0, d["ow"],
            d["ob"], static_k=d["sk"], static_v=d["sv"], need_weights=False)
        return a, b, wb, c

    outs_t, outs_e = run(torch.nn.functional, ts), run(EF, es)
    for ot, oe in zip(outs_t, outs_e):
        assert_close(oe, ot, 1e-5)
    sum(o.sum() for o in outs_t).backward()
    sum(o.sum() for o in outs_e).backward()
    for k in arrays:
        assert_close(es[k].grad, ts[k].grad, 1e-5, k)


def test_mha_init_and_names():
    m = enn.MultiheadAttention(8, 2)
    assert [k for k, _ in m.named_parameters()] == [
        "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert m.q_proj_weight is None and m.bias_k is None and m.head_dim == 4
    bound = math.sqrt(6.0 / (8 + 24))                   # xavier_uniform_ on (24, 8)
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()
    assert repr(m) == repr(torch.nn.MultiheadAttention(8, 2))
    sep = enn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    tsep = torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    assert ({k: tuple(v.shape) for k, v in sep.named_parameters()}
            == {k: tuple(v.shape) for k, v in tsep.named_parameters()})
    assert sep.in_proj_weight is None and sep.in_proj_bias is None
    assert sep.bias_k.detach().numpy().any()            # xavier_normal_, not zeros


def test_mha_errors():
    for ctor in (torch.nn.MultiheadAttention, enn.MultiheadAttention):
        with pytest.raises(AssertionError, match="divisible"):
            ctor(10, 3)
        with pytest.raises(ValueError, match="greater than 0"):
            ctor(0, 2)
    m = enn.MultiheadAttention(4, 2)
    x = ember.randn(3, 2, 4)
    with pytest.raises(AssertionError, match="only bool and floating"):
        m(x, x, x, attn_mask=ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        m(x, x, x, attn_mask=ember.zeros(3, 2))
    with pytest.raises(RuntimeError, match="3D attn_mask"):
        m(x, x, x, attn_mask=ember.zeros(2, 3, 3))
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="batched"):
        m(x, x, ember.randn(3, 4))
    with pytest.raises(AssertionError, match="4-D query"):
        m(ember.randn(1, 3, 2, 4), x, x)
    with pytest.raises(AssertionError, match="embedding dimension"):
        m(ember.randn(3, 2, 6), x, x)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask"):
        m(x, x, x, attn_mask=ember.zeros(3, 3), key_padding_mask=ember.zeros(2, 3).bool())


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_and_encoder_layer_take_an_empty_batch(need_weights):
    q = ember.zeros(0, 3, 8)
    out, w = enn.MultiheadAttention(8, 2, batch_first=True)(q, q, q, need_weights=need_weights)
    assert out.shape == (0, 3, 8)
    assert (w is None) if not need_weights else w.shape == (0, 3, 3)
    assert enn.TransformerEncoderLayer(8, 2, 16, batch_first=True)(q).shape == (0, 3, 8)


@pytest.mark.parametrize("name", ["MultiheadAttention", "TransformerEncoderLayer"])
def test_is_causal_hint_without_a_mask(name):
    # PyTorch's inference fast path ignores is_causal (there is no mask it hints at); its
    # regular path asks for the mask
    for mode in ("eval_no_grad", "eval_grad", "train_no_grad", "no_fastpath", "odd_heads",
                 "seq_first"):
        _check_causal_hint(name, mode)


def _check_causal_hint(name, mode):
    heads = 1 if mode == "odd_heads" else 2
    args = (8, heads) + ((16, 0.0) if name == "TransformerEncoderLayer" else ())
    em, tm = build(name, *args, batch_first=mode != "seq_first")
    x = randn(2, 4, 8)
    outs = []
    for lib, m in ((torch, tm), (ember, em)):
        m.train(mode == "train_no_grad")
        lib.backends.mha.set_fastpath_enabled(mode != "no_fastpath")
        xt = lib.tensor(x)
        call = ((lambda: m(xt, is_causal=True)) if name == "TransformerEncoderLayer" else
                (lambda: m(xt, xt, xt, is_causal=True, need_weights=False)[0]))
        try:
            with (contextlib.nullcontext() if mode == "eval_grad" else lib.no_grad()):
                outs.append(call().detach().numpy())
        except RuntimeError as e:
            outs.append(type(e).__name__)
        finally:
            lib.backends.mha.set_fastpath_enabled(True)
    if isinstance(outs[0], str):
        assert outs[1] == outs[0]
    else:
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attn", [None, "2d", "3d"])
@pytest.mark.parametrize("kpm", [False, True])
def test_merge_masks(attn, kpm):
    E, H, L, N = 8, 2, 4, 3
    em, tm = build("MultiheadAttention", E, H, batch_first=True)
    a = {None: None, "2d": RNG.standard_normal((L, L)),
         "3d": RNG.standard_normal((N * H, L, L))}[attn]
    k = RNG.standard_normal((N, L)) if kpm else None
    got = em.merge_masks(None if a is None else ember.tensor(a),
                         None if k is None else ember.tensor(k), ember.zeros(N, L, E))
    want = tm.merge_masks(None if a is None else torch.tensor(a),
                          None if k is None else torch.tensor(k), torch.zeros(N, L, E))
    assert got[1] == want[1]
    if want[0] is None:
        assert got[0] is None
    else:
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())


def test_private_attention_helpers():
    # F._canonical_mask, F._none_or_dtype, F._in_projection(_packed): what copies of
    # PyTorch's Transformer layers import
    w, b = randn(24, 8), randn(24)
    q, kv = randn(3, 2, 8), randn(5, 2, 8)
    for case in ("self", "shared kv", "separate"):
        outs = []
        for lib in (torch, ember):
            Q, K = lib.tensor(q), lib.tensor(kv)
            args = {"self": (Q, Q, Q), "shared kv": (Q, K, K), "separate": (Q, K, K + 0)}[case]
            outs.append(lib.nn.functional._in_projection_packed(*args, lib.tensor(w),
                                                                lib.tensor(b)))
        assert len(outs[1]) == 3
        for e, t in zip(*outs[::-1]):
            assert_close(e, t, 1e-5, case)
    mask = np.array([[True, False], [False, False]])
    assert_close(EF._canonical_mask(ember.tensor(mask), "m", None, "", ember.float32),
                 torch.nn.functional._canonical_mask(torch.tensor(mask), "m", None, "",
                                                     torch.float32), 0)
    assert EF._none_or_dtype(None) is None and EF._none_or_dtype(ember.ones(1)) == ember.float32
    with pytest.raises(RuntimeError, match="must be None or torch.Tensor"):
        EF._none_or_dtype(1.0)
