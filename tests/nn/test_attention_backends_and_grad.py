"""nn.attention (SDPBackend, sdpa_kernel) and nn.grad (the convolution input/weight
gradients), against torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from ember.nn import functional as F
from ember.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention import SDPBackend as TB
from torch.nn.attention import sdpa_kernel as t_kernel

import ember

RNG = np.random.default_rng(2)


def test_sdp_backend_values():
    for b in SDPBackend:
        assert int(b) == int(getattr(TB, b.name))
    assert SDPBackend.__module__ == "ember.nn.attention"


@pytest.mark.parametrize("name", ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION",
                                  "CUDNN_ATTENTION", "OVERRIDEABLE"])
def test_sdpa_kernel_restricts_like_torch_cpu(name):
    q = RNG.standard_normal((1, 2, 4, 8)).astype(np.float32)
    try:
        with t_kernel(getattr(TB, name)):
            expect = TF.scaled_dot_product_attention(*(torch.tensor(q),) * 3)
    except RuntimeError:
        expect = None
    with sdpa_kernel(getattr(SDPBackend, name)):
        if expect is None:
            with pytest.raises(RuntimeError, match="No viable backend"):
                F.scaled_dot_product_attention(*(ember.tensor(q),) * 3)
        else:
            got = F.scaled_dot_product_attention(*(ember.tensor(q),) * 3)
            np.testing.assert_allclose(got.numpy(), expect.numpy(), atol=1e-5)
    F.scaled_dot_product_attention(*(ember.tensor(q),) * 3)       # restored after the block


def test_sdpa_kernel_takes_lists_and_nests():
    q = ember.randn(1, 1, 3, 4)
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        F.scaled_dot_product_attention(q, q, q)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            with pytest.raises(RuntimeError):
                F.scaled_dot_product_attention(q, q, q)
        F.scaled_dot_product_attention(q, q, q)
    with pytest.raises(AssertionError):
        with sdpa_kernel(["MATH"]):
            pass


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_grads(nd):
    shape = (2, 3) + (7, 6, 5)[:nd]
    wshape = (4, 3) + (3, 2, 2)[:nd]
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal(wshape).astype(np.float32)
    kw = {"stride": 2, "padding": 1}
    out = getattr(TF, f"conv{nd}d")(torch.tensor(x), torch.tensor(w), **kw)
    g = RNG.standard_normal(tuple(out.shape)).astype(np.float32)
    ti = getattr(torch.nn.grad, f"conv{nd}d_input")(shape, torch.tensor(w), torch.tensor(g),
                                                     **kw)
    ei = getattr(ember.nn.grad, f"conv{nd}d_input")(shape, ember.tensor(w), ember.tensor(g),
                                                     **kw)
    np.testing.assert_allclose(ei.numpy(), ti.numpy(), atol=1e-4)
    tw = getattr(torch.nn.grad, f"conv{nd}d_weight")(torch.tensor(x), wshape, torch.tensor(g),
                                                      **kw)
    ew = getattr(ember.nn.grad, f"conv{nd}d_weight")(ember.tensor(x), wshape, ember.tensor(g),
                                                      **kw)
    np.testing.assert_allclose(ew.numpy(), tw.numpy(), atol=1e-4)


def _sdpa_outcome(lib, q, k, mask, **kw):
    """(values, grad of q) of attention with ``mask`` and is_causal, or the error type."""
    qt = lib.tensor(q, requires_grad=True)
    m = None if mask is None else lib.tensor(mask)
    try:
        out = lib.nn.functional.scaled_dot_product_attention(qt, lib.tensor(k), lib.tensor(k),
                                                             attn_mask=m, is_causal=True, **kw)
    except RuntimeError as e:
        return type(e).__name__
    out.sum().backward()
    return out.detach().numpy(), qt.grad.numpy()


MASKS = {
    "bool (L, S)": lambda L, S: RNG.random((L, S)) > 0.3,
    "bool with a dead row": lambda L, S: np.array([[j != 0 for j in range(S)]] * L),
    "float (L, S)": lambda L, S: RNG.standard_normal((L, S)).astype(np.float32),
    "bool (1, S)": lambda L, S: RNG.random((1, S)) > 0.3,
    "bool (2, 1, L, S)": lambda L, S: RNG.random((2, 1, L, S)) > 0.3,
}


def _same_sdpa_outcome(q, k, m, **kw):
    want, got = _sdpa_outcome(torch, q, k, m, **kw), _sdpa_outcome(ember, q, k, m, **kw)
    if isinstance(want, str):
        assert got == want
        return
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask", MASKS)
def test_attn_mask_with_is_causal_as_torch_cpu(mask):
    # PyTorch's CPU flash kernel (its default) takes both: the mask inside the causal
    # triangle; where it does not apply (3-D inputs, a 3-D mask), the pair is an error
    for lead, L, S in [((2, 2), 4, 6), ((2, 2), 5, 5), ((2,), 4, 4)]:
        q = RNG.standard_normal((*lead, L, 8)).astype(np.float32)
        k = RNG.standard_normal((*lead, S, 8)).astype(np.float32)
        _same_sdpa_outcome(q, k, MASKS[mask](L, S))
        _same_sdpa_outcome(q, k, RNG.random((2, L, S)) > 0.3)


def test_attn_mask_with_is_causal_needs_the_flash_kernel():
    q = RNG.standard_normal((1, 2, 4, 8)).astype(np.float32)
    m = np.tril(np.ones((4, 4), dtype=bool), 1)
    _same_sdpa_outcome(q, q, m)                                 # flash: runs
    _same_sdpa_outcome(q, q, m, dropout_p=0.5)                  # not flash's: raises
    with sdpa_kernel(SDPBackend.MATH), t_kernel(TB.MATH):
        _same_sdpa_outcome(q, q, m)                             # the math kernel: raises
    ember.backends.cuda.enable_flash_sdp(False)
    try:
        assert _sdpa_outcome(ember, q, q, m) == "RuntimeError"
    finally:
        ember.backends.cuda.enable_flash_sdp(True)


@pytest.mark.parametrize("variant", ["causal_lower_right", "causal_upper_left"])
@pytest.mark.parametrize("L,S", [(3, 5), (4, 4), (5, 3)])
def test_causal_bias_as_attn_mask(variant, L, S):
    import warnings

    import ember.nn.attention.bias as ebias
    import torch.nn.attention.bias as tbias
    q = RNG.standard_normal((2, 2, L, 8)).astype(np.float32)
    k = RNG.standard_normal((2, 2, S, 8)).astype(np.float32)
    outs = []
    for lib, bias in ((torch, tbias), (ember, ebias)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # lower-right with L > S warns
            b = getattr(bias, variant)(L, S)
        assert isinstance(b, lib.Tensor) and isinstance(b, bias.CausalBias)
        qt = lib.tensor(q, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(qt, lib.tensor(k), lib.tensor(k),
                                                             b)
        out.sum().backward()
        outs.append((b._materialize().numpy(), out.detach().numpy(), qt.grad.numpy()))
    for g, w in zip(outs[1], outs[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert int(ebias.CausalVariant.LOWER_RIGHT) == int(tbias.CausalVariant.LOWER_RIGHT)
    with pytest.raises(ValueError, match="should not be used with causal=True"):
        F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(k),
                                       ebias.causal_upper_left(L, S), is_causal=True)
