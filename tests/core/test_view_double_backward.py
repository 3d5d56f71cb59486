"""Double backward through writes into views (F.pad's constant padding, a slice
assignment, ConvTranspose's padding): as_strided's backward reads only where its input
lay, so the gradient's own in-place writes since are no version error (they were, for
every gradient penalty or Hessian through a padded convolution)."""
import numpy as np
import pytest
import torch

import ember


def _pad(m, x):
    return m.nn.functional.pad(x, (1, 2))


def _slice_assign(m, x):
    out = m.zeros(6, dtype=x.dtype)
    out[1:4] = x
    return out


def _inplace_on_a_view(m, x):
    y = x * 1
    y[1:].mul_(2)
    return y


@pytest.mark.parametrize("fn", [_pad, _slice_assign, _inplace_on_a_view])
def test_second_derivatives_match_torch(fn):
    x0 = np.array([1.0, 2.0, 3.0])
    out = []
    for m in (ember, torch):
        x = m.tensor(x0, requires_grad=True)
        g, = m.autograd.grad((fn(m, x) ** 3).sum(), x, create_graph=True)
        g.sum().backward()
        out.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1])
    x = ember.tensor(x0, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda v: fn(ember, v) ** 3, (x,))


def test_a_gradient_penalty_through_conv_transpose():
    g = np.random.default_rng(0)
    w, b, x0 = g.standard_normal((2, 3, 3, 3)), g.standard_normal(3), g.standard_normal(
        (1, 2, 5, 5))
    out = []
    for m in (ember, torch):
        conv = m.nn.ConvTranspose2d(2, 3, 3, padding=1).double()
        with m.no_grad():
            conv.weight.copy_(m.tensor(w))
            conv.bias.copy_(m.tensor(b))
        x = m.tensor(x0, requires_grad=True)
        gx, = m.autograd.grad((conv(x) ** 2).sum(), x, create_graph=True)
        (gx ** 2).sum().backward()
        out.append((x.grad.numpy(), conv.weight.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-10)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-10)


def test_as_strided_still_checks_its_values_when_they_matter():
    """A write into the input of a value-reading op is still refused."""
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize("name", ["mul_", "pow_", "view mul_", "addcmul_", "add_", "mul_ other"])
def test_an_inplace_op_reading_its_own_target(name):
    """b.mul_(b): the node saves its inputs before the write, so an input aliasing self is
    refused at backward, as PyTorch's (it gave old + new values: a wrong gradient); add_
    reads no input and works."""
    ops = {"mul_": lambda b: b.mul_(b), "pow_": lambda b: b.pow_(b),
           "view mul_": lambda b: b[:2].mul_(b[:2]), "addcmul_": lambda b: b.addcmul_(b, b),
           "add_": lambda b: b.add_(b), "mul_ other": lambda b: b.mul_(b.detach() * 0 + 2)}
    outcome = []
    for m in (ember, torch):
        a = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        b = a.clone()
        ops[name](b)
        try:
            b.sum().backward()
            outcome.append(a.grad.tolist())
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            outcome.append("refused")
    assert outcome[0] == outcome[1]
