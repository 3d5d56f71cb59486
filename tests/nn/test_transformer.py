"""nn.Transformer, its encoder/decoder stacks and layers against PyTorch 2.13 with the same
weights (a torch state_dict loads as is): outputs and gradients over masks of every kind,
both layouts, norm_first, activations, unbatched inputs, train mode (dropout 0) and eval
mode under no_grad (PyTorch's fused and nested-tensor inference paths); initialisation,
the causal mask helper, warnings and errors."""
import importlib.util
import pathlib
import warnings

import ember.nn as enn
import ember.nn.functional as EF
import numpy as np
import pytest
import torch

import ember

# notes, not failures: nested tensors are a prototype (PyTorch's inference path), and
# encoders built here are often not eligible for that path (both frameworks say why)
pytestmark = [pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors"),
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")]

_spec = importlib.util.spec_from_file_location(
    "_ember_test_attention", pathlib.Path(__file__).resolve().parent / "test_attention.py")
_att = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_att)
build, compare, randn, tols = _att.build, _att.compare, _att.randn, _att.tols

D, H, FF = 8, 2, 12
ACTIVATIONS = {"relu": ("relu", "relu"), "gelu": ("gelu", "gelu"),
               "silu_fn": (torch.nn.functional.silu, EF.silu),
               "gelu_module": (torch.nn.GELU(), enn.GELU())}


def build_pair(name, *args, activation=None, dtype=np.float32, **kwargs):
    """``build`` with an activation that differs per framework (a function or module)."""
    if activation is None:
        return build(name, *args, dtype=dtype, **kwargs)
    torch.manual_seed(0)
    t_act, e_act = ACTIVATIONS[activation]
    tm = getattr(torch.nn, name)(*args, activation=t_act, **kwargs).to(_att.DT[dtype][0])
    em = getattr(enn, name)(*args, activation=e_act, **kwargs).to(_att.DT[dtype][1])
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


def seq(n, N, batch_first, dtype=np.float32):
    return randn(N, n, D, dtype=dtype) if batch_first else randn(n, N, D, dtype=dtype)


def causal(n, dtype=np.float32):
    return np.triu(np.full((n, n), -np.inf, dtype=dtype), 1)


def padding(N, n):
    """Right-aligned padding (the last position of every sequence, two in the first)."""
    kpm = np.zeros((N, n), dtype=bool)
    kpm[:, -1] = True
    kpm[0, -2] = True
    return kpm


def src_masks(kind, S, N):
    bool_mask = np.random.default_rng(1).random((S, S)) < 0.3
    np.fill_diagonal(bool_mask, False)
    return {
        "none": {},
        "bool_mask": {"src_mask": bool_mask},
        "float_mask": {"src_mask": randn(S, S)},
        "inf_mask": {"src_mask": np.where(bool_mask, -np.inf, 0.0).astype(np.float32)},
        "mask_3d": {"src_mask": randn(N * H, S, S)},
        "bool_kpm": {"src_key_padding_mask": padding(N, S)},
        "float_kpm": {"src_key_padding_mask": np.where(padding(N, S), -np.inf, 0.0)
                      .astype(np.float32)},
        "both": {"src_mask": bool_mask, "src_key_padding_mask": padding(N, S)},
        "causal": {"src_mask": causal(S), "is_causal": True},
        "causal_kpm": {"src_mask": causal(S), "is_causal": True,
                       "src_key_padding_mask": np.where(padding(N, S), -np.inf, 0.0)
                       .astype(np.float32)},
    }[kind]


ENC_MASKS = ["none", "bool_mask", "float_mask", "mask_3d", "bool_kpm", "float_kpm", "both",
             "causal", "causal_kpm"]


@pytest.mark.parametrize("mask", ENC_MASKS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer(mask, batch_first, norm_first):
    S, N = 5, 2
    em, tm = build("TransformerEncoderLayer", D, H, FF, dropout=0.0, batch_first=batch_first,
                   norm_first=norm_first)
    compare(em, tm, [seq(S, N, batch_first)], src_masks(mask, S, N))


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_encoder_layer_activation_dtype(activation, dtype):
    em, tm = build_pair("TransformerEncoderLayer", D, H, FF, dropout=0.0,
                        activation=activation, dtype=dtype, bias=activation != "relu")
    compare(em, tm, [randn(4, 3, D, dtype=dtype)], tol=tols(dtype) * 10)
    assert em.activation_relu_or_gelu == tm.activation_relu_or_gelu


def tgt_kwargs(kind, T, S, N):
    bool_mask = np.random.default_rng(2).random((T, S)) < 0.3
    bool_mask[:, 0] = False
    mem_kpm = np.zeros((N, S), dtype=bool)
    mem_kpm[1, -2:] = True
    return {
        "none": {},
        "tgt_causal": {"tgt_mask": causal(T)},                      # detected as causal
        "tgt_causal_hint": {"tgt_mask": causal(T), "tgt_is_causal": True},
        "memory_mask": {"memory_mask": bool_mask},
        "float_memory_mask": {"memory_mask": randn(T, S)},
        "kpms": {"tgt_key_padding_mask": padding(N, T), "memory_key_padding_mask": mem_kpm},
        "all": {"tgt_mask": causal(T), "memory_mask": randn(T, S),
                "tgt_key_padding_mask": np.where(padding(N, T), -np.inf, 0.0)
                .astype(np.float32),
                "memory_key_padding_mask": np.where(mem_kpm, -np.inf, 0.0).astype(np.float32)},
    }[kind]


DEC_MASKS = ["none", "tgt_causal", "tgt_causal_hint", "memory_mask", "float_memory_mask",
             "kpms", "all"]


@pytest.mark.parametrize("mask", DEC_MASKS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(mask, batch_first, norm_first):
    T, S, N = 4, 5, 2
    em, tm = build("TransformerDecoderLayer", D, H, FF, dropout=0.0, batch_first=batch_first,
                   norm_first=norm_first)
    compare(em, tm, [seq(T, N, batch_first), seq(S, N, batch_first)],
            tgt_kwargs(mask, T, S, N))


@pytest.mark.parametrize("mask", ["none", "float_mask", "bool_kpm", "causal", "both"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack(mask, batch_first):
    S, N = 5, 2
    em, tm = _stacks("TransformerEncoder", batch_first, num_layers=2)
    kw = src_masks(mask, S, N)
    kw = {("mask" if k == "src_mask" else k): v for k, v in kw.items() if k != "is_causal"}
    compare(em, tm, [seq(S, N, batch_first)], kw)


@pytest.mark.parametrize("mask", DEC_MASKS)
def test_decoder_stack(mask):
    T, S, N = 4, 5, 2
    em, tm = _stacks("TransformerDecoder", True, num_layers=2)
    compare(em, tm, [seq(T, N, True), seq(S, N, True)], tgt_kwargs(mask, T, S, N))


def _stacks(name, batch_first, num_layers, **kwargs):
    """torch and ember <name> over a layer of the same kind, with a final LayerNorm."""
    layer = name + "Layer"
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(
        getattr(torch.nn, layer)(D, H, FF, dropout=0.0, batch_first=batch_first), num_layers,
        torch.nn.LayerNorm(D), **kwargs)
    em = getattr(enn, name)(
        getattr(enn, layer)(D, H, FF, dropout=0.0, batch_first=batch_first), num_layers,
        enn.LayerNorm(D), **kwargs)
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


@pytest.mark.filterwarnings("ignore:Support for mismatched")   # float and bool masks mixed
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "all"])
def test_transformer(batch_first, norm_first, masks):
    S, T, N = 5, 4, 2
    em, tm = build("Transformer", D, H, 2, 1, FF, dropout=0.0, batch_first=batch_first,
                   norm_first=norm_first)
    assert list(em.state_dict()) == list(tm.state_dict())
    kw = {}
    if masks == "all":
        kw = {"src_mask": randn(S, S), "src_key_padding_mask": padding(N, S),
              "tgt_mask": tm.generate_square_subsequent_mask(T).numpy(),
              "memory_key_padding_mask": padding(N, S),
              "tgt_key_padding_mask": padding(N, T), "memory_mask": randn(T, S)}
    compare(em, tm, [seq(S, N, batch_first), seq(T, N, batch_first)], kw)


def test_transformer_unbatched_float64_custom_parts():
    em, tm = build("Transformer", D, H, 1, 1, FF, dropout=0.0, dtype=np.float64,
                   activation="gelu", layer_norm_eps=1e-6, bias=False)
    S, T = 5, 3
    compare(em, tm, [randn(S, D, dtype=np.float64), randn(T, D, dtype=np.float64)],
            {"tgt_mask": causal(T, np.float64), "tgt_is_causal": True,
             "src_key_padding_mask": padding(1, S)[0]}, tol=1e-10)
    enc = enn.TransformerEncoder(enn.TransformerEncoderLayer(D, H, FF), 1,
                                 enable_nested_tensor=False)
    custom = enn.Transformer(D, H, custom_encoder=enc, dim_feedforward=FF,
                             num_decoder_layers=1)
    assert custom.encoder is enc and len(custom.decoder.layers) == 1


# PyTorch's fused inference path returns NaN for float attention masks other than 0/-inf
# (its masked softmax reads them as bool), so inference compares with 0/-inf float masks
@pytest.mark.parametrize("mask", ["none", "bool_kpm", "float_kpm", "bool_mask", "inf_mask",
                                  "causal"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_eval_inference_paths(mask, batch_first):
    """Eval mode under no_grad takes PyTorch's fused encoder-layer path, and (batch first,
    a right-aligned padding mask, no attention mask) its nested-tensor path, which returns
    zeros at padded positions before the final norm: ours agrees."""
    S, N = 5, 3
    kw = src_masks(mask, S, N)
    kw_stack = {("mask" if k == "src_mask" else k): v for k, v in kw.items()}
    em, tm = _stacks("TransformerEncoder", batch_first, num_layers=2)
    em.layers[0].dropout.p = tm.layers[0].dropout.p = 0.5     # inactive in eval
    for e, t, k in ((em, tm, kw_stack), (em.layers[0], tm.layers[0], kw)):
        e.eval(), t.eval()
        compare(e, t, [seq(S, N, batch_first)], k, grad=False)
    ep, tp = build("Transformer", D, H, 1, 1, FF, batch_first=batch_first)
    ep.eval(), tp.eval()
    compare(ep, tp, [seq(S, N, batch_first), seq(3, N, batch_first)],
            {k: v for k, v in kw.items() if k.startswith("src_key")}, grad=False)


def test_nested_path_zeroes_padding():
    """The nested-tensor path is taken only when PyTorch takes it: with gradients enabled
    the padded positions hold attention outputs, under no_grad they are zero."""
    S, N = 5, 2
    em, tm = _stacks("TransformerEncoder", True, num_layers=1)
    em.norm = tm.norm = None
    em.eval(), tm.eval()
    x, kpm = seq(S, N, True), padding(N, S)
    pad = np.broadcast_to(kpm[..., None], (N, S, D))
    out_nograd = compare(em, tm, [x], {"src_key_padding_mask": kpm}, grad=False)[0]
    assert not out_nograd.numpy()[pad].any()
    out_grad = compare(em, tm, [x], {"src_key_padding_mask": kpm})[0]
    assert np.abs(out_grad.detach().numpy()[pad]).min() > 0
    left = kpm[:, ::-1].copy()                           # left padding: no nested path
    out_left = compare(em, tm, [x], {"src_key_padding_mask": left}, grad=False)[0]
    assert np.abs(out_left.numpy()[np.broadcast_to(left[..., None], (N, S, D))]).min() > 0


def test_square_subsequent_mask():
    for sz, dtype in ((1, None), (4, None), (3, ember.float64)):
        e = enn.Transformer.generate_square_subsequent_mask(sz, dtype=dtype)
        t = torch.nn.Transformer.generate_square_subsequent_mask(
            sz, dtype=None if dtype is None else torch.float64)
        assert e.dtype == (ember.float32 if dtype is None else dtype)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_initialisation_and_structure():
    m = enn.Transformer(D, H, 2, 1, FF)
    t = torch.nn.Transformer(D, H, 2, 1, FF)
    assert ({k: tuple(v.shape) for k, v in m.state_dict().items()}
            == {k: tuple(v.shape) for k, v in t.state_dict().items()})
    assert repr(m) == repr(t)
    for name, p in m.named_parameters():
        w = p.detach().numpy()
        if p.dim() > 1:                                  # xavier_uniform_ everywhere
            bound = np.sqrt(6.0 / (w.shape[0] + w.shape[1]))
            assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound, name
    layers = m.encoder.layers
    assert layers[0] is not layers[1]
    assert layers[0].linear1.weight is not layers[1].linear1.weight
    assert m.d_model == D and m.nhead == H and m.batch_first is False


def test_nested_tensor_warnings():
    layer = enn.TransformerEncoderLayer(D, H, FF)             # batch_first=False
    with pytest.warns(UserWarning, match="batch_first was not True"):
        enc = enn.TransformerEncoder(layer, 1)
    assert enc.enable_nested_tensor and not enc.use_nested_tensor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        enn.TransformerEncoder(enn.TransformerEncoderLayer(D, H, FF, batch_first=True), 1)
    with pytest.warns(UserWarning, match="norm_first was True"):
        enn.TransformerEncoder(enn.TransformerEncoderLayer(D, H, FF, norm_first=True), 1)


def test_errors():
    for nn in (torch.nn, enn):
        with pytest.raises(AssertionError, match="divisible"):
            nn.TransformerEncoderLayer(10, 3)
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            nn.TransformerDecoderLayer(D, H, activation="tanh")
    m = enn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        m(ember.randn(5, 2, D), ember.randn(4, 3, D))
    with pytest.raises(RuntimeError, match="feature number"):
        m(ember.randn(5, 2, D), ember.randn(4, 2, D + 2))
    layer = enn.TransformerEncoderLayer(D, H, FF)
    with pytest.raises(AssertionError, match="only bool and floating"):
        layer(ember.randn(5, 2, D), src_mask=ember.zeros(5, 5, dtype=ember.int32))
