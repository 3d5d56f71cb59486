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
