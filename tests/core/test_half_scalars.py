"""A float16/bfloat16 tensor with a Python number, as PyTorch computes it: times and over
the number in float32 (its opmath type) with the number unrounded, a number over the tensor
as the tensor's reciprocal times it, and the other ops with the number rounded to the
tensor's dtype.  Bit for bit against torch."""
import numpy as np
import pytest
import torch

import ember

FORMS = {
    "mul": lambda t, s: t * s, "rmul": lambda t, s: s * t, "div": lambda t, s: t / s,
    "rdiv": lambda t, s: s / t, "mul_": lambda t, s: t.clone().mul_(s),
    "div_": lambda t, s: t.clone().div_(s), "add": lambda t, s: t + s,
    "sub": lambda t, s: t - s, "rsub": lambda t, s: s - t,
    "pow": lambda t, s: t.abs() ** s, "gt": lambda t, s: t > s,
    "mul_int": lambda t, s: t * 3, "mul_method": lambda t, s: t.mul(s),
    "div_floor": lambda t, s: t.div(s, rounding_mode="trunc"),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_matches_torch_bit_for_bit(form, dtype):
    x = (np.random.default_rng(0).standard_normal(20000) * 3).astype(np.float32)
    t = torch.tensor(x).to(getattr(torch, dtype))
    e = ember.tensor(t.float().numpy()).to(getattr(ember, dtype))
    for s in (1.7, 0.1, 3.3e-3):
        got, want = FORMS[form](e, s), FORMS[form](t, s)
        assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(got.float().numpy() if got.is_floating_point()
                                      else got.numpy(), want.float().numpy()
                                      if want.is_floating_point() else want.numpy())


def test_out_and_gradient_keep_opmath():
    x = np.array([1.1, 2.7, 3.3, -0.7], np.float32)
    t = torch.tensor(x, dtype=torch.bfloat16, requires_grad=True)
    e = ember.tensor(t.detach().float().numpy()).to(ember.bfloat16).requires_grad_()
    (t * 1.7).sum().backward()
    (e * 1.7).sum().backward()
    np.testing.assert_array_equal(e.grad.float().numpy(), t.grad.float().numpy())
    o_t, o_e = torch.empty(4, dtype=torch.bfloat16), ember.empty(4, dtype=ember.bfloat16)
    torch.mul(t.detach(), 1.7, out=o_t)
    ember.mul(e.detach(), 1.7, out=o_e)
    np.testing.assert_array_equal(o_e.float().numpy(), o_t.float().numpy())
