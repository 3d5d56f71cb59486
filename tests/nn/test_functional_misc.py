"""pad, one_hot and scaled_dot_product_attention against PyTorch."""
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.autograd import gradcheck


def pair(arr, device, requires_grad=True):
    e = ember.tensor(arr, device=device, requires_grad=requires_grad)
    t = torch.tensor(arr, requires_grad=requires_grad)
    return e, t


def compare(oracle, e, t, leaves):
    oracle.assert_matches(e, t.detach())
    g = np.random.default_rng(0).normal(size=tuple(t.shape))
    e.backward(ember.tensor(g, device=e.device))
    t.backward(torch.tensor(g))
    for el, tl in leaves:
        oracle.assert_matches(el.grad, tl.grad)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,padding", [
    ((2, 3, 5), (1, 2)), ((2, 3, 4, 5), (2, 1, 0, 3)), ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)),
    ((3, 6), (2, 3)),
])
def test_pad_modes(device, oracle, mode, shape, padding):
    x, tx = pair(np.random.default_rng(1).normal(size=shape), device)
    compare(oracle, F.pad(x, padding, mode=mode), TF.pad(tx, padding, mode=mode), [(x, tx)])


@pytest.mark.parametrize("padding", [(1, 1), (0, 0, 2, 1), (-1, 2), (1, -2, -1, 0), (1, 1, 1, 1, 1, 1)])
def test_pad_constant_value_and_crop(device, oracle, padding):
    x, tx = pair(np.random.default_rng(2).normal(size=(3, 4, 5)), device)
    compare(oracle, F.pad(x.transpose(0, 2), padding, value=2.5),
            TF.pad(tx.transpose(0, 2), padding, value=2.5), [(x, tx)])


def test_pad_integer_and_empty(device, oracle):
    x = ember.arange(6, device=device).reshape(2, 3)
    oracle.assert_matches(F.pad(x, (1, 2), value=7), TF.pad(oracle.to_torch(x), (1, 2), value=7))
    e = ember.zeros(0, 3, device=device)
    oracle.assert_matches(F.pad(e, (1, 1)), TF.pad(oracle.to_torch(e), (1, 1)))


def test_pad_gradcheck(device):
    x = ember.randn(1, 2, 4, dtype=ember.float64, device=device, requires_grad=True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert gradcheck(lambda x: F.pad(x, (2, 1), mode=mode), (x,)), mode


@pytest.mark.parametrize("mode,shape,padding", [
    ("reflect", (1, 1, 4, 5), (2, -3, 0, 0)), ("reflect", (1, 1, 4, 5), (-3, 2, 1, -2)),
    ("reflect", (1, 2, 5), (4, -1)), ("reflect", (1, 2, 3, 4, 5), (-2, 3, 1, -1, 2, -2)),
    ("replicate", (1, 2, 1), (3, -2)), ("replicate", (1, 2, 2, 4), (1, -3, -3, 2)),
])
def test_pad_mixed_signs(device, oracle, mode, shape, padding):
    # PyTorch reflects and replicates the uncropped input's edges (pad, then crop)
    x, tx = pair(np.random.default_rng(3).normal(size=shape), device)
    compare(oracle, F.pad(x, padding, mode=mode), TF.pad(tx, padding, mode=mode), [(x, tx)])


@pytest.mark.parametrize("mode,padding", [("reflect", (5, -1)), ("reflect", (-1, 5)),
                                          ("reflect", (-4, 0)), ("replicate", (-3, -2))])
def test_pad_mixed_sign_errors(oracle, same_functional_error, mode, padding):
    x = oracle.from_torch(torch.zeros(1, 2, 4)) if padding != (-3, -2) else \
        oracle.from_torch(torch.zeros(2, 5))
    same_functional_error(oracle, "pad", [x, padding, mode], {})


def test_pad_errors(device):
    x = ember.randn(3, 5, device=device)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding"):
        F.pad(x.unsqueeze(0), (5, 5), mode="reflect")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(NotImplementedError, match="non-constant padding"):
        F.pad(ember.randn(5, device=device), (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="doesn't take in value argument"):
        F.pad(x, (1, 1), mode="replicate", value=3.0)


@pytest.mark.parametrize("num_classes", [-1, 6])
def test_one_hot(device, oracle, num_classes):
    t = ember.tensor([[0, 3], [2, 1]], device=device)
    oracle.assert_matches(F.one_hot(t, num_classes),
                          TF.one_hot(oracle.to_torch(t), num_classes))
    e = ember.zeros(0, dtype=ember.int64, device=device)
    if num_classes > 0:
        oracle.assert_matches(F.one_hot(e, num_classes), TF.one_hot(oracle.to_torch(e), num_classes))


def test_one_hot_errors(device):
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(ember.tensor([1, 2], dtype=ember.int32))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(ember.tensor([1, 2]), 2)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(ember.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(ember.zeros(0, dtype=ember.int64))


@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
@pytest.mark.parametrize("scale", [None, 0.3])
@pytest.mark.parametrize("L,S", [(4, 4), (3, 5)])
def test_sdpa(device, oracle, mask, scale, L, S):
    rng = np.random.default_rng(3)
    q, tq = pair(rng.normal(size=(2, 3, L, 8)), device)
    k, tk = pair(rng.normal(size=(2, 3, S, 8)), device)
    v, tv = pair(rng.normal(size=(2, 3, S, 6)), device)
    em = tm = None
    causal = mask == "causal"
    if mask == "bool":
        m = rng.uniform(size=(L, S)) > 0.3
        m[:, 0] = True                                   # no fully masked row
        em, tm = ember.tensor(m, device=device), torch.tensor(m)
    elif mask == "float":
        m = rng.normal(size=(3, L, S))
        em, tm = ember.tensor(m, device=device), torch.tensor(m)
    e = F.scaled_dot_product_attention(q, k, v, attn_mask=em, is_causal=causal, scale=scale)
    r = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, is_causal=causal, scale=scale)
    compare(oracle, e, r, [(q, tq), (k, tk), (v, tv)])


@pytest.mark.parametrize("mask", ["bool", "float"])
def test_sdpa_fully_masked_row(device, oracle, mask):
    # PyTorch's math path (_safe_softmax): a row that may attend to nothing gives zeros and
    # zero gradients, not nan
    rng = np.random.default_rng(6)
    q, tq = pair(rng.normal(size=(2, 3, 4, 8)), device)
    k, tk = pair(rng.normal(size=(2, 3, 5, 8)), device)
    v, tv = pair(rng.normal(size=(2, 3, 5, 6)), device)
    m = rng.uniform(size=(4, 5)) > 0.3
    m[:, 0] = True
    m[1] = False
    if mask == "float":
        m = np.where(m, rng.normal(size=m.shape), -np.inf)
    em, tm = ember.tensor(m, device=device), torch.tensor(m)
    e = F.scaled_dot_product_attention(q, k, v, attn_mask=em)
    r = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    compare(oracle, e, r, [(q, tq), (k, tk), (v, tv)])
    assert float(e[:, :, 1].abs().sum()) == 0.0


@pytest.mark.parametrize("mask_dtype", ["int64", "uint8", "float16", "float64"])
def test_sdpa_mask_dtype_errors(device, mask_dtype):
    q, tq = pair(np.ones((1, 2, 3, 4), dtype=np.float32), device, requires_grad=False)
    tm = torch.ones(3, 3, dtype=getattr(torch, mask_dtype))
    with pytest.raises(RuntimeError) as t_err:
        TF.scaled_dot_product_attention(tq, tq, tq, attn_mask=tm)
    with pytest.raises(RuntimeError) as e_err:
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.tensor(tm.numpy(),
                                                                      device=device))
    assert str(e_err.value) == str(t_err.value)


def test_sdpa_gqa(device, oracle):
    rng = np.random.default_rng(4)
    q, tq = pair(rng.normal(size=(1, 4, 3, 8)), device)
    k, tk = pair(rng.normal(size=(1, 2, 5, 8)), device)
    v, tv = pair(rng.normal(size=(1, 2, 5, 8)), device)
    compare(oracle, F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
            TF.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True),
            [(q, tq), (k, tk), (v, tv)])


def test_sdpa_dropout(device):
    ember.manual_seed(0)
    q = ember.randn(2, 16, 8, device=device)
    full = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    assert float(full.abs().sum()) == 0.0
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, q, q)
    assert not ember.allclose(a, b)
    ember.manual_seed(5)
    c = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    ember.manual_seed(5)
    assert ember.equal(c, F.scaled_dot_product_attention(q, q, q, dropout_p=0.5))


def test_sdpa_errors(device):
    q = ember.randn(2, 3, 4, device=device)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(3, 3, dtype=ember.bool),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="same embedding size"):
        F.scaled_dot_product_attention(q, ember.randn(2, 3, 5), q)


def test_sdpa_gradcheck(device):
    rng = np.random.default_rng(5)
    args = tuple(ember.tensor(rng.normal(size=(2, 3, 4)), device=device, requires_grad=True)
                 for _ in range(3))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     args)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_bool(oracle, same_functional_error, mode):
    # PyTorch's reflection and replication kernels have no bool version (its shape checks
    # come first); circular is views, which take any dtype
    for shape, padding in (((2, 3), (1, 1)), ((1, 2, 3, 3), (1, 1, 1, 1)), ((1, 2, 3), (5, 5)),
                           ((1, 2, 3), (-4, 0))):
        t = torch.ones(shape, dtype=torch.bool)
        same_functional_error(oracle, "pad", [oracle.from_torch(t), padding, mode], {})
        if min(padding) > 0 and max(padding) < 3:
            oracle.assert_matches(F.pad(oracle.from_torch(t), padding, mode="circular"),
                                  TF.pad(t, padding, mode="circular"))
