"""Transformer, its encoder and decoder stacks and their layers
(``torch.nn.modules.transformer``), with PyTorch's parameter names and mask conventions."""
import copy
import warnings

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.nn import functional as F
from ember.nn import init
from ember.nn._functional.attention import _canonical_mask, _none_or_dtype
from ember.nn.modules.activation import GELU, ReLU
from ember.nn.modules.attention import MultiheadAttention
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm

from ember.autograd.grad_mode import is_grad_enabled

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: -inf above the diagonal (future positions), 0 elsewhere."""
    dtype = _dtype_by_name["float32"] if dtype is None else dtype
    return _T.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(diagonal=1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:                 # unbatched (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of
    ``size`` (PyTorch passes this on as the is_causal hint)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _feedforward_and_norms(layer, d_model, dim_feedforward, dropout, activation,
                           layer_norm_eps, norm_first, bias, n_blocks, factory):
    """The parts both layer kinds share: linear1 -> activation -> dropout -> linear2, one
    LayerNorm and one Dropout per residual block (norm1.., dropout1..)."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
    layer.norm_first = norm_first
    for i in range(1, n_blocks + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
    for i in range(1, n_blocks + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))
    layer.activation = (_get_activation_fn(activation) if isinstance(activation, str)
                        else activation)


def _residual(layer, x, blocks):
    """x through (norm, block) pairs: pre-norm ``x + block(norm(x))`` with ``norm_first``,
    post-norm ``norm(x + block(x))`` otherwise."""
    for norm, block in blocks:
        x = x + block(norm(x)) if layer.norm_first else norm(x + block(x))
    return x


class _LayerBlocks:
    """The self-attention and feed-forward blocks shared by the encoder and decoder
    layers."""

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, self._ff_dropout)(x)


class TransformerEncoderLayer(_LayerBlocks, Module):
    """Self-attention then feed-forward, each in a residual block:
    ``TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation=relu, layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True,
    device=None, dtype=None)``; ``activation`` is "relu", "gelu" or a callable."""

    __constants__ = ["norm_first"]
    _ff_dropout = "dropout2"

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        _feedforward_and_norms(self, d_model, dim_feedforward, dropout, activation,
                               layer_norm_eps, norm_first, bias, 2, factory)
        # PyTorch records which activations its fused inference path supports
        act = self.activation
        self.activation_relu_or_gelu = (1 if act is F.relu or isinstance(act, ReLU) else
                                        2 if act is F.gelu or isinstance(act, GELU) else 0)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """src (S, E), (S, N, E) or (N, S, E) with batch_first; ``src_mask`` (S, S) or
        (N * nhead, S, S); ``src_key_padding_mask`` (N, S) or (S,); bool True = masked."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                   check_other=False)
        return _residual(self, src, [
            (self.norm1, lambda x: self._sa_block(x, src_mask, src_key_padding_mask,
                                                  is_causal=is_causal)),
            (self.norm2, self._ff_block)])


class TransformerDecoderLayer(_LayerBlocks, Module):
    """Self-attention, attention to the encoder's memory, then feed-forward, each in a
    residual block: ``TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048,
    dropout=0.1, activation=relu, layer_norm_eps=1e-05, batch_first=False, norm_first=False,
    bias=True, device=None, dtype=None)``."""

    __constants__ = ["norm_first"]
    _ff_dropout = "dropout3"

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        _feedforward_and_norms(self, d_model, dim_feedforward, dropout, activation,
                               layer_norm_eps, norm_first, bias, 3, factory)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """tgt (T, N, E) and memory (S, N, E) (batch first with batch_first, or unbatched);
        ``tgt_mask`` (T, T), ``memory_mask`` (T, S), ``*_key_padding_mask`` (N, T)/(N, S)."""
        return _residual(self, tgt, [
            (self.norm1, lambda x: self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                                  tgt_is_causal)),
            (self.norm2, lambda x: self._mha_block(x, memory, memory_mask,
                                                   memory_key_padding_mask, memory_is_causal)),
            (self.norm3, self._ff_block)])

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)


def _nested_fast_path_blocker(layer):
    """Why PyTorch's TransformerEncoder cannot use its nested-tensor inference path with
    copies of ``layer`` ("" when it can)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = [(layer.norm_first, f"{name}.norm_first was True"),
              (not attn.batch_first, f"{name}.self_attn.batch_first was not True(use "
                                     f"batch_first for better inference performance)"),
              (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not "
                                             f"True"),
              (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
              (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not "
                                                  f"True"),
              (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to "
                                                   f"{name}.norm2.eps"),
              (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd")]
    return next((why for failed, why in checks if failed), "")


def _left_aligned(valid):
    """Every row of the bool (N, S) ``valid`` is a run of True followed by False."""
    return bool((valid[:, 1:] <= valid[:, :-1]).all()) if valid.shape[1] > 1 else True


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` and an optional final ``norm``:
    ``TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
    mask_check=True)``."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _nested_fast_path_blocker(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}")
            self.use_nested_tensor = False

    def _zeroes_padding(self, src, mask, padded):
        """Whether PyTorch would run this call on nested tensors (inference without
        gradients, a left-aligned padding mask and no ``mask``): its padded positions then
        come back as zeros, and ours must too."""
        if (not self.use_nested_tensor or self.layers[0].training or src.dim() != 3
                or padded is None or mask is not None):
            return False
        if is_grad_enabled() and (src.requires_grad or any(
                p.requires_grad for p in self.layers[0].parameters())):
            return False
        return not self.mask_check or _left_aligned(~padded)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """src through every layer (then ``norm``); masks as TransformerEncoderLayer's.
        ``is_causal``: None detects whether ``mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        # PyTorch's nested path keeps the positions whose (float) padding mask is 0
        padded = None if src_key_padding_mask is None else src_key_padding_mask != 0
        zero_padding = self._zeroes_padding(src, mask, padded)
        is_causal = _detect_is_causal_mask(mask, is_causal,
                                           _get_seq_len(src, self.layers[0].self_attn.batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if zero_padding:                # batch_first is implied: (N, S, E)
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` and an optional final ``norm``:
    ``TransformerDecoder(decoder_layer, num_layers, norm=None)``."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """tgt and memory through every layer (then ``norm``); ``tgt_is_causal`` None
        detects whether ``tgt_mask`` is the causal mask."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Encoder-decoder Transformer ("Attention Is All You Need"): ``Transformer(d_model=512,
    nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, dropout=0.1,
    activation=relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-05,
    batch_first=False, norm_first=False, bias=True, device=None, dtype=None)``.  Every
    parameter with more than one dim is re-initialised with xavier_uniform_."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Encode ``src`` ((S, N, E), (N, S, E) with batch_first, or (S, E)), decode ``tgt``
        against it; masks as the encoder's and decoder's."""
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """(sz, sz) float mask with -inf above the diagonal: position i attends to 0..i."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
